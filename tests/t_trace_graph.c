/*
 * t_trace_graph: xsc trace's analysis on synthetic traces with known
 * graphs: exact edge weights, regions and loops (Figure 6), argument
 * dependencies, value profiles, recommendations, threads kept apart, and
 * strace-log details (unfinished/resumed, malformed lines, outcome).
 * xsc-test: timeout=30
 */
#include "testlib.h"
#include "tracei.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>

static void feed(struct xt_trace *t, const char *log)
{
	FILE *f = fmemopen((void *)log, strlen(log), "r");

	CHECK(f);
	CHECK_EQ(xt_strace_read(t, f), 0);
	fclose(f);
}

static int build(struct xt_graph *g, struct xt_trace *t, struct xt_cand **c)
{
	struct xt_clopt o = { .min_weight = 2, .max_cands = 50 };
	int nc;

	CHECK_EQ(xt_graph_build(g, t), 0);
	nc = xt_cluster(g, &o, c);
	CHECK_GE(nc, 0);
	return nc;
}

static void check_w(struct xt_graph *g, const char *a, const char *b,
		    uint64_t w)
{
	uint64_t got = xt_graph_weight_l(g, a, b);

	if (got != w) {
		fprintf(stderr, "edge %s -> %s: weight %llu, want %llu\n", a, b,
			(unsigned long long)got, (unsigned long long)w);
		exit(1);
	}
}

/* The paper's Figure 5 copy program: open, creat, 5 x (read, write), the
 * final read returning 0, two closes. */
static void test_copy_loop(void)
{
	struct xt_trace t;
	struct xt_graph g;
	struct xt_cand *c;
	char log[8192];
	int n = 0, nc;

	n += sprintf(log + n, "100 10:00:00.000001 openat(AT_FDCWD, \"/in\", O_RDONLY) = 3 <0.000010>\n");
	n += sprintf(log + n, "100 10:00:00.000002 creat(\"/out\", 0666) = 4 <0.000010>\n");
	for (int i = 0; i < 5; i++) {
		n += sprintf(log + n, "100 10:00:00.0001%02d read(3, \"abc\"..., 4096) = 4096 <0.000005>\n", i);
		n += sprintf(log + n, "100 10:00:00.0002%02d write(4, \"abc\"..., 4096) = 4096 <0.000007>\n", i);
	}
	n += sprintf(log + n, "100 10:00:00.000300 read(3, \"\", 4096) = 0 <0.000003>\n");
	n += sprintf(log + n, "100 10:00:00.000301 close(3) = 0 <0.000001>\n");
	n += sprintf(log + n, "100 10:00:00.000302 close(4) = 0 <0.000001>\n");
	n += sprintf(log + n, "100 10:00:00.000303 exit_group(0) = ?\n");
	n += sprintf(log + n, "100 10:00:00.000304 +++ exited with 0 +++\n");
	xt_trace_init(&t);
	feed(&t, log);
	CHECK_EQ(t.n, 16);
	CHECK_EQ(t.nbad, 0);
	CHECK_EQ(t.exited, 1);
	CHECK_EQ(t.status, 0);
	CHECK_EQ(t.ev[2].dur_ns, 5000);
	nc = build(&g, &t, &c);
	CHECK_EQ(g.nnodes, 7);
	CHECK_EQ(g.nedges, 7);
	check_w(&g, "openat(cwd,O_RDONLY)", "creat()", 1);
	check_w(&g, "creat()", "read(3:file)", 1);
	check_w(&g, "read(3:file)", "write(4:file)", 5);
	check_w(&g, "write(4:file)", "read(3:file)", 5);
	check_w(&g, "read(3:file)", "close(3:file)", 1);
	check_w(&g, "close(3:file)", "close(4:file)", 1);
	check_w(&g, "close(4:file)", "exit_group()", 1);
	check_w(&g, "write(4:file)", "write(4:file)", 0);
	CHECK_EQ(nc, 1);
	CHECK_EQ(c[0].loop, 1);
	CHECK_EQ(c[0].len, 2);
	CHECK_EQ(c[0].node[0], xt_graph_node(&g, "read(3:file)"));
	CHECK_EQ(c[0].occ, 1);
	CHECK_EQ(c[0].iters, 5);
	CHECK_EQ(c[0].calls, 11);
	CHECK_EQ(c[0].saved, 10);
	CHECK_EQ(c[0].ndep, 1);		/* write's length is read's result */
	CHECK_EQ(c[0].dep[0].call, 1);
	CHECK_EQ(c[0].dep[0].arg, 2);
	CHECK_EQ(c[0].dep[0].from, 0);
	CHECK(strstr(c[0].rec, "copy_file_range"));
	CHECK_EQ(c[0].val[0].call, 0);	/* read's size: always 4096 */
	CHECK_EQ(c[0].val[0].arg, 2);
	CHECK_EQ(c[0].val[0].val[0], 4096);
	CHECK_EQ(c[0].val[0].cnt[0], 5);
	free(c);
	xt_graph_free(&g);
	xt_trace_free(&t);
}

