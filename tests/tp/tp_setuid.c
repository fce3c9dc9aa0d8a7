/*
 * tp_setuid.c - a multithreaded program drops root with glibc's
 * setgroups/setgid/setuid, as daemons do (Apache's children, MariaDB).
 *
 * glibc makes every thread of the process take the new credentials (it
 * signals each one and waits for them).  While 3 threads are blocked (two
 * in read(), one on a condition variable), main drops to uid and gid
 * 65534 with no supplementary groups.  Then:
 *  - each thread, woken, reports its uid, gid and whether it can open a
 *    file only root may read (mode 0600, made before the drop);
 *  - main reads the same from /proc/self/status (the process's main
 *    thread) and tries the file itself;
 *  - a forked child of the dropped process starts threads that do the
 *    same checks.
 * Not root: says so and checks nothing (exit 0).  Exit 0 when every
 * thread has the new credentials and none can open the file, 1 if not.
 */
#include "tp.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>

#define NOBODY 65534

static char secret[64];

/* "uid U gid G secret denied|READ" as this thread sees it */
static void report(const char *who, char *out, size_t len)
{
	int fd = open(secret, O_RDONLY);
	int err = errno;

	snprintf(out, len, "%s: uid %d gid %d groups %d secret %s", who,
		 (int)getuid(), (int)getgid(), getgroups(0, NULL),
		 fd >= 0 ? "READ" : err == EACCES ? "denied" : strerror(err));
	if (fd >= 0)
		close(fd);
}

static int pipes[2][2];
static struct tp_gate gate = TP_GATE_INIT;
static char lines[3][160];

static void *reader(void *arg)
{
	int i = (int)(long)arg;
	char c;

	tp_gate_arrive(&gate);
	if (read(pipes[i][0], &c, 1) != 1)
		return (void *)1;
	report(i ? "reader 1" : "reader 0", lines[i], sizeof(lines[i]));
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	tp_gate_pass(&gate);
	report("sleeper", lines[2], sizeof(lines[2]));
	return NULL;
}

static void proc_status(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int uid = -1, gid = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4))
			uid = atoi(line + 4);
		if (!strncmp(line, "Gid:", 4))
			gid = atoi(line + 4);
	}
	if (f)
		fclose(f);
	snprintf(out, len, "/proc/self/status: uid %d gid %d", uid, gid);
}

static void *child_thread(void *arg)
{
	report("child thread", arg, 160);
	return NULL;
}

int main(void)
{
	pthread_t t[3], ct;
	char line[160];
	int fd, st;
	pid_t pid;

	if (geteuid() != 0) {
		printf("not root: nothing to check\n");
		return 0;
	}
	snprintf(secret, sizeof(secret), "/tmp/tp_setuid.%d", (int)getpid());
	fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "root only\n", 10) != 10)
		return 1;
	close(fd);
	/* the file is root's, and we will not be: a root process of ours
	 * removes it once we are gone (our end of its pipe closes) */
	if (pipe(pipes[0]) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		char c;
		close(pipes[0][1]);
		while (read(pipes[0][0], &c, 1) > 0)
			;
		unlink(secret);
		_exit(0);
	}
	close(pipes[0][0]);	/* pipes[0][1] stays open until we exit */
	for (int i = 0; i < 2; i++)
		if (pipe(pipes[i]) < 0)
			return 1;
	pthread_create(&t[0], NULL, reader, (void *)0L);
	pthread_create(&t[1], NULL, reader, (void *)1L);
	pthread_create(&t[2], NULL, sleeper, NULL);
	tp_gate_await(&gate, 3);

	CHECK(setgroups(0, NULL) == 0, "setgroups: %s", strerror(errno));
	CHECK(setgid(NOBODY) == 0, "setgid: %s", strerror(errno));
	CHECK(setuid(NOBODY) == 0, "setuid: %s", strerror(errno));
	CHECK(setuid(0) < 0 && errno == EPERM, "setuid(0) after the drop did not fail");

	for (int i = 0; i < 2; i++)
		if (write(pipes[i][1], "x", 1) != 1)
			tp_failed();
	tp_gate_open(&gate);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	report("main", line, sizeof(line));
	printf("%s\n", line);
	CHECK(strstr(line, "uid 65534 gid 65534 groups 0 secret denied"), "%s", line);
	for (int i = 0; i < 3; i++) {
		printf("%s\n", lines[i]);
		CHECK(strstr(lines[i], "uid 65534 gid 65534 groups 0 secret denied"), "%s",
		      lines[i]);
	}
	proc_status(line, sizeof(line));
	printf("%s\n", line);
	CHECK(strstr(line, "uid 65534 gid 65534") != NULL, "%s", line);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char out[160];
		pthread_create(&ct, NULL, child_thread, out);
		pthread_join(ct, NULL);
		printf("%s\n", out);
		fflush(stdout);
		_exit(strstr(out, "uid 65534 gid 65534 groups 0 secret denied") ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "the child's thread had other credentials");
	fflush(stdout);
	return tp_failures ? 1 : 0;
}
