/*
 * entries.c - system call entries of a process tree, counted by the
 * kernel (see entries.h).
 *
 * The tracefs way.  A private tracefs instance (instances/xsc-entries.
 * PID.N, so counts running at the same time never share state) records
 * raw_syscalls:sys_enter and signal:signal_deliver for the tasks in its
 * set_event_pid: every thread of the root and of every process below it,
 * and, through the event-fork option, every task they fork or clone
 * while the count runs (apache's worker child, a server's new threads).
 * Tasks outside the set pay the tracepoint's check only (measured: about
 * 10 ns a call), a recorded entry about 80 ns, so benchmarks count in a
 * run of their own, never in the runs whose time they report.  Histogram
 * triggers would count in the kernel, but many kernels are built without
 * them (CONFIG_HIST_TRIGGERS), so a thread reads the per-CPU ring
 * buffers (trace_pipe_raw, the binary page format of events/header_page)
 * every 10 ms and counts the events by system call number.  Nothing is
 * sampled: an event the kernel drops (a full buffer) makes the count fail
 * with the number lost.  A server under load keeps every core busy, and
 * on a shared machine so do others: the reader runs SCHED_FIFO when it
 * may, and each CPU's buffer holds 16 MiB (about 250,000 entries, most
 * of a second at full load).
 *
 * What counts as an entry: every sys_enter of the set's tasks, and every
 * SIGSYS delivered to them.  A call trapped by syscall user dispatch or
 * by a seccomp trap enters the kernel but is stopped before the
 * tracepoint; its rt_sigreturn is an entry of its own.  io_uring's
 * threads (iou-sqp, iou-wrk) never enter from user space: the work they
 * do for the program is kernel work, not a crossing, and they record
 * nothing.  Page faults and interrupts are not system calls and are not
 * counted.
 *
 * The strace way, where there is no tracefs: `strace -f -c -p` on the
 * root and every process below it, stopped by SIGINT; its summary is
 * parsed.  ptrace stops a call before seccomp does, so strace counts a
 * call seccomp traps as that call, and after syscall user dispatch (xsc
 * run's traps), so it misses those; it counts their rt_sigreturn.
 *
 * An instance left behind enables tracing of every call on the machine:
 * SIGINT, SIGTERM and SIGHUP remove the live ones before the default
 * action, and start() removes those of processes that are gone.
 */
#include "entries.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xsc.h>

#define MAXCPU 256
#define MAXTASKS 65536
#define NSLOT 8			/* live instances per process */

enum { TRACEFS, STRACE };

/* Where each field sits in a recorded event (from the format files) and
 * in a ring-buffer page (events/header_page). */
struct layout {
	int enter_type, deliver_type;	/* event ids (common_type) */
	int off_type, off_id, off_sig;	/* common_type, sys_enter.id,
					   signal_deliver.sig */
	int off_commit, off_data;	/* in a page */
	size_t page;			/* bytes of a sub-buffer */
};

struct bench_counter {
	int how;			/* TRACEFS or STRACE */
	int slot;			/* in live[] (TRACEFS) */
	char inst[256];			/* the instance directory */
	struct layout l;
	int ncpu, fd[MAXCPU];		/* per_cpu/cpuN/trace_pipe_raw */
	pthread_t reader;
	atomic_bool stop;		/* release by stop(), acquire by the reader */
	bool missed;			/* a page said events were lost */
	struct bench_entries n;		/* counted so far, by the reader */
	pid_t strace;			/* STRACE */
	char out[64];			/* strace's summary file */
};

/* ---- files ------------------------------------------------------------ */

