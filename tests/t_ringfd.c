/* The program's descriptor numbers are its own: after xsc_open, its next
 * open gets the number it would have got without xsc (the ring's fd is
 * closed once registered, xsc's other fds sit above the soft limit).
 * xsc_close never closes an fd that is not its ring's.  A daemon closes
 * every fd from 3 up (close_range), then opens a pipe that gets the
 * ring's old number: calls through the handle still work (the ring is
 * entered through its registered index), and xsc_close leaves the pipe
 * open.
 * xsc-test: per-backend */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

int main(void)
{
	struct xsc *x;
	int p[2];
	char c;

	int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK_GE(lowest, 0);
	close(lowest);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK_EQ(fd, lowest);
	close(fd);
	CHECK_EQ(syscall(SYS_close_range, 3, ~0U, 0), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "x", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(xsc_close(x), 0);
	CHECK_GE(fcntl(p[0], F_GETFD), 0);
	CHECK_GE(fcntl(p[1], F_GETFD), 0);
	CHECK_EQ(write(p[1], "y", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'y');
	printf("ok (%s)\n", test_backend());
	return 0;
}
