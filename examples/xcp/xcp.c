/*
 * xcp - copy files with one of the copy strategies of the multi-call and
 * WSC papers (strategies.h), then verify the copies byte for byte.
 *
 *   xcp [-s STRATEGY] [-b BLOCK] [-p auto|uring|worker|inline] [-n] SRC DST
 *   xcp [-s STRATEGY] [-b BLOCK] ... SRC... DIR
 *
 * -n skips the verification.  Exit 0 on success, 1 on a copy error or a
 * mismatch, 2 on bad usage.
 */
#include <stdbool.h>
#include <stdio.h>

#include "strategies.h"

static int usage(void)
{
	fprintf(stderr, "usage: xcp [-s STRATEGY] [-b BLOCK] [-p PATH] [-n] SRC DST\n"
		"       xcp [-s STRATEGY] [-b BLOCK] [-p PATH] [-n] SRC... DIR\n"
		"strategies:");
	for (int i = 0; i < XCP_N; i++)
		fprintf(stderr, " %s", xcp_names[i]);
	fprintf(stderr, "\npaths: auto uring worker inline (multi-call strategies)\n");
	return 2;
}

/* 0 if the files are equal, else 1 (with a message). */
static int verify(const char *a, const char *b)
{
	static char ba[1 << 16], bb[1 << 16];
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY), ret = 1;
	long na, nb, off = 0;

	if (fa < 0 || fb < 0)
		goto out;
	do {
		na = read(fa, ba, sizeof(ba));
		nb = read(fb, bb, sizeof(bb));
		if (na != nb || na < 0 || memcmp(ba, bb, (size_t)na)) {
			fprintf(stderr, "xcp: %s and %s differ near byte %ld\n", a, b, off);
			goto out;
		}
		off += na;
	} while (na > 0);
	ret = 0;
out:
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret;
}

static int find(const char *name, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* Destination paths: DST itself, or DIR/basename(SRC). */
static char **targets(char **src, int nf, const char *last)
{
	struct stat st;
	bool dir = stat(last, &st) == 0 && S_ISDIR(st.st_mode);
	char **d = calloc((size_t)nf, sizeof(char *));

	if (!d || (!dir && nf > 1))
		return free(d), NULL;
	for (int i = 0; i < nf; i++) {
		const char *base = strrchr(src[i], '/');
		size_t len = strlen(last) + strlen(src[i]) + 2;
		d[i] = malloc(len);
		if (dir)
			snprintf(d[i], len, "%s/%s", last, base ? base + 1 : src[i]);
		else
			snprintf(d[i], len, "%s", last);
	}
	return d;
}

int main(int argc, char **argv)
{
	static const char *const paths[] = { "auto", "uring", "worker", "inline" };
	int s = XCP_MCLOOP, path = XSC_MC_AUTO, opt, ret = 0, nf;
	long bs = 4096;
	bool check = true;
	struct xsc_config cfg;
	struct xsc *x;

	while ((opt = getopt(argc, argv, "s:b:p:n")) != -1) {
		switch (opt) {
		case 's': s = find(optarg, xcp_names, XCP_N); break;
		case 'b': bs = atol(optarg); break;
		case 'p': path = find(optarg, paths, 4); break;
		case 'n': check = false; break;
		default: return usage();
		}
	}
	nf = argc - optind - 1;
	if (s < 0 || path < 0 || bs <= 0 || bs > (1L << 30) || nf < 1 || nf > 200)
		return usage();
	char **dst = targets(argv + optind, nf, argv[argc - 1]);
	if (!dst) {
		fprintf(stderr, "xcp: with several sources the target must be a directory\n");
		return 2;
	}
	xsc_config_init(&cfg);
	cfg.batch_threshold = 8;	/* WSC's threshold M */
	if (xsc_open(&x, &cfg) < 0) {
		fprintf(stderr, "xcp: cannot open an xsc handle\n");
		return 1;
	}
	ret = xcp_copy(s, x, (const char *const *)(argv + optind),
		       (const char *const *)dst, nf, bs, path);
	if (ret < 0)
		fprintf(stderr, "xcp: %s: %s\n", xcp_names[s], strerror(-ret));
	for (int i = 0; ret == 0 && check && i < nf; i++)
		ret = verify(argv[optind + i], dst[i]);
	xsc_close(x);
	for (int i = 0; i < nf; i++)
		free(dst[i]);
	free(dst);
	return ret ? 1 : 0;
}