static int put(const char *dir, const char *file, const char *s)
{
	char path[1024];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* The first len-1 bytes of dir/file, NUL-terminated; bytes read or -errno. */
static ssize_t get(const char *dir, const char *file, char *buf, size_t len)
{
	char path[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/* The offset of "field:TYPE NAME;" in a format file's text; -1 if absent. */
static int field_offset(const char *fmt, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s;", name);
	p = strstr(fmt, key);
	p = p ? strstr(p, "offset:") : NULL;
	return p ? atoi(p + 7) : -1;
}

/* ---- tracefs: where, and a clean-up that also runs on a signal --------- */

/* The tracefs mount point: mounted already, or mounted now on
 * /sys/kernel/tracing when we may (as libtracefs does; left mounted). */
static int find_tracefs(char *dir, size_t len, char *why, size_t wlen)
{
	char line[512], mnt[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", mnt, type) == 2 &&
		    !strcmp(type, "tracefs")) {
			fclose(f);
			snprintf(dir, len, "%s", mnt);
			return 0;
		}
	if (f)
		fclose(f);
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		snprintf(dir, len, "/sys/kernel/tracing");
		return 0;
	}
	snprintf(why, wlen, "no tracefs: not mounted, and mounting it failed: %s",
		 strerror(errno));
	return -ENOENT;
}

/* The live instances, for the signal handler.  A slot is claimed
 * (used), filled, then armed: the handler reads inst and c only after
 * it sees armed (acquire, pairing with the release in take_slot). */
static struct {
	atomic_bool used, armed;
	char inst[256];
	struct bench_counter *c;	/* its trace_pipe_raw descriptors */
} live[NSLOT];
static atomic_int nlive;
static struct sigaction old_int, old_term, old_hup;

/* Stops recording and removes the instance; async-signal-safe.  rmdir
 * fails (EBUSY) while a trace_pipe_raw of it is open: the caller closes
 * those, and a read still running in the reader ends within a moment. */
static void remove_instance(const char *inst)
{
	struct timespec ms = { 0, 1000 * 1000 };
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/tracing_on", inst);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, "0", 1) < 0) {
			/* rmdir below still removes it */
		}
		close(fd);
	}
	for (int i = 0; i < 100 && rmdir(inst) && errno == EBUSY; i++)
		nanosleep(&ms, NULL);
}

