/* Threads that wait for each other after the program restricted itself:
 *  - a Landlock domain (if the kernel has Landlock), then a thread blocks
 *    reading a pipe that the main thread writes 50 ms later;
 *  - as root, the main thread changes its own effective uid with the raw
 *    system call (only that thread, natively), then opens a file only
 *    root may read (denied, whichever kernel thread runs the open), and
 *    blocks reading a pipe that a new thread writes 50 ms later.
 * With one kernel thread (`xsc run -t 1`) a blocked call that held the
 * vcpu itself stalled the thread that would have woken it: the program
 * hung where natively it finishes.  The output must be the native one.
 * xsc-tp: run-opts=-t 1 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int p[2];

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

static void *nothing(void *arg)
{
	return arg;
}

static void *reader(void *arg)
{
	char b[16];
	long n = read(p[0], b, sizeof(b));

	printf("%s: read %ld\n", (const char *)arg, n);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	pause_ms(50);
	if (write(p[1], "hello", 5) != 5)
		printf("writer: write failed\n");
	return NULL;
}

int main(void)
{
	struct landlock_ruleset_attr ra = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_DIR,
	};
	pthread_t t;
	int fd;

	/* under xsc run the runtime starts at the first thread */
	if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	if (pipe(p) != 0)
		return 2;

	if (geteuid() == 0) {
		char secret[] = "/tmp/tp-sandbox-block-XXXXXX";
		int sfd = mkstemp(secret);

		if (sfd < 0 || fchmod(sfd, 0600) != 0)
			return 2;
		close(sfd);
		/* the raw call: this thread alone, as natively */
		if (syscall(SYS_setresuid, -1, 65534, -1) != 0) {
			perror("setresuid");
			return 2;
		}
		sfd = open(secret, O_RDONLY | O_CLOEXEC);
		printf("main (euid 65534): open of a root-only file: %s\n",
		       sfd >= 0 ? "opened" : strerror(errno));
		if (sfd >= 0)
			close(sfd);
		if (pthread_create(&t, NULL, writer, NULL) != 0)
			return 2;
		reader("main (euid 65534)");
		pthread_join(t, NULL);
		printf("main: euid %ld\n", syscall(SYS_geteuid));
		if (syscall(SYS_setresuid, -1, 0, -1) != 0) {
			perror("setresuid back");
			return 2;
		}
		unlink(secret);
	} else {
		printf("not root: no credentials part\n");
	}

	fd = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
	if (fd < 0) {
		printf("no Landlock here\n");
	} else {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
			perror("landlock_restrict_self");
			return 2;
		}
		close(fd);
		if (pthread_create(&t, NULL, reader, "thread (Landlock)") != 0)
			return 2;
		pause_ms(50);
		if (write(p[1], "hello", 5) != 5)
			printf("main: write failed\n");
		pthread_join(t, NULL);
	}
	printf("done\n");
	return 0;
}
