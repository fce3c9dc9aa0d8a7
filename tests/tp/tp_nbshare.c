/* O_NONBLOCK belongs to the open file description, not to the descriptor
 * number.  Under xsc run a read that finds nothing asks whether its
 * descriptor is non-blocking, and the answer is kept for descriptors the
 * program made, as long as no other descriptor or process shares their
 * description (src/sched/fdkind.c).  Each case makes a fresh socket pair
 * (its reads would wait), shares one end, changes O_NONBLOCK through the
 * other holder, and reads through the first end:
 *   dup, dup2, fcntl F_DUPFD_CLOEXEC, a forked child, a process that got
 *   it over a socket (SCM_RIGHTS): set there, the read says EAGAIN;
 *   set through the descriptor itself, then cleared: EAGAIN, then the
 *   byte a thread writes 100 ms later;
 *   made non-blocking, cleared through a dup: the read waits for the
 *   thread's byte.
 * A kept answer that missed the change makes a read wait forever (the
 * alarm ends the program, exit 2) or say EAGAIN where it waits. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void on_alarm(int s)
{
	(void)s;
	write(1, "alarm: a read waited\n", 21);
	_exit(2);
}

static void pair(int sv[2], int type)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | type, 0, sv))
		die("socketpair");
}

static void set_nb(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK))
		die("fcntl F_SETFL");
}

/* read(fd) and what it said */
static void say_read(const char *what, int fd)
{
	char c;
	long n = read(fd, &c, 1);

	if (n < 0)
		printf("%s: %s\n", what, errno == EAGAIN ? "EAGAIN" : strerror(errno));
	else
		printf("%s: read %ld byte(s)\n", what, n);
	fflush(stdout);
}

static void *late_byte(void *arg)
{
	usleep(100000);
	if (write(*(int *)arg, "b", 1) != 1)
		die("write");
	return NULL;
}

/* read(fd) with a thread writing a byte to w 100 ms later */
static void say_read_late(const char *what, int fd, int w)
{
	pthread_t t;

	if (pthread_create(&t, NULL, late_byte, &w))
		die("pthread_create");
	say_read(what, fd);
	pthread_join(t, NULL);
}

static void closep(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

static void by_dup(void)
{
	int sv[2], d;

	pair(sv, 0);
	d = dup(sv[0]);
	set_nb(d, 1);
	say_read("set through a dup", sv[0]);
	close(d);
	closep(sv);

	pair(sv, 0);
	if (dup2(sv[0], 100) != 100)
		die("dup2");
	set_nb(100, 1);
	say_read("set through a dup2", sv[0]);
	close(100);
	closep(sv);

	pair(sv, 0);
	if ((d = fcntl(sv[0], F_DUPFD_CLOEXEC, 50)) < 50)
		die("F_DUPFD_CLOEXEC");
	set_nb(d, 1);
	say_read("set through F_DUPFD_CLOEXEC", sv[0]);
	close(d);
	closep(sv);
}

static void by_fork(void)
{
	int sv[2], st;
	pid_t p;

	pair(sv, 0);
	say_read_late("before the fork", sv[0], sv[1]);
	if ((p = fork()) < 0)
		die("fork");
	if (p == 0) {
		set_nb(sv[0], 1);
		_exit(0);
	}
	if (waitpid(p, &st, 0) != p || st)
		die("the child");
	say_read("set by a forked child", sv[0]);
	closep(sv);
}

/* The child is forked before the pair exists: only the descriptor sent
 * to it shares the pair's description. */
static void by_scm_rights(void)
{
	int ch[2], sv[2], st, fd;
	char c = 0, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	pid_t p;

	pair(ch, 0);
	if ((p = fork()) < 0)
		die("fork");
	if (p == 0) {
		if (recvmsg(ch[1], &m, 0) != 1 || !CMSG_FIRSTHDR(&m))
			die("recvmsg");
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(fd));
		set_nb(fd, 1);
		if (write(ch[1], "k", 1) != 1)
			die("write");
		_exit(0);
	}
	pair(sv, 0);
	say_read_late("made after the fork", sv[0], sv[1]);
	memset(buf, 0, sizeof(buf));
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &sv[0], sizeof(int));
	if (sendmsg(ch[0], &m, 0) != 1 || read(ch[0], &c, 1) != 1)
		die("sendmsg");
	if (waitpid(p, &st, 0) != p || st)
		die("the child");
	say_read("set by a process it was sent to", sv[0]);
	closep(sv);
	closep(ch);
}

static void by_itself(void)
{
	int sv[2], d;

	pair(sv, 0);
	set_nb(sv[0], 1);
	say_read("set through itself", sv[0]);
	set_nb(sv[0], 0);
	say_read_late("cleared through itself", sv[0], sv[1]);
	closep(sv);

	pair(sv, SOCK_NONBLOCK);
	say_read("made non-blocking", sv[0]);
	d = dup(sv[0]);
	set_nb(d, 0);
	say_read_late("cleared through a dup", sv[0], sv[1]);
	close(d);
	closep(sv);
}

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

int main(void)
{
	pthread_t t;

	signal(SIGALRM, on_alarm);
	alarm(10);
	if (pthread_create(&t, NULL, idle, NULL))	/* the runtime starts */
		die("pthread_create");
	by_itself();
	by_dup();
	by_scm_rights();
	by_fork();
	return 0;
}