static void on_signal(int sig)
{
	for (int i = 0; i < NSLOT; i++) {
		if (!atomic_load_explicit(&live[i].armed, memory_order_acquire))
			continue;
		for (int k = 0; k < live[i].c->ncpu; k++)
			close(live[i].c->fd[k]);
		remove_instance(live[i].inst);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int take_slot(struct bench_counter *c)
{
	for (int i = 0; i < NSLOT; i++) {
		bool f = false;
		if (!atomic_compare_exchange_strong(&live[i].used, &f, true))
			continue;
		snprintf(live[i].inst, sizeof(live[i].inst), "%s", c->inst);
		live[i].c = c;
		atomic_store_explicit(&live[i].armed, true, memory_order_release);
		if (atomic_fetch_add(&nlive, 1) == 0) {
			struct sigaction sa = { .sa_handler = on_signal };
			sigaction(SIGINT, &sa, &old_int);
			sigaction(SIGTERM, &sa, &old_term);
			sigaction(SIGHUP, &sa, &old_hup);
		}
		return i;
	}
	return -1;
}

static void drop_slot(int i)
{
	if (i < 0)
		return;
	atomic_store_explicit(&live[i].armed, false, memory_order_relaxed);
	atomic_store(&live[i].used, false);
	if (atomic_fetch_sub(&nlive, 1) == 1) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}
}

/* Removes instances left by processes that are gone (a SIGKILL). */
static void sweep(const char *tracefs)
{
	char dir[300], inst[600];
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/instances", tracefs);
	if (!(dp = opendir(dir)))
		return;
	while ((d = readdir(dp)) != NULL) {
		int pid;
		if (sscanf(d->d_name, "xsc-entries.%d.", &pid) != 1 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(inst, sizeof(inst), "%s/%s", dir, d->d_name);
		remove_instance(inst);
	}
	closedir(dp);
}

/* ---- tracefs: the set of tasks ----------------------------------------- */

struct tasks {
	int n;
	pid_t t[MAXTASKS];
};

static bool has(const struct tasks *s, pid_t t)
{
	for (int i = 0; i < s->n; i++)
		if (s->t[i] == t)
			return true;
	return false;
}

/* io_uring's threads are listed among the process's tasks; they never
 * enter from user space, and are left out to say so. */
static bool io_thread(pid_t pid, pid_t tid)
{
	char path[96], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if ((f = fopen(path, "r"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
	}
	return !strncmp(comm, "iou-", 4);
}

/* A walk over a process tree: proc is called on each process (< 0: not
 * this one, nor what is below it), task on each of its threads; either
 * may be NULL.  What they return adds up to walk_tree's result. */
struct walk {
	int (*proc)(struct walk *w, pid_t pid);
	int (*task)(struct walk *w, pid_t pid, pid_t tid);
};

/* Visits pid and the processes below it: the children of each of its
 * threads (/proc/PID/task/TID/children), 16 levels deep at most. */
static int walk_tree(struct walk *w, pid_t pid, int depth)
{
	char path[96], list[8192];
	int sum = 0;
	struct dirent *d;
	DIR *dp;

	if (depth > 16 || (w->proc && (sum = w->proc(w, pid)) < 0))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dp = opendir(path)))
		return sum;
	while ((d = readdir(dp)) != NULL) {
		pid_t t = (pid_t)atoi(d->d_name);
		FILE *f;
		if (t <= 0)
			continue;
		if (w->task)
			sum += w->task(w, pid, t);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)t);
		if (!(f = fopen(path, "r")))
			continue;
		size_t n = fread(list, 1, sizeof(list) - 1, f);
		fclose(f);
		list[n] = 0;
		for (char *q, *p = strtok_r(list, " \n", &q); p; p = strtok_r(NULL, " \n", &q))
			sum += walk_tree(w, (pid_t)atoi(p), depth + 1);
	}
	closedir(dp);
	return sum;
}

struct add_walk {
	struct walk w;		/* first: the walk's callbacks get this */
	struct tasks *s;
};

static int add_task(struct walk *w, pid_t pid, pid_t tid)
{
	struct add_walk *a = (struct add_walk *)w;

	if (has(a->s, tid) || a->s->n >= MAXTASKS || io_thread(pid, tid))
		return 0;
	a->s->t[a->s->n++] = tid;
	return 1;
}

/* Adds the threads of pid and of the processes below it that are not in
 * s yet to s; how many it added. */
static int add_tree(struct tasks *s, pid_t pid)
{
	struct add_walk a = { { NULL, add_task }, s };

	return walk_tree(&a.w, pid, 0);
}

/* Writes s->t[from..s->n) to set_event_pid in one write: the kernel
 * parses a list, and each write waits for the tracepoints to
 * synchronize (tens of milliseconds on a loaded host: one write per
 * thread took 40 s for a process of 1,000 threads).  0 or -errno. */
static int put_tasks(const char *inst, const struct tasks *s, int from)
{
	size_t len = (size_t)(s->n - from) * 12 + 1, k = 0;
	char *list = malloc(len);
	int r;

	if (!list)
		return -ENOMEM;
	list[0] = 0;
	for (int i = from; i < s->n; i++)
		k += (size_t)snprintf(list + k, len - k, "%d ", (int)s->t[i]);
	r = put(inst, "set_event_pid", list);
	free(list);
	return r;
}

/* ---- tracefs: reading the ring buffers ---------------------------------- */

