#!/usr/bin/env bash
# t_trace_emit: `xsc trace --emit N` prints a C array of struct xsc_mcall
# for a candidate; compile it with a tiny interpreter (below) that runs
# the calls with plain syscall(2), feeding results forward as fwd[] says,
# and check that it does what the traced program did: copy a file.
# xsc-test: timeout=60
set -u
x=$(cd "$1" && pwd)/tools/trace/xsc-trace
cc=${CC:-cc}
command -v $cc >/dev/null || { echo "SKIP: no C compiler"; exit 77; }
[ -x "$x" ] || { echo "FAIL: $x not built"; exit 1; }
d=$(mktemp -d /tmp/xsc-trace-emit.XXXXXX)
trap 'rm -rf "$d"' EXIT
cd "$d"

# The traced program: 20 x (open in, open out, read, write, close, close).
cat >prog.c <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	static char buf[4096];
	for (int i = 0; i < 20 && argc == 3; i++) {
		int a = open(argv[1], O_RDONLY);
		int b = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ssize_t n = read(a, buf, sizeof(buf));
		if (a < 0 || b < 0 || n <= 0 || write(b, buf, n) != n)
			return 1;
		close(a);
		close(b);
	}
	return 0;
}
C
# The interpreter: a multi-call executor in a dozen lines.
cat >interp.c <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "chain.h"
static int find(long nr, int from)
{
	for (int i = from; i < XSC_CHAIN1_LEN; i++)
		if (xsc_chain1[i].nr == nr)
			return i;
	return -1;
}
int main(void)
{
	long res[XSC_CHAIN1_LEN];
	int r = find(SYS_read, 0), w = find(SYS_write, 0);
	for (int i = 0; i < XSC_CHAIN1_LEN; i++) {
		struct xsc_mcall *m = &xsc_chain1[i];
		long a[6];
		for (int k = 0; k < 6; k++)
			a[k] = m->fwd[k] >= 0 ? res[m->fwd[k]] : m->args[k];
		res[i] = syscall(m->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (res[i] < 0)
			res[i] = -errno;
		if (m->check && res[i] < 0) {
			fprintf(stderr, "call %d (nr %ld) failed: %s\n", i, m->nr,
				strerror((int)-res[i]));
			return 1;
		}
	}
	/* The chain must carry the dependencies found in the trace. */
	if (xsc_chain1[0].nr != SYS_openat || r < 0 || w < 0 ||
	    xsc_chain1[r].fwd[0] != 0 || xsc_chain1[w].fwd[2] != r ||
	    xsc_chain1[w].fwd[0] != 1 || res[w] != res[r] || !XSC_CHAIN1_LOOP) {
		fprintf(stderr, "unexpected chain (read %d, write %d)\n", r, w);
		return 1;
	}
	printf("chain of %d calls copied %ld bytes\n", XSC_CHAIN1_LEN, res[w]);
	return 0;
}
C
$cc -O1 -o prog prog.c || exit 1
head -c 1000 /dev/urandom >in
"$x" -o chain.h --emit 1 -- ./prog "$d/in" "$d/out" || { echo "FAIL: xsc trace --emit"; exit 1; }
cat chain.h
$cc -std=gnu11 -Wall -Wextra -Werror -o interp interp.c || { echo "FAIL: emitted chain does not compile"; exit 1; }
rm -f out
./interp || { echo "FAIL: chain run"; exit 1; }
cmp in out || { echo "FAIL: chain did not copy the file"; exit 1; }
# A candidate that does not exist is an error.
"$x" -o /dev/null --emit 99 -- ./prog "$d/in" "$d/out" 2>err && { echo "FAIL: --emit 99 accepted"; exit 1; }
grep -q 'no candidate 99' err || { echo "FAIL: --emit 99 message"; cat err; exit 1; }
echo "t_trace_emit: ok"
