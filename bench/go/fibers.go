// The Go anchor of `xsc bench fibers` (bench/fibers.c, which builds and
// runs it when go is installed): resident memory per goroutine blocked
// in a read of one empty pipe, or idle on a channel, measured as the C
// side measures fibers and NPTL threads (VmRSS before and after).
//
//	fibers-go blocked|idle N     prints KiB per goroutine
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

func rssKiB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(s.Text())[1], 10, 64)
			return v
		}
	}
	return -1
}

var buf [1]byte

func main() {
	blocked := os.Args[1] == "blocked"
	n, _ := strconv.Atoi(os.Args[2])
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	idle := make(chan struct{})
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	runtime.GC()
	before := rssKiB()
	for i := 0; i < n; i++ {
		go func() {
			started.Done()
			if blocked {
				r.Read(buf[:])
			} else {
				<-idle
			}
			done.Done()
		}()
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond)
	after := rssKiB()
	fmt.Printf("%.3f\n", float64(after-before)/float64(n))
	w.Close()
	close(idle)
	done.Wait()
}