static int read_layout(const char *tracefs, struct layout *l, char *why, size_t wlen)
{
	char fmt[4096], path[512];

	snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter", tracefs);
	ssize_t n = get(path, "format", fmt, sizeof(fmt));
	if (n == -EACCES || n == -EPERM) {
		snprintf(why, wlen, "tracefs at %s is not open to this user (not root)",
			 tracefs);
		return (int)n;
	}
	if (n <= 0) {
		snprintf(why, wlen, "no raw_syscalls:sys_enter event in %s", tracefs);
		return -ENOENT;
	}
	l->enter_type = strstr(fmt, "ID:") ? atoi(strstr(fmt, "ID:") + 3) : -1;
	l->off_type = field_offset(fmt, "common_type");
	l->off_id = field_offset(fmt, "id");
	snprintf(path, sizeof(path), "%s/events/signal/signal_deliver", tracefs);
	if (get(path, "format", fmt, sizeof(fmt)) > 0) {
		l->deliver_type = strstr(fmt, "ID:") ? atoi(strstr(fmt, "ID:") + 3) : -1;
		l->off_sig = field_offset(fmt, "sig");
	} else {
		l->deliver_type = l->off_sig = -1;	/* traps are then not counted */
	}
	if (get(tracefs, "events/header_page", fmt, sizeof(fmt)) <= 0) {
		snprintf(why, wlen, "no events/header_page in %s", tracefs);
		return -ENOENT;
	}
	l->off_commit = field_offset(fmt, "commit");
	l->off_data = field_offset(fmt, "data");
	l->page = (size_t)sysconf(_SC_PAGESIZE);
	if (get(tracefs, "buffer_subbuf_size_kb", path, sizeof(path)) > 0 && atoi(path) > 0)
		l->page = (size_t)atoi(path) * 1024;
	if (l->enter_type < 0 || l->off_type != 0 || l->off_id < 0 || l->off_commit < 0 ||
	    l->off_data < 0) {
		snprintf(why, wlen, "unexpected tracefs event layout in %s", tracefs);
		return -EINVAL;
	}
	return 0;
}

static void count_event(struct bench_counter *c, const unsigned char *d, size_t len)
{
	const struct layout *l = &c->l;
	uint16_t type;

	if (len < 2)
		return;
	memcpy(&type, d, 2);
	if (type == l->enter_type && len >= (size_t)l->off_id + 8) {
		int64_t nr;
		memcpy(&nr, d + l->off_id, 8);
		if (nr >= 0 && nr < BENCH_NSYS)
			c->n.nr[nr]++;
		else
			c->n.other++;
	} else if (type == l->deliver_type && len >= (size_t)l->off_sig + 4) {
		int32_t sig;
		memcpy(&sig, d + l->off_sig, 4);
		c->n.traps += sig == SIGSYS;
	}
}

/* Counts one page of the ring buffer and returns its bytes of events.
 * The kernel's ring_buffer_event format: a 32-bit header of type_len:5,
 * time_delta:27; type_len 1..28 is the data length in words, 0 a length
 * word before the data, 29 padding (the end of the page when time_delta
 * is 0), 30 and 31 a time stamp. */
static size_t count_page(struct bench_counter *c, const unsigned char *pg, size_t len)
{
	uint64_t commit;
	const unsigned char *p = pg + c->l.off_data, *end;

	if (len < (size_t)c->l.off_data)
		return 0;
	memcpy(&commit, pg + c->l.off_commit, 8);
	c->missed |= (commit >> 31) & 1;	/* RB_MISSED_EVENTS */
	end = p + (commit & ((1u << 30) - 1));
	if (end > pg + len)
		end = pg + len;
	len = (size_t)(end - p);
	while (p + 4 <= end) {
		uint32_t h, a0 = 0;
		unsigned tl;
		memcpy(&h, p, 4);
		tl = h & 31;
		if (tl == 0 || tl == 29) {
			if (p + 8 > end)
				break;
			memcpy(&a0, p + 4, 4);
		}
		if (tl == 29 && !(h >> 5))
			break;
		if (tl == 29 || tl == 0) {	/* both: a0 bytes after the header */
			if (tl == 0 && a0 >= 4 && p + 4 + a0 <= end)
				count_event(c, p + 8, a0 - 4);
			if (a0 == 0)
				break;
			p += 4 + a0;
		} else if (tl >= 30) {
			p += 8;
		} else {
			if (p + 4 + tl * 4 <= end)
				count_event(c, p + 4, tl * 4);
			p += 4 + tl * 4;
		}
	}
	return len;
}

