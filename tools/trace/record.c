/*
 * record.c - run a command under ptrace and record every system call of it,
 * its threads and its children: (tid, nr, args, result, entry time,
 * duration), appended to the trace when the call returns.  Why this
 * mechanism and what it costs: docs/trace.md, "Overhead".
 *
 * Rules:
 *  - the child does PTRACE_TRACEME, stops itself and execs; the tracer sets
 *    TRACESYSGOOD | TRACEFORK | TRACEVFORK | TRACECLONE | TRACEEXEC |
 *    EXITKILL and resumes with PTRACE_SYSCALL: two stops a call, each read
 *    with one PTRACE_GET_SYSCALL_INFO (PTRACE_GETREGS before 5.3);
 *  - nothing is installed in the program by default; `--seccomp` (a
 *    SECCOMP_RET_TRACE filter, which needs no_new_privs without
 *    CAP_SYS_ADMIN) is kept for comparison: a profiler needs every call's
 *    result, so it saves no stop;
 *  - the tracer polls waitpid(WNOHANG) for up to SPIN_US (50 us) before it
 *    blocks, since waking an idle vCPU costs tens of microseconds
 *    (XSC_TRACE_SPIN_US=0 turns it off); `--pin` runs tracer and program
 *    on one CPU, not the default because the program then sees one CPU;
 *  - SIGINT, SIGTERM or SIGHUP detaches: each tracee gets a SIGSTOP by
 *    tkill and is detached at that stop with the signal suppressed; calls
 *    in flight are kept without a result.
 */
#include "tracei.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_NS 250000000ull
#define SPIN_US 50

struct thr {
	int tid;
	int insys;		/* entry seen, exit not yet */
	int fresh;		/* auto-attached: its first SIGSTOP is ours */
	int stopsent;		/* detaching: we sent it a SIGSTOP */
	struct xt_event e;	/* the call in flight */
};

struct rec {
	struct xt_trace *t;
	const struct xt_recopt *o;
	struct thr *thr;
	int n, cap;
	int root;
	int no_info;		/* PTRACE_GET_SYSCALL_INFO unsupported */
	int progress;
	long spin_us;
	uint64_t t0, last_progress;
	unsigned long stops;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- thread table: small, so a linear scan with a one-entry cache --- */

static struct thr *thr_find(struct rec *r, int tid)
{
	static int hint;

	if (hint < r->n && r->thr[hint].tid == tid)
		return &r->thr[hint];
	for (int i = 0; i < r->n; i++) {
		if (r->thr[i].tid == tid) {
			hint = i;
			return &r->thr[i];
		}
	}
	return NULL;
}

static struct thr *thr_add(struct rec *r, int tid, int fresh)
{
	struct thr *th = thr_find(r, tid);

