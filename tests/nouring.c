/* nouring CMD [ARGS...]: runs CMD with io_uring forbidden, as a container
 * runtime's seccomp profile does: io_uring_setup, io_uring_enter and
 * io_uring_register fail with EPERM (Docker's default profile).  The
 * filter is inherited by everything CMD starts.  Used by `make test` to
 * run the suite on the fallback executors.
 *   nouring -s CMD: the same with ENOSYS, as an older kernel answers.
 *   nouring -k CMD: the process is killed instead (SECCOMP_RET_KILL_PROCESS),
 *     as a strict allow-list profile does to what it does not list. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned action = SECCOMP_RET_ERRNO | EPERM;
	int i = 1;

	if (argc > 1 && !strcmp(argv[1], "-s")) {
		action = SECCOMP_RET_ERRNO | ENOSYS;
		i++;
	} else if (argc > 1 && !strcmp(argv[1], "-k")) {
		action = SECCOMP_RET_KILL_PROCESS;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: nouring [-s|-k] CMD [ARGS...]\n");
		return 2;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, action),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("nouring: seccomp");
		return 126;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "nouring: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