/* Reads the pages the buffers hold now; all: to the last event.  Else a
 * CPU's turn ends at a page less than half full: a read of the page the
 * kernel is writing copies out what is there, so under a steady load it
 * would never come back empty, and the reader (SCHED_FIFO) would starve
 * the load on its core. */
static void drain(struct bench_counter *c, unsigned char *pg, bool all)
{
	size_t half = (c->l.page - (size_t)c->l.off_data) / 2;

	for (int i = 0; i < c->ncpu; i++) {
		ssize_t n;
		while ((n = read(c->fd[i], pg, c->l.page)) > 0)
			if (count_page(c, pg, (size_t)n) < half && !all)
				break;
	}
}

static void *reader(void *arg)
{
	struct bench_counter *c = arg;
	unsigned char *pg = malloc(c->l.page);
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	if (!pg) {
		c->missed = true;
		return NULL;
	}
	/* never starved by the load it counts (it sleeps 10 ms a turn);
	 * without the privilege, the buffers' size has to do */
	pthread_setschedparam(pthread_self(), SCHED_FIFO,
			      &(struct sched_param){ .sched_priority = 1 });
	while (!atomic_load_explicit(&c->stop, memory_order_acquire)) {
		drain(c, pg, false);
		nanosleep(&ts, NULL);
	}
	drain(c, pg, true);	/* what was recorded before the events were disabled */
	free(pg);
	return NULL;
}

static int open_cpus(struct bench_counter *c)
{
	char path[400];

	c->ncpu = 0;
	for (int i = 0; i < MAXCPU; i++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", c->inst, i);
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		c->fd[c->ncpu++] = fd;
	}
	return c->ncpu ? 0 : -ENOENT;
}

/* Lost events: stats' "overrun" and "dropped events" of every CPU. */
static uint64_t lost(const struct bench_counter *c)
{
	char file[64], buf[1024], *p;
	uint64_t sum = 0;

	for (int i = 0; i < c->ncpu; i++) {
		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", i);
		if (get(c->inst, file, buf, sizeof(buf)) <= 0)
			continue;
		if ((p = strstr(buf, "\noverrun:")))
			sum += strtoull(p + 9, NULL, 10);
		if ((p = strstr(buf, "dropped events:")))
			sum += strtoull(p + 15, NULL, 10);
	}
	return sum;
}

static void close_cpus(struct bench_counter *c)
{
	for (int i = 0; i < c->ncpu; i++)
		close(c->fd[i]);
	c->ncpu = 0;
}

/* ---- tracefs: start and stop -------------------------------------------- */

static int enable(struct bench_counter *c, bool on)
{
	int r = put(c->inst, "events/raw_syscalls/sys_enter/enable", on ? "1" : "0");
	char filter[32];

	if (c->l.deliver_type >= 0) {
		snprintf(filter, sizeof(filter), "sig == %d", SIGSYS);
		if (on)
			put(c->inst, "events/signal/signal_deliver/filter", filter);
		put(c->inst, "events/signal/signal_deliver/enable", on ? "1" : "0");
	}
	return r;
}

