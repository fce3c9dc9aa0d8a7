/* A sandbox or a credential change made after xsc_open holds for every
 * later call of the handle, on every executor: io_uring executes requests
 * without passing through seccomp, and syscall threads that predate a
 * filter (or a raw set*id of one thread) do not carry it.  Each scenario
 * runs in a child (a filter cannot be removed), makes a call that works,
 * sandboxes itself, then tries what the sandbox forbids and checks the
 * native error AND the disk:
 *  - a seccomp filter installed natively, then xsc_sandbox_changed();
 *  - seccomp(SET_MODE_FILTER) made through the handle, with and without
 *    TSYNC, and prctl(PR_SET_SECCOMP) through the handle (detected: no
 *    call to xsc_sandbox_changed);
 *  - the same filter also denying io_uring_* (SQPOLL polls without any);
 *  - landlock_restrict_self through the handle (if the kernel has it);
 *  - setresuid(nobody) through the handle, as root;
 *  - capset dropping CAP_DAC_OVERRIDE through the handle, as root, in a
 *    directory root does not own (mkdir then needs the capability).
 * Posted batches too, not only xsc_call.
 * xsc-test: per-backend
 * xsc-test: timeout=120 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

enum how { NATIVE, VIA_SECCOMP, VIA_TSYNC, VIA_PRCTL, VIA_NO_URING, LANDLOCK, SETUID, CAPSET };
static const char *const names[] = { "native filter + xsc_sandbox_changed",
	"seccomp() through xsc", "seccomp(TSYNC) through xsc",
	"prctl(PR_SET_SECCOMP) through xsc", "filter denying io_uring too, through xsc",
	"landlock_restrict_self through xsc", "setresuid(nobody) through xsc",
	"capset without CAP_DAC_OVERRIDE through xsc" };

/* Denies mkdir/mkdirat (EPERM) and, optionally, every io_uring call. */
static struct sock_fprog *filter(bool no_uring)
{
	static struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mkdir, 6, 0),		/* -> 8 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mkdirat, 5, 0),	/* -> 8 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 3, 0),	/* -> 7 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),	/* io_uring_*: patched */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	static struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	f[7].k = no_uring ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_ALLOW;
	return &prog;
}

static int landlock_ruleset(void)
{
	struct landlock_ruleset_attr a = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG,
	};
	return (int)syscall(SYS_landlock_create_ruleset, &a, sizeof(a), 0);
}

static int scenario(enum how how)
{
	struct xsc *x;
	struct stat st;
	long want = how == LANDLOCK || how == SETUID || how == CAPSET ? -EACCES : -EPERM;
	long r = 0;
	int ids[4];

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(xsc_call(x, SYS_mkdir, "before", 0755), 0);	/* the ring works */
	if (how != SETUID && how != CAPSET)
		CHECK_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	switch (how) {
	case NATIVE:
		CHECK_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, filter(false)), 0);
		CHECK_EQ(xsc_sandbox_changed(x), 0);
		break;
	case VIA_SECCOMP:
		r = xsc_call(x, SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, filter(false));
		break;
	case VIA_TSYNC:
		r = xsc_call(x, SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_TSYNC, filter(false));
		break;
	case VIA_PRCTL:
		r = xsc_call(x, SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
			     filter(false), 0, 0);
		break;
	case VIA_NO_URING:
		r = xsc_call(x, SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, filter(true));
		break;
	case LANDLOCK: {
		int rfd = landlock_ruleset();
		if (rfd < 0)
			return 77;
		r = xsc_call(x, SYS_landlock_restrict_self, rfd, 0);
		close(rfd);
		break;
	}
	case SETUID:
		r = xsc_call(x, SYS_setresuid, 65534, 65534, 65534);
		break;
	case CAPSET: {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		CHECK_EQ(syscall(SYS_capget, &h, d), 0);
		d[0].effective &= ~(1u << CAP_DAC_OVERRIDE);
		r = xsc_call(x, SYS_capset, &h, d);
		break;
	}
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(xsc_call(x, SYS_mkdir, "after", 0755), want);
	CHECK(stat("after", &st) != 0 && errno == ENOENT);
	for (int i = 0; i < 4; i++) {
		static char path[4][8];
		snprintf(path[i], sizeof(path[i]), "p%d", i);
		CHECK_GE(ids[i] = xsc_post(x, SYS_mkdirat, AT_FDCWD, path[i], 0755), 0);
	}
	CHECK_EQ(xsc_wait(x, 4), 4);
	for (int i = 0; i < 4; i++) {
		long v;
		char path[8];
		CHECK_EQ(xsc_take(x, ids[i], &v), 0);
		CHECK_EQ(v, want);
		snprintf(path, sizeof(path), "p%d", i);
		CHECK(stat(path, &st) != 0 && errno == ENOENT);
	}
	/* what the sandbox allows still works */
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	usleep(20000);	/* nothing forbidden runs late either */
	CHECK(stat("after", &st) != 0 && errno == ENOENT);
	CHECK_EQ(xsc_close(x), 0);
	return 0;
}

int main(void)
{
	const char *dir = scratch_dir();
	int bad = 0;

	CHECK_EQ(chmod(dir, 0755), 0);	/* root's: nobody may not write */
	for (int how = NATIVE; how <= CAPSET; how++) {
		char sub[300];
		int st;

		if ((how == SETUID || how == CAPSET) && geteuid() != 0) {
			printf("%s: not root, not checked\n", names[how]);
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%d", dir, how);
		CHECK_EQ(mkdir(sub, 0755), 0);
		if (how == CAPSET)	/* root may write in it by the capability alone */
			CHECK_EQ(chown(sub, 65534, 65534), 0);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			alarm(30);	/* a hang is a failure */
			CHECK_EQ(chdir(sub), 0);
			_exit(scenario(how));
		}
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			printf("%s: the kernel has no Landlock, not checked\n", names[how]);
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "FAIL %s: status %#x\n", names[how], st);
			bad = 1;
		}
	}
	if (bad)
		return 1;
	printf("ok (%s)\n", test_backend());
	return 0;
}
