/* The cancel window of the syscall threads' stub, hit at every
 * instruction instead of by chance.
 *
 * A worker call runs through xsc__syscall_cp (src/arch/x86_64/cancel.S):
 * it tests the entry's `canceled`, then makes the call.  A cancel that
 * sets the flag after the test and signals the thread before the syscall
 * instruction must still stop the call (the handler moves rip to the
 * stub's cancel path); a signal after the call must leave its result
 * alone.  t_cancel_race meets the window, a few instructions wide, only
 * by luck; here the calling thread single-steps itself (the trap flag)
 * through the stub and, at one chosen instruction, does what a canceller
 * does: sets the flag and queues XSC_CANCEL_SIGNAL for itself, kept
 * blocked in the SIGTRAP handler so it lands exactly at that instruction.
 * The call is a 1-byte write to a pipe, so whether it ran is visible.
 *  - at each instruction from the test to the syscall instruction: the
 *    write returns -ECANCELED and nothing reaches the pipe;
 *  - at the instruction after the call: the write's 1 stands, one byte;
 *  - a signal at the syscall instruction with the flag clear (a stray
 *    XSC_CANCEL_SIGNAL): the write runs.
 * The handler is the one the worker pool installs, so a worker handle is
 * opened first. */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

long xsc__syscall_cp(const _Atomic int *canceled, long nr,
		     const int64_t args[6]);
extern const char xsc__cp_begin[], xsc__cp_end[];

#define CANCEL_SIG (SIGRTMAX - 1)	/* worker.c's XSC_CANCEL_SIGNAL */
#define TF 0x100
#define MAXIP 64

static _Atomic int flag;
static uintptr_t fire_at;	/* 0: record the path */
static int fire_sets_flag;
static uintptr_t path[MAXIP];
static int npath, fired;

static void on_trap(int sig, siginfo_t *si, void *uctx)
{
	greg_t *g = ((ucontext_t *)uctx)->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP];

	(void)sig;
	(void)si;
	if (!fire_at) {
		/* the stub's instructions, and the first one after the
		 * syscall (the trap flag, cleared while in the kernel, comes
		 * back with the syscall's return: its first trap is one
		 * instruction later) */
		if (ip >= (uintptr_t)xsc__syscall_cp &&
		    ip < (uintptr_t)xsc__syscall_cp + 128 && npath < MAXIP) {
			path[npath++] = ip;
			if (ip >= (uintptr_t)xsc__cp_end)
				g[REG_EFL] &= ~TF;
		}
		return;
	}
	if (ip != fire_at)
		return;
	if (fire_sets_flag)
		atomic_store(&flag, 1);
	/* blocked here by sa_mask: delivered on the way back, at ip */
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), CANCEL_SIG);
	fired = 1;
	g[REG_EFL] &= ~TF;
}

static void step_on(void)
{
	__asm__ __volatile__("pushfq; orq $0x100, (%%rsp); popfq" ::: "memory",
			     "cc");
}

/* One write of 'w' through the stub, stepped; fires at `at` (0: record).
 * Returns the call's result; *bytes gets what reached the pipe. */
static long one(int p[2], uintptr_t at, int sets_flag, int *bytes)
{
	int64_t args[6] = { p[1], (int64_t)(uintptr_t)"w", 1, 0, 0, 0 };
	char buf[8];
	long ret;

	atomic_store(&flag, 0);
	fire_at = at;
	fire_sets_flag = sets_flag;
	fired = 0;
	step_on();
	ret = xsc__syscall_cp(&flag, SYS_write, args);
	CHECK(at == 0 || fired);
	*bytes = (int)read(p[0], buf, sizeof(buf));
	if (*bytes < 0)
		*bytes = 0;
	return ret;
}

int main(void)
{
	struct xsc_config cfg;
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
	struct sigaction cur;
	struct xsc *x;
	int fds0 = count_fds(), p[2], bytes, ncancel = 0;
	long ret;

	xsc_config_init(&cfg);
	cfg.backend = XSC_BACKEND_WORKER;
	cfg.flags |= XSC_NO_ENV | XSC_QUIET;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());	/* starts the pool */
	CHECK_EQ(sigaction(CANCEL_SIG, NULL, &cur), 0);
	CHECK(cur.sa_flags & SA_SIGINFO);	/* the pool's handler, for rip */

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, CANCEL_SIG);
	CHECK_EQ(sigaction(SIGTRAP, &sa, NULL), 0);
	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);

	/* the instructions the stub executes, up to one after the syscall */
	CHECK_EQ(one(p, 0, 0, &bytes), 1);
	CHECK_EQ(bytes, 1);
	CHECK(npath >= 3);
	CHECK_GE(path[npath - 1], (uintptr_t)xsc__cp_end);
	CHECK_EQ(path[npath - 2], (uintptr_t)xsc__cp_end - 2);	/* syscall */

	for (int i = 0; i < npath; i++) {
		uintptr_t ip = path[i];
		int in = ip >= (uintptr_t)xsc__cp_begin && ip < (uintptr_t)xsc__cp_end;

		ret = one(p, ip, 1, &bytes);
		printf("signal at +%-3lu %-6s -> %ld, %d byte(s) written\n",
		       (unsigned long)(ip - (uintptr_t)xsc__syscall_cp),
		       in ? "window" : ip < (uintptr_t)xsc__cp_begin ? "before"
							: "after",
		       ret, bytes);
		if (ip < (uintptr_t)xsc__cp_end) {
			/* before the test, the test sees the flag; in the
			 * window, the handler stops the call */
			CHECK_EQ(ret, -ECANCELED);
			CHECK_EQ(bytes, 0);
			ncancel += in;
		} else {
			CHECK_EQ(ret, 1);	/* the call was over */
			CHECK_EQ(bytes, 1);
		}
	}
	CHECK_GE(ncancel, 3);	/* the test, the branch, the syscall */

	/* a stray signal in the window, flag clear: the call runs */
	ret = one(p, path[npath - 2], 0, &bytes);
	CHECK_EQ(ret, 1);
	CHECK_EQ(bytes, 1);

	signal(SIGTRAP, SIG_DFL);
	close(p[0]);
	close(p[1]);
	CHECK_EQ(xsc_close(x), 0);
	CHECK_EQ(count_fds(), fds0);
	printf("ok\n");
	return 0;
}