static int start_tracefs(struct bench_counter *c, pid_t pid, char *why, size_t wlen)
{
	static atomic_int seq;
	char tracefs[256];
	struct tasks *set;
	int r;

	if ((r = find_tracefs(tracefs, sizeof(tracefs), why, wlen)) ||
	    (r = read_layout(tracefs, &c->l, why, wlen)))
		return r;
	sweep(tracefs);
	snprintf(c->inst, sizeof(c->inst), "%.200s/instances/xsc-entries.%d.%d", tracefs,
		 (int)getpid(), atomic_fetch_add(&seq, 1));
	if (mkdir(c->inst, 0700)) {
		r = -errno;
		snprintf(why, wlen, "cannot make a tracefs instance: %s%s", strerror(-r),
			 r == -EACCES || r == -EPERM ? " (not root)" : "");
		return r;
	}
	if ((c->slot = take_slot(c)) < 0) {
		snprintf(why, wlen, "more than %d counts at once", NSLOT);
		r = -EBUSY;
		goto out_rmdir;
	}
	/* non-overwrite: a full buffer drops new events, counted in stats */
	if ((r = put(c->inst, "options/overwrite", "0")) ||
	    (r = put(c->inst, "buffer_size_kb", "16384")) ||
	    (r = put(c->inst, "options/event-fork", "1"))) {
		snprintf(why, wlen, "cannot set up the tracefs instance: %s", strerror(-r));
		goto out_slot;
	}
	if (!(set = malloc(sizeof(*set)))) {
		r = -ENOMEM;
		snprintf(why, wlen, "out of memory");
		goto out_slot;
	}
	/* Repeated until a pass finds nothing new: a task that forked
	 * before its own pid was written is found by the next pass; after
	 * it, event-fork adds its children. */
	set->n = 0;
	r = 0;
	for (int pass = 0, from = 0; pass < 8 && !r && add_tree(set, pid); pass++) {
		r = put_tasks(c->inst, set, from);
		from = set->n;
	}
	if (!r && !set->n)
		r = -ESRCH;
	free(set);
	if (r) {
		if (r == -ESRCH)
			snprintf(why, wlen, "process %d not found", (int)pid);
		else
			snprintf(why, wlen, "cannot write set_event_pid: %s", strerror(-r));
		goto out_slot;
	}
	if ((r = open_cpus(c))) {
		snprintf(why, wlen, "cannot open trace_pipe_raw: %s", strerror(-r));
		goto out_slot;
	}
	if ((r = enable(c, true))) {
		snprintf(why, wlen, "cannot enable raw_syscalls:sys_enter: %s", strerror(-r));
		goto out_close;
	}
	if ((r = -pthread_create(&c->reader, NULL, reader, c))) {
		snprintf(why, wlen, "pthread_create: %s", strerror(-r));
		goto out_close;
	}
	c->n.method = "raw_syscalls:sys_enter";
	return 0;
out_close:
	close_cpus(c);
out_slot:
	drop_slot(c->slot);
out_rmdir:
	remove_instance(c->inst);
	return r;
}

static int stop_tracefs(struct bench_counter *c, struct bench_entries *e)
{
	uint64_t n;

	enable(c, false);
	atomic_store_explicit(&c->stop, true, memory_order_release);
	pthread_join(c->reader, NULL);
	n = lost(c);
	close_cpus(c);
	remove_instance(c->inst);
	drop_slot(c->slot);
	*e = c->n;
	if (n || c->missed) {
		e->ok = false;
		snprintf(e->why, sizeof(e->why), "the kernel dropped %llu events "
			 "(its trace buffer was full)", (unsigned long long)n);
		return -ENOBUFS;
	}
	return 0;
}

/* ---- strace ----------------------------------------------------------- */

struct procs_walk {
	struct walk w;		/* first: the walk's callbacks get this */
	pid_t *out;
	int max, n;
};

static int add_proc(struct walk *w, pid_t pid)
{
	struct procs_walk *p = (struct procs_walk *)w;

	if (p->n >= p->max)
		return -1;
	p->out[p->n++] = pid;
	return 1;
}

/* The processes of the tree (thread group leaders), for -p each: at most
 * max of them into out; how many. */
static int tree_procs(pid_t pid, pid_t *out, int max)
{
	struct procs_walk p = { { add_proc, NULL }, out, max, 0 };

	return walk_tree(&p.w, pid, 0);
}

