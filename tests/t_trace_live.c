/*
 * t_trace_live: record real programs with xsc trace's ptrace recorder and
 * compare with the known syscall sequences.  This binary is its own
 * tracee (/proc/self/exe with a mode argument):
 *   copy IN OUT   the paper's copy loop (read 4096 / write n), exit 7
 *   threads       two threads x 100 getppid, a forked child x 100 getpgrp
 * Checked: exit status kept, exact edge weights of the known parts, the
 * read->write loop found with its dependency and recommendation, threads
 * and children recorded separately, and both recording mechanisms.
 * xsc-test: timeout=60
 */
#include "testlib.h"
#include "tracei.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCKS 10
#define TAIL 100
#define REPS 100

static int child_copy(const char *in, const char *out)
{
	char buf[4096];
	int a = open(in, O_RDONLY), b = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (a < 0 || b < 0)
		return 1;
	while ((n = read(a, buf, sizeof(buf))) > 0)
		if (write(b, buf, n) != n)
			return 1;
	close(a);
	close(b);
	return 7;
}

static void *spin(void *arg)
{
	for (int i = 0; i < REPS; i++)
		syscall(SYS_getppid);
	return arg;
}

static int child_threads(void)
{
	pthread_t t[2];
	pid_t pid;
	int st;

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, spin, NULL))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < REPS; i++)
			syscall(SYS_getpgrp);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return 0;
}

static void record(struct xt_trace *t, char **argv, int seccomp)
{
	struct xt_recopt o = { .seccomp = seccomp, .progress = -1 };

	xt_trace_init(t);
	CHECK_EQ(xt_record(t, argv, &o), 0);
	CHECK_EQ(t->exited, 1);
	CHECK_EQ(t->signal, 0);
}

/* The fd an openat of `path` returned in the trace. */
static long fd_of(const struct xt_trace *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].nr == SYS_openat &&
		    strcmp(xt_trace_text(t, t->ev[i].text[1]), path) == 0)
			return t->ev[i].ret;
	return -1;
}

static void test_copy(int seccomp)
{
	char in[256], out[256], rd[64], wr[64];
	char *argv[] = { "/proc/self/exe", "copy", in, out, NULL };
	struct xt_clopt co = { .min_weight = 2 };
	struct xt_trace t;
	struct xt_graph g;
	struct xt_cand *c;
	FILE *f;
	int nc, top = -1;

	snprintf(in, sizeof(in), "%s/in", scratch_dir());
	snprintf(out, sizeof(out), "%s/out", scratch_dir());
	f = fopen(in, "w");
	CHECK(f);
	for (int i = 0; i < BLOCKS * 4096 + TAIL; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	xt_trace_init(&t);
	{
		struct xt_recopt o = { .seccomp = seccomp, .progress = -1 };
		CHECK_EQ(xt_record(&t, argv, &o), 0);
	}
	CHECK_EQ(t.exited, 1);
	CHECK_EQ(t.status, 7);		/* exit status preserved */
	CHECK_GE(fd_of(&t, in), 0);
	snprintf(rd, sizeof(rd), "read(%ld:file)", fd_of(&t, in));
	snprintf(wr, sizeof(wr), "write(%ld:file)", fd_of(&t, out));
	CHECK_EQ(xt_graph_build(&g, &t), 0);
	/* BLOCKS + 1 reads with data, each followed by its write, and all
	 * but the last write followed by the next read. */
	CHECK_EQ(xt_graph_weight_l(&g, rd, wr), BLOCKS + 1);
	CHECK_EQ(xt_graph_weight_l(&g, wr, rd), BLOCKS + 1);
	nc = xt_cluster(&g, &co, &c);
	for (int i = 0; i < nc && top < 0; i++)
		if (c[i].node[0] == xt_graph_node(&g, rd))
			top = i;
	CHECK_GE(top, 0);
	CHECK_EQ(c[top].loop, 1);
	CHECK_EQ(c[top].iters, BLOCKS + 1);
	CHECK_EQ(c[top].calls, 2 * BLOCKS + 3);
	CHECK_EQ(c[top].ndep, 1);
	CHECK_EQ(c[top].dep[0].arg, 2);
	CHECK(strstr(c[top].rec, "copy_file_range"));
	free(c);
	xt_graph_free(&g);
	xt_trace_free(&t);
}

static void test_threads(int seccomp)
{
	char *argv[] = { "/proc/self/exe", "threads", NULL };
	struct xt_trace t;
	struct xt_graph g;

	record(&t, argv, seccomp);
	CHECK_EQ(t.status, 0);
	CHECK_EQ(xt_graph_build(&g, &t), 0);
	CHECK_GE(g.nthr, 4);		/* main, two threads, the child */
	CHECK_GE(g.nproc, 2);
	/* 99 successions per thread; none across threads */
	CHECK_EQ(xt_graph_weight_l(&g, "getppid()", "getppid()"), 2 * (REPS - 1));
	CHECK_EQ(xt_graph_weight_l(&g, "getpgrp()", "getpgrp()"), REPS - 1);
	CHECK_EQ(g.nodes[xt_graph_node(&g, "getppid()")].count, 2 * REPS);
	xt_graph_free(&g);
	xt_trace_free(&t);
}

int main(int argc, char **argv)
{
	int fds;

	if (argc == 4 && strcmp(argv[1], "copy") == 0)
		return child_copy(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "threads") == 0)
		return child_threads();
	/* LeakSanitizer cannot run in a traced process: off in the children
	 * of a sanitized build (read at their start, not ours). */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	fds = count_fds();
	for (int seccomp = 0; seccomp < 2; seccomp++) {
		test_copy(seccomp);
		test_threads(seccomp);
	}
	CHECK_EQ(count_fds(), fds);
	printf("t_trace_live: ok\n");
	return 0;
}
