/* The kernel facts the uring multi-call path relies on (6.18): a failed
 * READ, WRITE, OPENAT, CLOSE and FSYNC break an IOSQE_IO_LINK chain (the
 * next request gets -ECANCELED), and so does a short READ; a failed
 * STATX does not, which is why chains holding statx never go to the ring.
 * Checked with liburing directly. */
#include <fcntl.h>
#include <liburing.h>
#include <linux/stat.h>
#include <unistd.h>

#include "testlib.h"

static struct io_uring ring;

/* Submits sqe-prep'd head linked to a NOP; returns the NOP's result. */
static int after(void (*prep)(struct io_uring_sqe *, void *), void *arg, int *head)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);
	struct io_uring_cqe *c;
	int res[2] = { 0, 0 };

	prep(s, arg);
	s->flags |= IOSQE_IO_LINK;
	s->user_data = 0;
	s = io_uring_get_sqe(&ring);
	io_uring_prep_nop(s);
	s->user_data = 1;
	CHECK_EQ(io_uring_submit_and_wait(&ring, 2), 2);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &c), 0);
		res[c->user_data] = c->res;
		io_uring_cqe_seen(&ring, c);
	}
	*head = res[0];
	return res[1];
}

static char buf[64];
static struct statx stx;
static void p_read_bad(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_read(s, 999, buf, 8, 0); }
static void p_read_short(struct io_uring_sqe *s, void *a) { io_uring_prep_read(s, *(int *)a, buf, 64, 0); }
static void p_write_bad(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_write(s, 999, buf, 8, 0); }
static void p_open_bad(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_openat(s, AT_FDCWD, "/nonexistent/x", O_RDONLY, 0); }
static void p_close_bad(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_close(s, 999); }
static void p_fsync_bad(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_fsync(s, 999, 0); }
static void p_statx_bad(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_statx(s, AT_FDCWD, "/nonexistent/x", 0, STATX_SIZE, &stx); }

int main(void)
{
	int head, fd;
	char path[300];

	if (io_uring_queue_init(8, &ring, 0) < 0)
		skip("no io_uring");
	snprintf(path, sizeof(path), "%s/f", scratch_dir());
	fd = open(path, O_RDWR | O_CREAT, 0644);
	CHECK_EQ(write(fd, "abc", 3), 3);
	CHECK_EQ(after(p_read_bad, NULL, &head), -ECANCELED);
	CHECK_EQ(head, -EBADF);
	CHECK_EQ(after(p_read_short, &fd, &head), -ECANCELED);
	CHECK_EQ(head, 3);
	CHECK_EQ(after(p_write_bad, NULL, &head), -ECANCELED);
	CHECK_EQ(after(p_open_bad, NULL, &head), -ECANCELED);
	CHECK_EQ(head, -ENOENT);
	CHECK_EQ(after(p_close_bad, NULL, &head), -ECANCELED);
	CHECK_EQ(after(p_fsync_bad, NULL, &head), -ECANCELED);
	int r = after(p_statx_bad, NULL, &head);
	CHECK_EQ(head, -ENOENT);
	printf("failed STATX %s its link (%d)\n", r == -ECANCELED ? "breaks" : "does NOT break", r);
	close(fd);
	io_uring_queue_exit(&ring);
	printf("ok\n");
	return 0;
}