/* Who traces pid (TracerPid in its status); -1 if it is gone. */
static pid_t tracer_of(pid_t pid)
{
	char path[64], line[256];
	pid_t t = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			t = (pid_t)atoi(line + 10);
	fclose(f);
	return t;
}

static int start_strace(struct bench_counter *c, pid_t pid, char *why, size_t wlen)
{
	enum { MAXP = 64 };
	pid_t procs[MAXP];
	char *argv[8 + 2 * MAXP], nums[MAXP][16];
	int np = tree_procs(pid, procs, MAXP), a = 0, fd;

	if (system("command -v strace >/dev/null 2>&1") != 0) {
		snprintf(why, wlen, "strace is not installed");
		return -ENOENT;
	}
	snprintf(c->out, sizeof(c->out), "/tmp/xsc-entries.XXXXXX");
	if ((fd = mkstemp(c->out)) < 0) {
		snprintf(why, wlen, "mkstemp: %s", strerror(errno));
		return -errno;
	}
	close(fd);
	argv[a++] = "strace";
	argv[a++] = "-f";
	argv[a++] = "-c";
	argv[a++] = "-q";
	argv[a++] = "-o";
	argv[a++] = c->out;
	for (int i = 0; i < np; i++) {
		snprintf(nums[i], sizeof(nums[i]), "%d", (int)procs[i]);
		argv[a++] = "-p";
		argv[a++] = nums[i];
	}
	argv[a] = NULL;
	c->strace = fork();
	if (c->strace == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	/* attached when the root says strace is its tracer: up to 5 s */
	for (int i = 0; c->strace > 0 && i < 500; i++) {
		if (tracer_of(pid) == c->strace) {
			c->n.method = "strace -f -c";
			return 0;
		}
		if (waitpid(c->strace, NULL, WNOHANG) == c->strace)
			break;
		usleep(10000);
	}
	snprintf(why, wlen, "strace did not attach to %d", (int)pid);
	if (c->strace > 0) {
		kill(c->strace, SIGKILL);
		waitpid(c->strace, NULL, 0);
	}
	unlink(c->out);
	return -ESRCH;
}

/* The number of the call named name; -1 if none. */
static int number_of(const char *name)
{
	for (int nr = 0; nr < BENCH_NSYS; nr++)
		if (!strcmp(xsc_syscall_name(nr), name))
			return nr;
	return -1;
}

/* strace -c's table: "% time seconds usecs/call calls [errors] syscall". */
static int stop_strace(struct bench_counter *c, struct bench_entries *e)
{
	char line[256], tok[6][64];
	int st = 0, rows = 0;
	FILE *f;

	kill(c->strace, SIGINT);
	waitpid(c->strace, &st, 0);
	*e = c->n;
	f = fopen(c->out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		int k = sscanf(line, "%63s %63s %63s %63s %63s %63s", tok[0], tok[1], tok[2],
			       tok[3], tok[4], tok[5]);
		if (k < 5 || !strchr("0123456789.", tok[0][0]) || !strcmp(tok[k - 1], "total"))
			continue;
		int nr = number_of(tok[k - 1]);
		uint64_t calls = strtoull(tok[3], NULL, 10);
		if (nr >= 0)
			e->nr[nr] += calls;
		else
			e->other += calls;
		rows++;
	}
	if (f)
		fclose(f);
	unlink(c->out);
	/* strace writes no table when it saw no call: after it ended on our
	 * SIGINT (re-raised, or exit 130) that is a count of zero */
	bool interrupted = (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT) ||
			   (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 130));
	if (!f || (!rows && !interrupted)) {
		e->ok = false;
		snprintf(e->why, sizeof(e->why), "strace gave no summary");
		return -EIO;
	}
	return 0;
}

/* ---- the interface -------------------------------------------------------- */

