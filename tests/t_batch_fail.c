/* Calls that io_uring rejects before it issues them (a bad path pointer
 * in openat, mkdirat, unlinkat, renameat; a bad address in connect), in
 * one batch with calls that succeed.  Without IORING_SETUP_SUBMIT_ALL the
 * kernel stops a submission at such an SQE and the SQEs behind it stay in
 * the SQ: the read after a failed openat never completed (a flush of
 * [openat(bad), read] hung in xsc_take).  Every call of the batch must
 * complete, within 5 s, with the answer of the same call made directly;
 * batches of 2 and of 120, on every executor.
 * xsc-test: per-backend */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define BAD ((long)8)	/* an address no process maps */

struct call {
	long nr, a[6];
};

static char buf[8];

int main(void)
{
	struct xsc *x;
	int p[2], fds0;
	int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK_GE(zero, 0);
	CHECK_GE(null, 0);
	CHECK_GE(sock, 0);
	struct call bad[] = {
		{ SYS_openat, { AT_FDCWD, BAD, O_RDONLY } },
		{ SYS_mkdirat, { AT_FDCWD, BAD, 0700 } },
		{ SYS_unlinkat, { AT_FDCWD, BAD, 0 } },
		{ SYS_renameat, { AT_FDCWD, BAD, AT_FDCWD, BAD } },
		{ SYS_connect, { sock, BAD, sizeof(struct sockaddr_in) } },
	};
	struct call good[] = {
		{ SYS_read, { zero, (long)buf, 8 } },
		{ SYS_write, { null, (long)"12345678", 8 } },
	};
	long want_bad[5], want_good[2];
	const int nb = 5, ng = 2;

	for (int i = 0; i < nb; i++)
		want_bad[i] = syscall(bad[i].nr, bad[i].a[0], bad[i].a[1], bad[i].a[2],
				      bad[i].a[3], 0, 0) < 0 ? -errno : 0;
	for (int i = 0; i < ng; i++)
		want_good[i] = 8;
	fds0 = count_fds();
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	for (int size = 2; size <= 120; size += 118) {
		int ids[120];
		long want[120];
		for (int k = 0; k < size; k++) {
			const struct call *c = k % 2 ? &good[(k / 2) % ng] : &bad[(k / 2) % nb];
			want[k] = k % 2 ? want_good[(k / 2) % ng] : want_bad[(k / 2) % nb];
			ids[k] = xsc_post(x, c->nr, c->a[0], c->a[1], c->a[2], c->a[3], 0, 0);
			CHECK_GE(ids[k], 0);
		}
		CHECK_EQ(xsc_flush(x), size);
		for (int k = 0; k < size; k++) {
			long r = take_within(x, ids[k], 5.0);
			if (r != want[k])
				fprintf(stderr, "batch of %d, call %d (%s): %ld, directly %ld\n",
					size, k, xsc_syscall_name(k % 2 ? good[(k / 2) % ng].nr :
								   bad[(k / 2) % nb].nr),
					r, want[k]);
			CHECK_EQ(r, want[k]);
		}
		printf("a batch of %d: every call answered as directly\n", size);
	}
	finish_handle(x, p, fds0);
	close(zero);
	close(null);
	close(sock);
	return 0;
}
