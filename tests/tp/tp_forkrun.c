/*
 * tp_forkrun.c - a forked child of a multithreaded program runs threads
 * of its own, as forking servers' children do (Apache's, PostgreSQL's).
 *
 * The parent starts 4 threads blocked in reads of pipes (calls in flight
 * when it forks) and forks from a thread, not main.  The child:
 *  - checks that its one thread is itself: gettid() == getpid();
 *  - runs 8 threads that pass a token around a ring of pipes 2,000 times
 *    and a mutex/condition-variable counter, then joins them;
 *  - checks that its threads are of the same kind as the parent's: a new
 *    thread's id is above 0x40000000 in both or in neither (xsc run's
 *    fibers have virtual ids there; natively both are kernel thread ids);
 *    a child whose threads were kernel threads while the parent's are
 *    fibers ran without xsc;
 *  - checks that it holds no more io_uring, eventfd and signalfd
 *    descriptors than the parent (the parent's runtime's are not the
 *    child's: it has its own);
 *  - blocks a thread in read() and is sent SIGUSR1 by the parent (every
 *    10 ms until it exits), whose handler (no SA_RESTART) makes the read
 *    fail with EINTR;
 *  - forks a grandchild that does the thread ring again and exits 7;
 *  - exits 5 through exit(), whose atexit handler prints a line.
 * The parent then wakes its readers, joins them and expects status 5.
 * Prints the collected results; exit 0 on success, 1 on any error.
 */
#include "tp.h"

#include <dirent.h>
#include <time.h>

#define NREAD 4
#define NRING 8
#define ROUNDS 2000
#define VIRTUAL_TID 0x40000000

static long tid(void)
{
	return syscall(SYS_gettid);
}

/* ---- a ring of threads passing a token through pipes ---------------------- */

static int ring[NRING][2];
static long ring_tid[NRING];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;

static void *ring_member(void *arg)
{
	int i = (int)(long)arg;
	int in = ring[i][0], out = ring[(i + 1) % NRING][1];

	ring_tid[i] = tid();
	for (int r = 0; r < ROUNDS; r++) {
		int tok;
		if (read(in, &tok, sizeof(tok)) != sizeof(tok))
			return (void *)1;
		if (i == NRING - 1)
			tok++;
		if (write(out, &tok, sizeof(tok)) != sizeof(tok))
			return (void *)1;
		pthread_mutex_lock(&m);
		counter++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

/* Returns the token's last value (ROUNDS when all went well). */
static int run_ring(void)
{
	pthread_t t[NRING];
	int tok = 0, bad = 0;

	counter = 0;
	for (int i = 0; i < NRING; i++)
		if (pipe(ring[i]) < 0)
			return -1;
	for (int i = 0; i < NRING; i++)
		pthread_create(&t[i], NULL, ring_member, (void *)(long)i);
	if (write(ring[0][1], &tok, sizeof(tok)) != sizeof(tok))
		bad = 1;
	pthread_mutex_lock(&m);
	while (counter < (long)NRING * ROUNDS)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < NRING; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	if (read(ring[0][0], &tok, sizeof(tok)) != sizeof(tok))
		bad = 1;
	for (int i = 0; i < NRING; i++) {
		close(ring[i][0]);
		close(ring[i][1]);
	}
	return bad ? -1 : tok;
}

/* ---- descriptors of the kinds a runtime holds -------------------------------- */

static int runtime_kind_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		ssize_t len;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strstr(target, "io_uring") || strstr(target, "eventfd") ||
		    strstr(target, "signalfd"))
			n++;
	}
	closedir(d);
	return n;
}

/* ---- the child ------------------------------------------------------------------ */

static volatile sig_atomic_t got_usr1;
static int intr_pipe[2];
static int ready_pipe[2];

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static void *blocked_reader(void *arg)
{
	sigset_t usr1;
	char c;
	ssize_t r;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);	/* this thread takes it */
	if (write(ready_pipe[1], "r", 1) != 1)
		return (void *)-2L;
	r = read(intr_pipe[0], &c, 1);
	return (void *)(r < 0 ? (long)errno : 0L);
}

static void say_bye(void)
{
	printf("child: atexit handler ran\n");
}