int bench_counter_start(struct bench_counter **cp, pid_t pid, struct bench_entries *e)
{
	const char *want = getenv("XSC_BENCH_ENTRIES");
	char why1[120] = "", why2[72] = "";	/* both fit in e->why */
	struct bench_counter *c;
	int r = -ENOENT;

	*cp = NULL;
	memset(e, 0, sizeof(*e));
	if (want && !strcmp(want, "off")) {
		snprintf(e->why, sizeof(e->why), "XSC_BENCH_ENTRIES=off");
		return -ECANCELED;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		snprintf(e->why, sizeof(e->why), "out of memory");
		return -ENOMEM;
	}
	c->slot = -1;
	atomic_init(&c->stop, false);
	if (!want || !*want || !strcmp(want, "tracefs")) {
		c->how = TRACEFS;
		r = start_tracefs(c, pid, why1, sizeof(why1));
	}
	if (r && (!want || !*want || !strcmp(want, "strace"))) {
		c->how = STRACE;
		r = start_strace(c, pid, why2, sizeof(why2));
	}
	if (r) {
		snprintf(e->why, sizeof(e->why), "%s%s%s", why1, *why1 && *why2 ? "; " : "",
			 *why1 || *why2 ? why2 : "XSC_BENCH_ENTRIES is not tracefs, strace or off");
		free(c);
		return r;
	}
	*cp = c;
	return 0;
}

int bench_counter_stop(struct bench_counter *c, struct bench_entries *e)
{
	int r;

	if (!c)
		return -EINVAL;
	r = c->how == TRACEFS ? stop_tracefs(c, e) : stop_strace(c, e);
	free(c);
	if (r)
		return r;
	e->ok = true;
	e->total = e->traps + e->other;
	for (int i = 0; i < BENCH_NSYS; i++)
		e->total += e->nr[i];
	return 0;
}

void bench_entries_top(const struct bench_entries *e, double ops, int n, char *buf,
		       size_t len)
{
	bool done[BENCH_NSYS + 2] = { false };
	size_t k = 0;

	buf[0] = 0;
	for (int i = 0; i < n && k < len; i++) {
		uint64_t best = 0;
		int at = -1;
		for (int j = 0; j < BENCH_NSYS + 2; j++) {
			uint64_t v = j < BENCH_NSYS ? e->nr[j] : j == BENCH_NSYS ? e->traps : e->other;
			if (!done[j] && v > best)
				best = v, at = j;
		}
		if (at < 0)
			break;
		done[at] = true;
		k += (size_t)snprintf(buf + k, len - k, "%s%s %.2f", i ? ", " : "",
				      at < BENCH_NSYS ? xsc_syscall_name(at) :
				      at == BENCH_NSYS ? "trapped" : "other",
				      (double)best / ops);
	}
}

void bench_per_op(const struct bench_entries *e, double ops, struct bench_per_op *p)
{
	if (!e->ok || ops <= 0) {
		bench_per_op_na(e->ok ? "no operation completed" : e->why, p);
		return;
	}
	p->ok = true;
	p->entries = (double)e->total / ops;
	bench_entries_top(e, ops, 5, p->text, sizeof(p->text));
}

void bench_per_op_na(const char *why, struct bench_per_op *p)
{
	p->ok = false;
	p->entries = 0;
	snprintf(p->text, sizeof(p->text), "n/a (%.190s)", why);
}

const char *bench_per_op_num(const struct bench_per_op *p, int width, char *buf,
			     size_t len)
{
	if (p->ok)
		snprintf(buf, len, "%*.2f", width, p->entries);
	else
		snprintf(buf, len, "%*s", width, "n/a");
	return buf;
}

void bench_per_op_csv_num(FILE *f, const struct bench_per_op *p)
{
	if (p->ok)
		fprintf(f, ",%.2f", p->entries);
	else
		fputc(',', f);
}

void bench_per_op_csv_text(FILE *f, const struct bench_per_op *p)
{
	fputc(',', f);
	for (const char *s = p->text; *s; s++)
		fputc(*s == ',' ? ';' : *s, f);
}
