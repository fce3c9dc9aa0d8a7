/* The syscall table (src/table.c) checked against itself and against the
 * tests that rely on it:
 *  - every row with an io_uring translation has its opcode and prep, and
 *    a differential case: its SYS_ name appears in tests/t_diff_fs.c,
 *    t_diff_net.c or t_diff_misc.c (a translation without one is
 *    untested against the kernel);
 *  - a done hook only with a prep; thread-bound and refused rows have no
 *    translation (they never leave the caller); an argument predicate only
 *    on rows that may go elsewhere;
 *  - the argument kinds of every described row match its argument count;
 *  - every number the C library's headers name has a row with that name.
 * Not per backend: the table is the same for all. */
#include <ctype.h>
#include <sys/syscall.h>

#include "internal.h"
#include "testlib.h"

static char *slurp(const char *name)
{
	char path[512];
	FILE *f;
	long n;
	char *b;

	snprintf(path, sizeof(path), "%s/tests/%s", XSC_SOURCE_DIR, name);
	f = fopen(path, "r");
	if (!f)
		skip("no source tree at %s (installed tests)", XSC_SOURCE_DIR);
	CHECK_EQ(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	CHECK(n > 0);
	rewind(f);
	b = malloc((size_t)n + 1);
	CHECK(b && fread(b, 1, (size_t)n, f) == (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

/* "SYS_name" as a whole token in src */
static bool mentions(const char *src, const char *name)
{
	char tok[80];
	size_t len = (size_t)snprintf(tok, sizeof(tok), "SYS_%s", name);

	for (const char *p = src; (p = strstr(p, tok)) != NULL; p += len)
		if (!isalnum((unsigned char)p[len]) && p[len] != '_')
			return true;
	return false;
}

static int kinds(const char *args)
{
	int n = *args ? 1 : 0;
	for (const char *p = args; *p; p++)
		n += *p == ',';
	return n;
}

int main(void)
{
	char *diff[3] = { slurp("t_diff_fs.c"), slurp("t_diff_net.c"), slurp("t_diff_misc.c") };
	int bad = 0, translated = 0;

	for (long nr = 0; nr < XSC_NR_MAX; nr++) {
		const struct xsc_sysdef *d = &xsc__sys[nr];
		const char *nm = d->name ? d->name : "?";
#define BAD(...) do { fprintf(stderr, "%ld %s: ", nr, nm); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); bad = 1; } while (0)
		if (d->prep) {
			translated++;
			if (!d->op[0] && nr != XSC_NR_NOP)	/* IORING_OP_NOP is 0 */
				BAD("a prep without an io_uring opcode");
			if (nr < XSC_NR_NOP &&
			    !mentions(diff[0], nm) && !mentions(diff[1], nm) && !mentions(diff[2], nm))
				BAD("translated to io_uring, but no differential case (t_diff_*.c)");
		}
		if (d->done && !d->prep)
			BAD("a done hook without a prep");
		if ((d->flags & (XSC_F_THREAD | XSC_F_REFUSE)) && (d->prep || d->bound))
			BAD("thread-bound or refused, yet translated or argument-bound");
		if ((d->flags & XSC_F_KNOWN) && d->args && d->nargs != kinds(d->args))
			BAD("%d arguments, %d kinds (\"%s\")", d->nargs, kinds(d->args), d->args);
		if (d->nargs > 6)
			BAD("%d arguments", d->nargs);
	}
	/* the C library's numbers: each has a row with its own name */
#define XSC_SYSNAME(n, nm) \
	if (!xsc__sys[n].name || strcmp(xsc__sys[n].name, #nm)) { \
		fprintf(stderr, "%d %s: no row of that name\n", n, #nm); bad = 1; }
#include "sysnames.h"
#undef XSC_SYSNAME
	for (int i = 0; i < 3; i++)
		free(diff[i]);
	if (bad)
		return 1;
	printf("ok: %d rows translated to io_uring, each with a differential case\n",
	       translated);
	return 0;
}
