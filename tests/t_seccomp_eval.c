/* The seccomp filter evaluator (src/seccomp_eval.c) answers as the kernel
 * does: for each filter below, whether it lets io_uring_enter through
 * with the arguments xsc's threads use is compared with what the kernel
 * does with the same call, in a child that installed the filter (actions
 * that cannot be watched that way, TRAP, KILL, USER_NOTIF and TRACE, are
 * checked against the evaluator's "no" alone).  A filter that refuses a
 * call answers with errno ENOTNAM, which nothing else gives here. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "seccomp_eval.h"

#define NR offsetof(struct seccomp_data, nr)
#define ARCH offsetof(struct seccomp_data, arch)
#define ARG(i) offsetof(struct seccomp_data, args[i])
#define REFUSE (SECCOMP_RET_ERRNO | ENOTNAM)
#define ENTER_FLAGS (IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING)

/* The kernel's answer: 1 let through, 0 refused (ENOTNAM). */
static int kernel_lets(const struct sock_filter *f, unsigned short len, long flags)
{
	struct sock_fprog prog = { len, (struct sock_filter *)f };
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(3);
		long r = syscall(SYS_io_uring_enter, 0, 0, 0, flags, NULL, 0);
		_exit(r < 0 && errno == ENOTNAM ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) != 3);
	return WEXITSTATUS(st);
}

static int evaluated(const struct sock_filter *f, unsigned short len, long flags)
{
	struct seccomp_data d = { .nr = SYS_io_uring_enter, .arch = AUDIT_ARCH_X86_64,
				  .args = { 0, 0, 0, (unsigned long)flags } };
	return xsc__seccomp_allows(f, len, &d);
}

#define SAME(f, flags) do { int k = kernel_lets(f, sizeof(f) / sizeof(f[0]), flags); \
	int e = evaluated(f, sizeof(f) / sizeof(f[0]), flags); \
	if (k != e) { fprintf(stderr, "%s (flags %#lx): kernel %d, evaluator %d\n", \
			      #f, (long)(flags), k, e); exit(1); } \
	printf("%-14s flags %#6lx: %s\n", #f, (long)(flags), k ? "let through" : "refused"); \
	} while (0)

int main(void)
{
	static const struct sock_filter allow_all[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter log_all[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
	};
	static const struct sock_filter deny_uring[] = {	/* tp.h's form */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_enter, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, REFUSE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter allow_list[] = {	/* all else refused */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SYS_io_uring_setup, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, SYS_io_uring_register, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, REFUSE),	/* 425-427 */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter by_flags[] = {	/* JSET on an argument */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_enter, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG(3)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, IORING_ENTER_GETEVENTS, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, REFUSE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter scratch[] = {	/* ALU, memory, TAX/TXA */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 400),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LD | BPF_IMM, 0),
		BPF_STMT(BPF_LDX | BPF_MEM, 3),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_enter - 400, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, REFUSE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter ret_a[] = {	/* the action from A */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_enter, 0, 2),
		BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ERRNO | ENOTNAM),
		BPF_STMT(BPF_RET | BPF_A, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter other_actions[][1] = {
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP) },
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD) },
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS) },
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF) },
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE) },
	};
	static const struct sock_filter bad_load[] = {	/* past seccomp_data */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	if (prctl(PR_GET_SECCOMP) != 0)
		skip("this process runs under a seccomp filter already");
	SAME(allow_all, ENTER_FLAGS);
	SAME(log_all, ENTER_FLAGS);
	SAME(deny_uring, ENTER_FLAGS);
	SAME(allow_list, ENTER_FLAGS);
	SAME(by_flags, ENTER_FLAGS);
	SAME(by_flags, 0);
	SAME(scratch, ENTER_FLAGS);
	SAME(ret_a, ENTER_FLAGS);
	for (unsigned i = 0; i < sizeof(other_actions) / sizeof(other_actions[0]); i++)
		CHECK(!evaluated(other_actions[i], 1, ENTER_FLAGS));
	CHECK(!evaluated(bad_load, 2, ENTER_FLAGS));
	printf("TRAP, KILL_THREAD, KILL_PROCESS, USER_NOTIF, TRACE and a load past "
	       "seccomp_data: refused\n");
	return 0;
}