	if (th)
		return th;
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 16;
		th = realloc(r->thr, cap * sizeof(*th));
		if (!th)
			return NULL;
		r->thr = th;
		r->cap = cap;
	}
	th = &r->thr[r->n++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->fresh = fresh;
	return th;
}

static void thr_del(struct rec *r, struct thr *th)
{
	*th = r->thr[--r->n];
}

/* ---- reading the tracee --------------------------------------------- */

static ssize_t peek(int tid, unsigned long addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, rm = { (void *)addr, len };

	return process_vm_readv(tid, &l, 1, &rm, 1, 0);
}

/* A NUL-terminated string, read up to page boundaries so one unmapped
 * page after a short string does not fail the whole read. */
static uint32_t peek_str(struct rec *r, int tid, unsigned long addr)
{
	char buf[512];
	size_t got = 0;

	while (addr && got < sizeof(buf) - 1) {
		size_t room = 4096 - ((addr + got) & 4095);
		size_t want = sizeof(buf) - 1 - got;
		ssize_t n = peek(tid, addr + got, buf + got,
				 want < room ? want : room);
		if (n <= 0)
			break;
		if (memchr(buf + got, '\0', n))
			return xt_trace_str(r->t, buf, strlen(buf));
		got += n;
	}
	return got ? xt_trace_str(r->t, buf, got) : 0;
}

static void rec_entry(struct rec *r, struct thr *th, int nr, const long *args)
{
	struct xt_event *e = &th->e;
	const struct xt_sysinfo *si = xt_sys_info(nr);

	memset(e, 0, sizeof(*e));
	e->tid = th->tid;
	e->nr = nr;
	e->aux[0] = e->aux[1] = -1;
	memcpy(e->args, args, sizeof(e->args));
	for (int i = 0; i < XT_NARGS; i++) {
		if (si->sig[i] == XT_A_STR)
			e->text[i] = peek_str(r, th->tid, (unsigned long)args[i]);
		else if (si->sig[i] == XT_A_FD)
			e->args[i] = (int)args[i];	/* AT_FDCWD, -1 */
	}
	if (nr == SYS_clone3) {
		uint64_t flags = 0;
		if (peek(th->tid, (unsigned long)args[0], &flags, 8) == 8)
			e->aux[0] = (long)flags;
	}
	th->insys = 1;
	e->ts_ns = now_ns() - r->t0;
}

static int rec_exit(struct rec *r, struct thr *th, long ret, unsigned flags)
{
	struct xt_event *e;
	uint64_t t = now_ns() - r->t0;

	if (!th->insys)
		return 0;	/* exit without entry: fork child, attach */
	th->insys = 0;
	th->e.ret = ret;
	th->e.flags = flags;
	th->e.dur_ns = t - th->e.ts_ns;
	if (xt_sys_info(th->e.nr)->pair && ret == 0 && !flags) {
		int fds[2];
		int a = xt_sys_info(th->e.nr)->pair - 1;
		if (peek(th->tid, (unsigned long)th->e.args[a], fds, 8) == 8) {
			th->e.aux[0] = fds[0];
			th->e.aux[1] = fds[1];
		}
	}
	e = xt_trace_push(r->t);
	if (!e)
		return -ENOMEM;
	*e = th->e;
	return 0;
}

/* Syscall stop: entry or exit, told apart by the kernel when it can. */
static int on_sysstop(struct rec *r, struct thr *th)
{
	struct __ptrace_syscall_info si;
	struct user_regs_struct regs;

	if (!r->no_info) {
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, sizeof(si), &si);
		if (n > 0) {
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY ||
			    si.op == PTRACE_SYSCALL_INFO_SECCOMP) {
				long a[XT_NARGS];
				for (int i = 0; i < XT_NARGS; i++)
					a[i] = (long)si.entry.args[i];
				rec_entry(r, th, (int)si.entry.nr, a);
				return 0;
			}
			if (si.op == PTRACE_SYSCALL_INFO_EXIT)
				return rec_exit(r, th, si.exit.rval, 0);
			return 0;
		}
		if (errno == ESRCH)
			return 0;
		r->no_info = 1;
	}
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs) < 0)
		return 0;
	if (!th->insys) {
		long a[XT_NARGS] = { regs.rdi, regs.rsi, regs.rdx,
				     regs.r10, regs.r8, regs.r9 };
		rec_entry(r, th, (int)regs.orig_rax, a);
		return 0;
	}
	return rec_exit(r, th, regs.rax, 0);
}

/* ---- resuming --------------------------------------------------------- */

static void resume(struct rec *r, struct thr *th, int sig)
{
	/* In seccomp mode the filter brings us to each entry; we only ask
	 * for the exit stop of a call in flight. */
	int req = r->o->seccomp && !th->insys ? PTRACE_CONT : PTRACE_SYSCALL;

	ptrace(req, th->tid, 0, (long)sig);	/* ESRCH: exit comes next */
}

static void progress(struct rec *r, int last)
{
	uint64_t t = now_ns();

	if (!r->progress)
		return;
	if (last) {
		if (r->last_progress)
			fputs("\r\033[K", stderr);
		return;
	}
	if (t - r->last_progress < PROGRESS_NS)
		return;
	if (r->last_progress == 0 && t - r->t0 < PROGRESS_NS)
		return;
	r->last_progress = t;
	fprintf(stderr, "\rxsc trace: recording: %zu calls, %d threads, %.1f s ",
		r->t->n, r->n, (double)(t - r->t0) / 1e9);
	fflush(stderr);
}

