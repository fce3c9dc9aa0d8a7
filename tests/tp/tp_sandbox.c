/* A program that sandboxes itself, then tries what its sandbox forbids,
 * from the thread that made the sandbox and from a thread created after:
 *  - a seccomp filter (via prctl, as libseccomp-less programs do) that
 *    denies mkdir/mkdirat with EPERM;
 *  - then a Landlock ruleset that handles file and directory creation
 *    (if the kernel has Landlock): creating a file gets EACCES.
 * It prints each result and whether anything appeared on disk; under
 * `xsc run` the output must be the native one, byte for byte. */
#include "tp.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>

static void try_mkdir(const char *who, const char *path)
{
	struct stat st;
	int r = mkdir(path, 0755), e = errno;
	const char *res = r == 0 ? "made" : strerror(e);
	printf("%s: mkdir %s: %s; on disk: %s\n", who, path, res,
	       stat(path, &st) == 0 ? "yes" : "no");
}

static void try_create(const char *who, const char *path)
{
	struct stat st;
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644), e = errno;
	const char *res = fd >= 0 ? "made" : strerror(e);
	printf("%s: create %s: %s; on disk: %s\n", who, path, res,
	       stat(path, &st) == 0 ? "yes" : "no");
	if (fd >= 0)
		close(fd);
}

static void *later_mkdir(void *arg)
{
	(void)arg;
	try_mkdir("new thread", "d2");
	return NULL;
}

static void *later_create(void *arg)
{
	(void)arg;
	try_create("new thread", "f2");
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/tp-sandbox-XXXXXX";
	pthread_t t;

	if (!mkdtemp(dir) || chdir(dir) != 0)
		return 2;
	try_mkdir("main", "d0");
	if (tp_seccomp_refuse(__NR_mkdir, __NR_mkdirat) != 0) {
		perror("seccomp");
		return 2;
	}
	try_mkdir("main", "d1");
	if (pthread_create(&t, NULL, later_mkdir, NULL) != 0)
		return 2;
	pthread_join(t, NULL);

	struct landlock_ruleset_attr a = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG,
	};
	int rfd = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof(a), 0);
	try_create("main", "f0");
	if (rfd < 0) {
		printf("no Landlock here\n");
	} else {
		if (syscall(SYS_landlock_restrict_self, rfd, 0) != 0) {
			perror("landlock_restrict_self");
			return 2;
		}
		close(rfd);
		try_create("main", "f1");
		if (pthread_create(&t, NULL, later_create, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
	}
	unlink("f0");
	rmdir("d0");
	if (chdir("/") != 0 || rmdir(dir) != 0)
		printf("could not clean up %s\n", dir);
	return 0;
}
