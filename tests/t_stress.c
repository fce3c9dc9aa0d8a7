/* Stress: 1,000,000 calls (fewer under sanitizers) in random batch sizes
 * and random mixes; every completion is accounted for and checked against
 * an expectation computed independently; no fd or memory leak.
 * xsc-test: per-backend
 * xsc-test: timeout=300 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define FILE_SIZE 65536
enum { K_PPID, K_PREAD, K_FSTAT, K_BADF, K_NOP, K_ENOSYS, K_WRITE, K_N };

struct op {
	int kind;
	long off;
	char buf[16];
	struct stat st;
};

static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned char pattern(long off) { return (unsigned char)(off * 7 + 3); }

int main(void)
{
	long total = test_sanitized() ? 150000 : 1000000, done = 0, posted = 0;
	int fd, nul, fds0, ids[512];
	unsigned char data[FILE_SIZE];
	struct op *ops = calloc(512, sizeof(*ops));
	struct xsc *x;
	struct xsc_stats st;
	char path[128];
	long rss0, ppid = getppid();

	snprintf(path, sizeof(path), "%s/data", scratch_dir());
	for (long i = 0; i < FILE_SIZE; i++)
		data[i] = pattern(i);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, FILE_SIZE), FILE_SIZE);
	nul = open("/dev/null", O_WRONLY);
	fds0 = count_fds();
	CHECK_EQ(xsc_open(&x, NULL), 0);
	rss0 = rss_kib();
	while (done < total) {
		int b = 1 + (int)(next() % 300);
		if (b > total - done)
			b = (int)(total - done);
		for (int i = 0; i < b; i++) {
			struct op *o = &ops[i];
			o->kind = (int)(next() % K_N);
			o->off = (long)(next() % (FILE_SIZE - 16));
			memset(o->buf, 0, sizeof(o->buf));
			long a[6] = { 0 };
			long nr = 0;
			switch (o->kind) {
			case K_PPID: nr = SYS_getppid; break;
			case K_PREAD: nr = SYS_pread64; a[0] = fd; a[1] = (long)o->buf;
				a[2] = 16; a[3] = o->off; break;
			case K_FSTAT: nr = SYS_fstat; a[0] = fd; a[1] = (long)&o->st; break;
			case K_BADF: nr = SYS_close; a[0] = 100000 + i; break;
			case K_NOP: nr = XSC_NR_NOP; break;
			case K_ENOSYS: nr = 1000; break;
			case K_WRITE: nr = SYS_write; a[0] = nul; a[1] = (long)o->buf;
				a[2] = 1 + i % 16; break;
			}
			ids[i] = xsc_post_args(x, nr, a, (uint64_t)i);
			CHECK_GE(ids[i], 0);
			posted++;
		}
		xsc_flush(x);
		CHECK_GE(xsc_wait(x, (unsigned)b), b);
		for (int i = 0; i < b; i++) {
			struct op *o = &ops[xsc_tag(x, ids[i])];
			long ret;
			CHECK_EQ(xsc_result(x, ids[i], &ret), 0);
			switch (o->kind) {
			case K_PPID: CHECK_EQ(ret, ppid); break;
			case K_PREAD:
				CHECK_EQ(ret, 16);
				for (int k = 0; k < 16; k++)
					CHECK_EQ((unsigned char)o->buf[k], pattern(o->off + k));
				break;
			case K_FSTAT: CHECK_EQ(ret, 0); CHECK_EQ(o->st.st_size, FILE_SIZE); break;
			case K_BADF: CHECK_EQ(ret, -EBADF); break;
			case K_NOP: CHECK_EQ(ret, 0); break;
			case K_ENOSYS: CHECK_EQ(ret, -ENOSYS); break;
			case K_WRITE: CHECK_EQ(ret, 1 + i % 16); break;
			}
			CHECK_EQ(xsc_release(x, ids[i]), 0);
		}
		done += b;
	}
	xsc_stats_get(x, &st);
	CHECK_EQ(st.posted, (uint64_t)posted);
	CHECK_EQ(st.completed, (uint64_t)posted);
	CHECK_EQ(xsc_poll(x), 0);
	printf("%ld calls, %llu flushes, %llu crossings, rss %ld -> %ld KiB\n", done,
	       (unsigned long long)st.flushes, (unsigned long long)st.crossings,
	       rss0, rss_kib());
	/* nothing grows with the number of calls */
	CHECK(rss_kib() - rss0 < 4096);
	CHECK_EQ(xsc_close(x), 0);
	CHECK_EQ(count_fds(), fds0);
	close(fd);
	close(nul);
	free(ops);
	return 0;
}