static void on_gone(struct rec *r, struct thr *th, int st)
{
	if (th->insys)
		rec_exit(r, th, 0, XT_EV_NORET);
	if (th->tid == r->root) {
		r->t->exited = 1;
		if (WIFEXITED(st))
			r->t->status = WEXITSTATUS(st);
		else
			r->t->signal = WTERMSIG(st);
	}
	thr_del(r, th);
}

static void on_event(struct rec *r, struct thr *th, int ev)
{
	unsigned long msg = 0;

	ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
	if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
	    ev == PTRACE_EVENT_CLONE) {
		thr_add(r, (int)msg, 1);
		th = thr_find(r, th->tid);	/* the table may have moved */
	} else if (ev == PTRACE_EVENT_EXEC && (int)msg != th->tid) {
		/* A non-leader thread exec'd and took the leader's tid; the
		 * old leader is gone without an exit report. */
		struct thr *old = thr_find(r, (int)msg);
		if (old) {
			int tid = th->tid;
			th->e = old->e;
			th->insys = old->insys;
			th->e.tid = tid;
			thr_del(r, old);
			th = thr_find(r, tid);
		}
	}
	if (th)
		resume(r, th, 0);
}

static void on_signal_stop(struct rec *r, struct thr *th, int sig)
{
	siginfo_t si;

	if (th->fresh && sig == SIGSTOP) {
		th->fresh = 0;		/* the auto-attach stop */
		resume(r, th, 0);
		return;
	}
	if (ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) < 0)
		sig = 0;		/* group-stop: just continue */
	resume(r, th, sig);
}

static int on_wait(struct rec *r, int tid, int st)
{
	struct thr *th = thr_find(r, tid);
	int sig;

	if (!th && !(th = thr_add(r, tid, 1)))
		return -ENOMEM;
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		on_gone(r, th, st);
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	sig = WSTOPSIG(st);
	if (sig == (SIGTRAP | 0x80)) {
		int err = on_sysstop(r, th);
		resume(r, th, 0);
		return err;
	}
	if (sig == SIGTRAP && (st >> 16) == PTRACE_EVENT_SECCOMP) {
		int err = on_sysstop(r, th);
		resume(r, th, 0);
		return err;
	}
	if (sig == SIGTRAP && (st >> 16)) {
		on_event(r, th, st >> 16);
		return 0;
	}
	on_signal_stop(r, th, sig);
	return 0;
}

/* ---- detaching on Ctrl-C --------------------------------------------- */

static void detach_one(struct rec *r, struct thr *th)
{
	if (th->insys)
		rec_exit(r, th, 0, XT_EV_NORET);
	ptrace(PTRACE_DETACH, th->tid, 0, 0);
	thr_del(r, th);
}

static void detach_all(struct rec *r)
{
	int st, tid;

	for (int i = 0; i < r->n; i++) {
		r->thr[i].stopsent = 1;
		syscall(SYS_tkill, r->thr[i].tid, SIGSTOP);
	}
	while (r->n > 0 && (tid = waitpid(-1, &st, __WALL)) > 0) {
		struct thr *th = thr_find(r, tid);
		siginfo_t si;
		int sig;
		if (!th || WIFEXITED(st) || WIFSIGNALED(st)) {
			if (th)
				on_gone(r, th, st);
			continue;
		}
		sig = WSTOPSIG(st);
		if (sig == SIGSTOP && (th->fresh || (th->stopsent &&
		    ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 &&
		    si.si_pid == getpid()))) {
			detach_one(r, th);
			continue;
		}
		/* Another stop first: let it run, without syscall stops,
		 * until our SIGSTOP arrives. */
		if (sig == (SIGTRAP | 0x80) || (sig == SIGTRAP && (st >> 16)) ||
		    ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
			sig = 0;
		ptrace(PTRACE_CONT, tid, 0, (long)sig);
	}
	r->t->detached = 1;
}

/* ---- starting the child ----------------------------------------------- */

static void install_filter(void)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE) };
	struct sock_fprog p = { .len = 1, .filter = f };

	/* Without CAP_SYS_ADMIN a filter needs no_new_privs, which changes
	 * what set-uid programs do; only set it when we have to. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p) == 0)
		return;
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p);
}

static void child(char **argv, int errfd, int seccomp)
{
	int err;

	ptrace(PTRACE_TRACEME, 0, 0, 0);
	raise(SIGSTOP);
	if (seccomp)
		install_filter();
	execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

pid_t xt_fork_piped(int p[2], int flags)
{
	pid_t pid;

	if (pipe2(p, flags) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pid = -errno;
		close(p[0]);
		close(p[1]);
	}
	return pid;
}

static int start(struct rec *r, char **argv, int *errfd)
{
	int p[2], st;
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK |
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	pid_t pid;

	if (r->o->seccomp)
		opts |= PTRACE_O_TRACESECCOMP;
	pid = xt_fork_piped(p, O_CLOEXEC);
	if (pid < 0)
		return pid;
	if (pid == 0)
		child(argv, p[1], r->o->seccomp);
	close(p[1]);
	*errfd = p[0];
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SETOPTIONS, pid, 0, opts) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -EPERM;
	}
	r->root = pid;
	r->t0 = now_ns();
	if (!thr_add(r, pid, 0))
		return -ENOMEM;
	resume(r, &r->thr[0], 0);
	return 0;
}

static void set_handlers(struct sigaction *old, int restore)
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: waitpid returns */
	for (int i = 0; i < 3; i++) {
		if (restore)
			sigaction(sigs[i], &old[i], NULL);
		else
			sigaction(sigs[i], &sa, &old[i]);
	}
}

