/*
 * tp_sandbox_inflight.c - a seccomp filter installed while another
 * thread waits in a read: the read still gets its byte.
 * xsc-tp: run-opts=-t 1
 *
 * Under `xsc run` the read is in flight on the vcpu's ring, which a
 * sandbox change retires (io_uring requests pass no seccomp filter).  A
 * DEFER_TASKRUN ring posts the completions of what it took only inside
 * its owner's io_uring_enter: the reader waited for good until the
 * retired ring was entered for them (uring.c xsc__uring_retire).
 *  1. a reader blocks in read() of a pipe; 100 ms later main installs a
 *     filter that refuses mkdir and rmdir, then writes a byte: the reader
 *     must have it within 3 s;
 *  2. a second filter refuses io_uring_enter and io_uring_setup (xsc's
 *     own threads must not enter a ring again: a filter that killed would
 *     kill the process); a byte passed between two threads arrives, and
 *     the process then idles 300 ms using at most 150 ms of CPU (nothing
 *     of xsc's spins on the refused call; an SQPOLL poller's own polling
 *     not counted).
 * Prints what it saw; exit 0 on success, 1 on a failed check.
 */
#include "tp.h"

#include <stdatomic.h>

static int p[2];
static atomic_int got;

static void *reader(void *arg)
{
	char c;

	(void)arg;
	if (read(p[0], &c, 1) == 1)
		atomic_store(&got, 1);
	return NULL;
}

/* Writes a byte for a new reader after ms and joins it: whether it got it
 * within 3 s. */
static bool pass_byte(long ms, int (*sandbox)(void))
{
	pthread_t t;
	long t0;

	atomic_store(&got, 0);
	pthread_create(&t, NULL, reader, NULL);
	tp_nap(ms);	/* the read is in flight */
	if (sandbox && sandbox() != 0) {
		printf("seccomp: %s\n", strerror(errno));
		return false;
	}
	if (write(p[1], "x", 1) != 1)
		return false;
	t0 = tp_now_ms();
	while (!atomic_load(&got) && tp_now_ms() - t0 < 3000)
		tp_nap(5);
	if (!atomic_load(&got))
		return false;	/* the reader is left waiting */
	pthread_join(t, NULL);
	return true;
}

static int refuse_mkdir(void)
{
	return tp_seccomp_refuse(SYS_mkdir, SYS_rmdir);
}

static int refuse_uring(void)
{
	return tp_seccomp_refuse(SYS_io_uring_enter, SYS_io_uring_setup);
}

/* CPU time of this process's threads, in ms, but an io_uring SQPOLL
 * poller's ("iou-sqp-N", which polls for a while after its last work by
 * design: `xsc run -b sqpoll`). */
static long cpu_ms(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long ticks = 0;

	while (d && (e = readdir(d)) != NULL) {
		char path[300], buf[512], *s;
		unsigned long ut, st;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (s = strrchr(buf, ')')) &&
		    !strstr(buf, "(iou-sqp-") &&
		    sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			   &ut, &st) == 2)
			ticks += (long)(ut + st);
		fclose(f);
	}
	if (d)
		closedir(d);
	return ticks * 1000 / sysconf(_SC_CLK_TCK);
}

int main(void)
{
	long c0, used;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (pipe(p) != 0) {
		perror("pipe");
		return 1;
	}
	CHECK_SAY(pass_byte(100, refuse_mkdir),
		  "a filter installed while a thread waits in a read: the read gets its byte");
	CHECK_SAY(pass_byte(100, refuse_uring),
		  "a filter refusing io_uring_enter: the read gets its byte");
	CHECK_SAY(pass_byte(20, NULL), "after it, a byte passed between threads arrives");
	c0 = cpu_ms();
	tp_nap(300);
	used = cpu_ms() - c0;
	CHECK_SAY(used <= 150, "idle for 300 ms, the process used at most 150 ms of CPU");
	if (used > 150)
		printf("  it used %ld ms\n", used);
	return tp_failures ? 1 : 0;
}