static void push(struct xt_trace *t, int tid, int nr, long a0, long a2,
		 long ret)
{
	struct xt_event *e = xt_trace_push(t);

	CHECK(e);
	e->tid = tid;
	e->nr = nr;
	e->args[0] = a0;
	e->args[1] = 0x1000;
	e->args[2] = a2;
	e->ret = ret;
	if (nr == SYS_openat)
		e->text[1] = xt_trace_str(t, "/etc/x", 6);
}

/* A chain open -> fstat -> read -> close, six times, separated by three
 * different calls so no loop closes: descriptor dependencies, fd kinds
 * from paths, and threads that never share edges. */
static void test_chain_and_threads(void)
{
	static const int sep[3] = { SYS_getpid, SYS_getuid, SYS_getgid };
	struct xt_trace t;
	struct xt_graph g;
	struct xt_cand *c;
	int nc;

	xt_trace_init(&t);
	for (int i = 0; i < 6; i++) {
		push(&t, 7, SYS_openat, AT_FDCWD, O_RDONLY, 5);
		push(&t, 8, SYS_getppid, 0, 0, 1);	/* another thread */
		push(&t, 7, SYS_fstat, 5, 0, 0);
		push(&t, 7, SYS_read, 5, 512, 100 + i);
		push(&t, 7, SYS_close, 5, 0, 0);
		push(&t, 7, sep[i % 3], 0, 0, 1);
	}
	nc = build(&g, &t, &c);
	CHECK_EQ(g.nthr, 2);
	check_w(&g, "openat(cwd,O_RDONLY)", "fstat(5:file)", 6);
	check_w(&g, "fstat(5:file)", "read(5:file)", 6);
	check_w(&g, "read(5:file)", "close(5:file)", 6);
	check_w(&g, "close(5:file)", "getpid()", 2);
	check_w(&g, "getppid()", "getppid()", 5);
	check_w(&g, "openat(cwd,O_RDONLY)", "getppid()", 0);
	CHECK_GE(nc, 2);
	CHECK_EQ(c[0].loop, 0);
	CHECK_EQ(c[0].len, 4);
	CHECK_EQ(c[0].occ, 6);
	CHECK_EQ(c[0].saved, 18);
	CHECK_EQ(c[0].ndep, 3);		/* fstat, read, close use open's fd */
	for (int d = 0; d < 3; d++) {
		CHECK_EQ(c[0].dep[d].call, d + 1);
		CHECK_EQ(c[0].dep[d].arg, 0);
		CHECK_EQ(c[0].dep[d].from, 0);
	}
	CHECK_EQ(c[1].loop, 1);		/* getppid repeated in thread 8 */
	CHECK_EQ(c[1].saved, 5);
	CHECK(strstr(c[1].kind, "multi-call"));
	free(c);
	xt_graph_free(&g);
	xt_trace_free(&t);
}

/* strace details: interleaved threads, unfinished/resumed, pipes,
 * malformed lines reported with their number, a killed program. */