static int child(long parent_thread_tid, int parent_fds)
{
	pthread_t t;
	struct sigaction sa;
	sigset_t usr1;
	void *r;
	int tok, st, fds;
	pid_t g;
	char c;

	CHECK(tid() == getpid(), "the child's thread id %ld is not its pid %d",
	      tid(), (int)getpid());
	fds = runtime_kind_fds();
	CHECK(fds >= 0 && fds <= parent_fds, "the child holds %d io_uring/event/signal "
	      "fds, the parent %d", fds, parent_fds);
	if (getenv("TP_FORKRUN_FDS"))
		system("ls -l /proc/$PPID/fd >&2");
	tok = run_ring();
	CHECK(tok == ROUNDS, "the child's thread ring ended at %d, not %d", tok, ROUNDS);
	printf("child: thread ring %d rounds\n", tok);
	CHECK((ring_tid[0] >= VIRTUAL_TID) == (parent_thread_tid >= VIRTUAL_TID),
	      "the child's threads are not of the parent's kind (tids %ld and %ld)",
	      ring_tid[0], parent_thread_tid);

	/* a signal from the parent interrupts a thread's blocked read */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);	/* the reader alone takes it */
	if (pipe(intr_pipe) < 0 || pipe(ready_pipe) < 0)
		return 1;
	pthread_create(&t, NULL, blocked_reader, NULL);
	if (read(ready_pipe[0], &c, 1) != 1)
		return 1;
	printf("child: reader blocked\n");
	fflush(stdout);
	if (kill(getppid(), SIGUSR2) < 0)	/* "send it now" */
		return 1;
	pthread_join(t, &r);
	signal(SIGUSR1, SIG_IGN);	/* the parent stops sending when we exit */
	CHECK((long)r == EINTR && got_usr1, "the blocked read ended with %ld, handler %d",
	      (long)r, (int)got_usr1);
	printf("child: read interrupted (%s)\n", (long)r == EINTR ? "EINTR" : "?");

	fflush(stdout);
	g = fork();
	if (g == 0) {
		tok = run_ring();
		_exit(tok == ROUNDS && tid() == getpid() ? 7 : 1);
	}
	CHECK(g > 0, "fork in the child: %s", strerror(errno));
	CHECK(waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 7,
	      "the grandchild ended with status %#x", st);
	printf("child: grandchild exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	atexit(say_bye);
	exit(tp_failures ? 1 : 5);
}

/* ---- the parent ------------------------------------------------------------------ */

static int rd[NREAD][2];
static long parent_tid;
static int parent_fds;
static volatile sig_atomic_t go_signal;

static void *reader(void *arg)
{
	int i = (int)(long)arg;
	char c;

	return (void *)(long)(read(rd[i][0], &c, 1) == 1 ? 0 : 1);
}

static void on_usr2(int sig)
{
	(void)sig;
	go_signal = 1;
}

static void *forker(void *arg)
{
	pid_t pid;

	(void)arg;
	parent_tid = tid();
	parent_fds = runtime_kind_fds();
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(child(parent_tid, parent_fds));
	return (void *)(long)pid;
}

int main(void)
{
	pthread_t t[NREAD], f;
	struct sigaction sa;
	sigset_t usr2, old;
	void *r;
	pid_t pid;
	int st = 0;

	setvbuf(stdout, NULL, _IOFBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, &old);
	for (int i = 0; i < NREAD; i++) {
		if (pipe(rd[i]) < 0)
			return 1;
		pthread_create(&t[i], NULL, reader, (void *)(long)i);
	}
	pthread_create(&f, NULL, forker, NULL);
	pthread_join(f, &r);
	pid = (pid_t)(long)r;
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid <= 0)
		return 1;
	/* the child asks for its signal with SIGUSR2 */
	while (!go_signal)
		sigsuspend(&old);
	/* until the child is done: a signal that lands before its reader
	 * sits in read() is taken by the handler and interrupts nothing */
	for (int i = 0; i < 1000; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		CHECK(w >= 0, "waitpid: %s", strerror(errno));
		if (w != 0)
			break;
		kill(pid, SIGUSR1);
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5, "the child ended with status %#x", st);
	for (int i = 0; i < NREAD; i++) {
		if (write(rd[i][1], "x", 1) != 1)
			tp_failed();
		pthread_join(t[i], &r);
		CHECK(r == NULL, "reader %d failed", i);
	}
	printf("parent: child exit %d, %d readers joined\n",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1, NREAD);
	return tp_failures ? 1 : 0;
}
