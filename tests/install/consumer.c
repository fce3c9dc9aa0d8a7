/* The install checks' consumer (scripts/install-check.sh,
 * scripts/deb-check.sh): built against an installed xsc, with pkg-config
 * and with CMake's find_package, shared and static; one call through the
 * library must give what the direct call gives. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xsc.h>

int main(void)
{
	struct xsc *x;
	long r;

	if (xsc_open(&x, NULL) < 0) {
		fprintf(stderr, "consumer: xsc_open failed\n");
		return 1;
	}
	r = xsc_call(x, SYS_getppid);
	xsc_close(x);
	if (r != getppid()) {
		fprintf(stderr, "consumer: getppid through xsc gave %ld, want %ld\n",
			r, (long)getppid());
		return 1;
	}
	return 0;
}