static void test_strace_details(void)
{
	static const char log[] =
		"300  11:00:00.000001 pipe2([3, 4], O_CLOEXEC) = 0 <0.000004>\n"
		"300  11:00:00.000002 read(3,  <unfinished ...>\n"
		"[pid   301] 11:00:00.000003 write(4, \"hi\", 2) = 2 <0.000002>\n"
		"300  11:00:00.000004 <... read resumed>\"hi\", 64) = 2 <0.000003>\n"
		"this is not a system call\n"
		"300  11:00:00.000005 --- SIGSEGV {si_signo=SIGSEGV} ---\n"
		"300  11:00:00.000006 openat(AT_FDCWD, \"/nope\", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000002>\n"
		"301  11:00:00.000007 close(4 = 0\n"
		"300  11:00:00.000008 +++ killed by SIGSEGV (core dumped) +++\n";
	struct xt_trace t;
	struct xt_graph g;
	struct xt_cand *c;

	xt_trace_init(&t);
	feed(&t, log);
	CHECK_EQ(t.n, 4);
	CHECK_EQ(t.nbad, 2);
	CHECK(strncmp(t.msgs[0], "line 5:", 7) == 0);
	CHECK(strncmp(t.msgs[1], "line 8:", 7) == 0);
	CHECK_EQ(t.ev[2].nr, SYS_read);		/* completion order */
	CHECK_EQ(t.ev[2].args[2], 64);
	CHECK_EQ(t.ev[2].ret, 2);
	CHECK_EQ(t.ev[3].ret, -ENOENT);
	CHECK_EQ(t.exited, 1);
	CHECK_EQ(t.signal, SIGSEGV);
	build(&g, &t, &c);
	CHECK_EQ(g.nthr, 2);
	check_w(&g, "pipe2(O_CLOEXEC)", "read(3:pipe)", 1);
	/* thread 301 shares nothing with 300: its write is an unknown fd */
	CHECK(xt_graph_node(&g, "write(4:inh)") >= 0);
	free(c);
	xt_graph_free(&g);
	xt_trace_free(&t);
}

/* A loop first seen as write -> read (tar writes its block, then reads
 * the next): reported starting at the read, so the copy is recognised. */
static void test_loop_rotation(void)
{
	struct xt_trace t;
	struct xt_graph g;
	struct xt_cand *c;
	char log[4096];
	int n = 0, nc;

	n += sprintf(log + n, "9 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3\n");
	n += sprintf(log + n, "9 openat(AT_FDCWD, \"/b\", O_WRONLY) = 4\n");
	for (int i = 0; i < 6; i++) {
		n += sprintf(log + n, "9 write(4, \"x\", 512) = 512\n");
		n += sprintf(log + n, "9 read(3, \"x\", 512) = 512\n");
	}
	xt_trace_init(&t);
	feed(&t, log);
	CHECK_EQ(t.n, 14);
	nc = build(&g, &t, &c);
	check_w(&g, "write(4:file)", "read(3:file)", 6);
	check_w(&g, "read(3:file)", "write(4:file)", 5);
	CHECK_EQ(nc, 1);
	CHECK_EQ(c[0].loop, 1);
	CHECK_EQ(c[0].node[0], xt_graph_node(&g, "read(3:file)"));
	CHECK_EQ(c[0].iters, 5);
	CHECK_EQ(c[0].calls, 12);
	CHECK(strstr(c[0].rec, "copy_file_range"));
	free(c);
	xt_graph_free(&g);
	xt_trace_free(&t);
}

static void test_table(void)
{
	CHECK_EQ(xt_sys_nr("read"), SYS_read);
	CHECK_EQ(xt_sys_nr("io_uring_enter"), SYS_io_uring_enter);
	CHECK_EQ(xt_sys_nr("no_such_call"), -ENOENT);
	CHECK(strcmp(xt_sys_name(SYS_write), "write") == 0);
	CHECK(strcmp(xt_sys_info(SYS_read)->sig, "fpn---") == 0);
	CHECK_EQ(xt_sys_info(SYS_openat)->newfd, XT_FD_FILE);
}

int main(void)
{
	int fds = count_fds();

	test_table();
	test_copy_loop();
	test_chain_and_threads();
	test_strace_details();
	test_loop_rotation();
	CHECK_EQ(count_fds(), fds);
	printf("t_trace_graph: ok\n");
	return 0;
}
