/*
 * run.c - `xsc run [options] -- program args...`
 *
 * Starts an unmodified dynamically linked program with libxsc-preload.so
 * (transparent mode, src/preload/preload.c).  The program replaces this process, so
 * its exit status and fatal signals are what the caller sees.  A program
 * the shim cannot handle (statically linked, not x86-64) runs natively with
 * a one-line warning, never half-intercepted.  The host profile is loaded
 * (measured and cached, the first time) before the exec, so the program
 * and every program it starts read it from the cache.
 */
#include <elf.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostprof.h"

#ifndef XSC_REL_LIBDIR
#define XSC_REL_LIBDIR "lib"
#endif

static const char run_usage[] =
	"usage: xsc run [options] [--] program [args...]\n"
	"  Runs an unmodified pthread program on xsc threads: its threads become\n"
	"  fibers on one kernel thread per core and its blocking system calls\n"
	"  exception-less entries (libxsc-preload.so; see docs/transparent.md).\n"
	"  -t, --threads N     kernel threads (vcpus); default: one per core\n"
	"  -b, --backend B     auto|uring|sqpoll|worker|inline (XSC_BACKEND)\n"
	"  -v, --verbose       print start-up facts and call counts at exit\n"
	"      --stats=FILE    write -v's counts at exit as JSON to FILE.PID, one\n"
	"                      file per process (forked children too), each written\n"
	"                      whole (FILE.PID.tmp, renamed); env XSC_STATS=FILE\n"
	"      --native        run the program without the shim (for comparisons)\n"
	"Environment: XSC_PRELOAD=path overrides where the library is found;\n"
	"  XSC_HOST_PROFILE=FILE forces the host profile (see xsc info).\n";

static int is_file(const char *p)
{
	return access(p, R_OK) == 0;
}

/* Also used by `xsc bench transparent` (bench/http.c). */
int xsc_run_find_preload(char *out, size_t n)
{
	const char *env = getenv("XSC_PRELOAD");
	char exe[PATH_MAX], *dir;
	ssize_t len;

	if (env && *env) {
		snprintf(out, n, "%s", env);
		return is_file(out) ? 0 : -1;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0)
		return -1;
	exe[len] = 0;
	dir = dirname(exe);
	snprintf(out, n, "%s/libxsc-preload.so", dir);	/* build tree */
	if (is_file(out))
		return 0;
	snprintf(out, n, "%s/../%s/libxsc-preload.so", dir, XSC_REL_LIBDIR);
	return is_file(out) ? 0 : -1;
}

/* The file execvp would run, or NULL. */
static int resolve(const char *prog, char *out, size_t n)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		snprintf(out, n, "%s", prog);
		return access(out, X_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t l = end ? (size_t)(end - path) : strlen(path);
		snprintf(out, n, "%.*s/%s", (int)l, l ? path : ".", prog);
		if (access(out, X_OK) == 0)
			return 0;
		path += l + (end != NULL);
	}
	return -1;
}

/* NULL when the shim can run it; else why not. */
static const char *unsupported(const char *file)
{
	Elf64_Ehdr eh;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	const char *why = NULL;

	if (fd < 0)
		return NULL;	/* execvp reports it */
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		close(fd);
		return NULL;	/* a script: its interpreter gets the shim */
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		why = "not an x86-64 program";
	} else {
		bool interp = false;
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP)
				interp = true;
		}
		if (!interp)
			why = "statically linked (the preload library cannot be loaded)";
	}
	close(fd);
	return why;
}

static void prepend_env(const char *name, const char *val, const char *sep)
{
	const char *old = getenv(name);
	char *buf;

	if (!old || !*old) {
		setenv(name, val, 1);
		return;
	}
	if (asprintf(&buf, "%s%s%s", val, sep, old) < 0)
		return;
	setenv(name, buf, 1);
	free(buf);
}

/* XSC_STATS for --stats=FILE: an absolute path, so a program that
 * changes its directory writes where the command line meant. */
static int set_stats(const char *file)
{
	char cwd[PATH_MAX], *abs;

	if (!*file) {
		fprintf(stderr, "xsc run: --stats needs a file name\n");
		return -1;
	}
	if (file[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
		setenv("XSC_STATS", file, 1);
		return 0;
	}
	if (asprintf(&abs, "%s/%s", cwd, file) < 0)
		return -1;
	setenv("XSC_STATS", abs, 1);
	free(abs);
	return 0;
}

int xsc_run_main(int argc, char **argv)
{
	char lib[PATH_MAX], file[PATH_MAX];
	const char *why;
	bool native = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s", run_usage);
			return 0;
		} else if ((!strcmp(a, "-t") || !strcmp(a, "--threads")) && i + 1 < argc) {
			char *end;
			long n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > 1024) {
				fprintf(stderr, "xsc run: bad thread count '%s'\n", argv[i]);
				return 2;
			}
			setenv("XSC_THREADS", argv[i], 1);
		} else if ((!strcmp(a, "-b") || !strcmp(a, "--backend")) && i + 1 < argc) {
			setenv("XSC_BACKEND", argv[++i], 1);
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			setenv("XSC_VERBOSE", "1", 1);
		} else if (!strncmp(a, "--stats=", 8) ||
			   (!strcmp(a, "--stats") && i + 1 < argc)) {
			if (set_stats(a[7] == '=' ? a + 8 : argv[++i]) < 0)
				return 2;
		} else if (!strcmp(a, "--native")) {
			native = true;
		} else if (a[0] == '-') {
			fprintf(stderr, "xsc run: unknown option '%s'\n%s", a, run_usage);
			return 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "%s", run_usage);
		return 2;
	}
	if (!native) {
		const char *err;
		if (!xsc__hostprof(&err)) {
			fprintf(stderr, "xsc run: %s\n", err);
			return 2;
		}
		if (xsc_run_find_preload(lib, sizeof(lib)) < 0) {
			fprintf(stderr, "xsc run: libxsc-preload.so not found next to "
				"the xsc binary or in ../%s (set XSC_PRELOAD)\n", XSC_REL_LIBDIR);
			return 127;
		}
		if (resolve(argv[i], file, sizeof(file)) == 0 &&
		    (why = unsupported(file)) != NULL) {
			fprintf(stderr, "xsc run: %s: %s; running it natively\n", argv[i], why);
		} else {
			prepend_env("LD_PRELOAD", lib, ":");
			/* glibc would register rseq for threads that are fibers */
			prepend_env("GLIBC_TUNABLES", "glibc.pthread.rseq=0", ":");
		}
	}
	/* the program keeps this process's id: the shim says what it has to
	 * say (a fallback, a reason to run natively) in it, not again in
	 * every program it starts (src/preload/start.c, first_process) */
	{
		char pid[24];
		snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		setenv("XSC_RUN_PID", pid, 1);
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "xsc run: %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