/* The next stop.  Polls for up to r->spin_us before blocking: see the top
 * of the file. */
static int wait_stop(struct rec *r, int *st)
{
	uint64_t end = now_ns() + (uint64_t)r->spin_us * 1000;
	int tid;

	while (r->spin_us > 0) {
		tid = waitpid(-1, st, __WALL | WNOHANG);
		if (tid != 0)
			return tid;
		if (now_ns() > end)
			break;
	}
	return waitpid(-1, st, __WALL);
}

/* Polling only helps when tracer and tracee run on different CPUs; on one
 * CPU it would delay the tracee it waits for. */
static long spin_us(int pinned)
{
	const char *e = getenv("XSC_TRACE_SPIN_US");
	cpu_set_t set;

	if (e && *e)
		return atol(e);
	if (pinned || sched_getaffinity(0, sizeof(set), &set) < 0 ||
	    CPU_COUNT(&set) < 2)
		return 0;
	return SPIN_US;
}

static int loop(struct rec *r)
{
	int st, tid, err = 0;

	while (r->n > 0) {
		if (interrupted) {
			progress(r, 1);
			detach_all(r);
			break;
		}
		tid = wait_stop(r, &st);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		err = on_wait(r, tid, st);
		if (err < 0)
			break;
		if ((++r->stops & 63) == 0)
			progress(r, 0);
	}
	progress(r, 1);
	return err;
}

static int exec_error(struct xt_trace *t, int fd, const char *cmd)
{
	int e = 0;
	ssize_t n = read(fd, &e, sizeof(e));

	close(fd);
	if (n != sizeof(e))
		return 0;
	fprintf(stderr, "xsc trace: %s: %s\n", cmd, strerror(e));
	t->status = 127;
	return e == ENOENT ? -ENOENT : -e;
}

int xt_record(struct xt_trace *t, char **argv, const struct xt_recopt *o)
{
	struct rec r = { .t = t, .o = o };
	struct sigaction old[3];
	cpu_set_t oldmask, one;
	int errfd = -1, err, pinned = 0;
	uint64_t t0 = now_ns();

	if (o->pin && sched_getaffinity(0, sizeof(oldmask), &oldmask) == 0) {
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
		pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
	}

	r.progress = o->progress > 0 || (o->progress == 0 && isatty(2));
	r.spin_us = spin_us(pinned);
	interrupted = 0;
	set_handlers(old, 0);
	err = start(&r, argv, &errfd);
	if (err == 0)
		err = loop(&r);
	if (err < 0 && r.n > 0)
		detach_all(&r);
	set_handlers(old, 1);
	if (pinned)
		sched_setaffinity(0, sizeof(oldmask), &oldmask);
	free(r.thr);
	t->wall_s = (double)(now_ns() - t0) / 1e9;
	if (errfd >= 0) {
		int e = exec_error(t, errfd, argv[0]);
		if (e < 0)
			return e;
	}
	return err;
}
