/*
 * tp_rewrite.c - calls through libc's system call sites keep the kernel's
 * contract, as `xsc run` rewrites those sites into jumps
 * (src/preload/rewrite.c).  Natively this checks the kernel; under xsc run
 * the same checks, with the same output, check the rewritten sites:
 *   - registers: libc's getppid is "mov $110,%eax; syscall; ret".  It is
 *     called from assembly with every general register but rax, rcx, r11
 *     (which the syscall instruction itself clobbers), the flags, the
 *     vector registers and the 120 bytes of its red zone set to
 *     patterns; all must come back as they were, rax must be the
 *     parent's pid.  The vector registers checked: xmm0-7, those a
 *     function passes arguments in, as getppid's stub saves them (its
 *     function uses no vector state, and the ABI leaves every other
 *     vector register to the caller across a call into libc); with
 *     XSC_HW=xsaveall, where every stub saves the whole state, all of
 *     ymm0-15 (xmm0-15 without AVX).  Three times: the first call traps
 *     and rewrites the site, the others jump.
 *   - the same through sites of other shapes: syscall(), whose number
 *     comes from rdi (its own code moves the argument registers, so only
 *     the callee-saved ones are checked), and __read_nocancel ("xor
 *     %eax,%eax; syscall": its jump goes through a trampoline), reading
 *     /dev/zero; before the first thread (natively, the runtime starts
 *     with the second) and at the end, through the rewritten sites.
 *   - the same through libc's sched_yield ("mov $24,%eax; syscall; cmp"),
 *     500 times, while 4 other threads yield with their own values in
 *     every register: a switch to another thread in the middle of the
 *     call must still give this one its registers back (the flags are
 *     the cmp's, not checked there).
 *   - threads racing through a site while it is being rewritten: 8
 *     threads call getppid and take a contended mutex (glibc's futex
 *     sites) from the start, every result checked, errno untouched.
 *   - signals while a thread is inside rewritten calls: a thread calls
 *     getppid in a loop while main sends it 200 queued real-time signals;
 *     the handler calls getppid too (a rewritten site inside a handler);
 *     every result right, every signal handled once.
 *   - fork after rewriting: the child calls the rewritten getppid, and
 *     10,000 times umask, whose site the parent never used: under xsc
 *     run -v the child must not trap each of them (t_rewrite.sh reads
 *     its "still trapping" line: the child rewrites sites of its own).
 *   - code of the program's own with the same bytes is never rewritten
 *     (only libc's sites are): it is called twice and must be unchanged.
 * Prints one line per check; exit 0 when all hold.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct regs {
	uint64_t gp[12];	/* rbx rbp r12 r13 r14 r15 rdi rsi rdx r8 r9 r10 */
	uint64_t rax, flags;	/* offsets 96, 104 */
	uint8_t vec[16][32];	/* 112: ymm0-15 (xmm: the low 16 bytes) */
	uint64_t red[15];	/* 624: below the callee's stack pointer */
	uint32_t mxcsr;		/* 744: MXCSR for the call (the caller's comes
				   back after the probe) */
	uint16_t fcw;		/* 748: the x87 control word, the same */
};

/* probe_sse / probe_avx(fn, in, out): the registers of *in, a call of fn,
 * the registers after it in *out. */
int probe_sse(void *fn, const struct regs *in, struct regs *out);
int probe_avx(void *fn, const struct regs *in, struct regs *out);
__asm__(
	".macro PROBE name, load, store, width\n"
	"	.text\n"
	"	.globl \\name\n"
	"	.type \\name, @function\n"
	"\\name:\n"
	"	push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15\n"
	"	push %rdx\n"			/* out: 16(%rsp) */
	"	push %rdi\n"			/* fn: 8(%rsp) */
	"	sub $8, %rsp\n"			/* the call with rsp 16-aligned */
	"	stmxcsr (%rsp); fnstcw 4(%rsp)\n"	/* the caller's, for after */
	"	ldmxcsr 744(%rsi); fldcw 748(%rsi)\n"
	"	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	\\load 112+\\n*32(%rsi), %\\width\\n\n"
	"	.endr\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14\n"
	"	mov 624+\\i*8(%rsi), %rax; mov %rax, -136+\\i*8(%rsp)\n"
	"	.endr\n"
	"	pushq 104(%rsi); popfq\n"
	"	mov 0(%rsi), %rbx; mov 8(%rsi), %rbp; mov 16(%rsi), %r12\n"
	"	mov 24(%rsi), %r13; mov 32(%rsi), %r14; mov 40(%rsi), %r15\n"
	"	mov 48(%rsi), %rdi; mov 64(%rsi), %rdx; mov 72(%rsi), %r8\n"
	"	mov 80(%rsi), %r9; mov 88(%rsi), %r10; mov 56(%rsi), %rsi\n"
	"	call *8(%rsp)\n"
	"	pushfq\n"
	"	push %rax\n"
	"	mov 32(%rsp), %rax\n"		/* out, below flags and rax */
	"	mov %rbx, 0(%rax); mov %rbp, 8(%rax); mov %r12, 16(%rax)\n"
	"	mov %r13, 24(%rax); mov %r14, 32(%rax); mov %r15, 40(%rax)\n"
	"	mov %rdi, 48(%rax); mov %rsi, 56(%rax); mov %rdx, 64(%rax)\n"
	"	mov %r8, 72(%rax); mov %r9, 80(%rax); mov %r10, 88(%rax)\n"
	"	pop %rcx; mov %rcx, 96(%rax)\n"
	"	pop %rcx; mov %rcx, 104(%rax)\n"
	"	.irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	\\store %\\width\\n, 112+\\n*32(%rax)\n"
	"	.endr\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14\n"
	"	mov -136+\\i*8(%rsp), %rcx; mov %rcx, 624+\\i*8(%rax)\n"
	"	.endr\n"
	"	stmxcsr 744(%rax); fnstcw 748(%rax)\n"
	"	ldmxcsr (%rsp); fldcw 4(%rsp)\n"
	"	add $8, %rsp\n"
	"	pop %rdi; pop %rdx\n"
	"	pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"	.size \\name, .-\\name\n"
	".endm\n"
	"PROBE probe_sse, movdqu, movdqu, xmm\n"
	"PROBE probe_avx, vmovdqu, vmovdqu, ymm\n"
	"	.text\n");

/* status flags the call must keep: CF PF AF ZF SF OF (DF stays 0: ABI) */
#define FLAGS 0x8d5UL

/* What a probe of one libc function sets and checks. */
struct probe {
	const char *name, *version;	/* libc's symbol; version for dlvsym */
	const uint8_t *plain;		/* its first bytes, before any call */
	size_t n;
	int rounds;
	bool flags;			/* it returns right after the syscall */
	long (*expected)(void);		/* its result */
	const uint64_t *args;		/* rdi, rsi, rdx, or NULL: patterns */
	unsigned keep;			/* general registers it keeps (bit i:
					   regs.gp[i]); 0: all of them */
};

/* Calls p's function (whose first bytes must be p->plain before any call)
 * p->rounds times through the probe, with patterns in every register but
 * the arguments p->args gives; checks the result, the registers it keeps,
 * the flags where it returns right after the syscall, the vector
 * registers and the red zone. */
static int check_registers_of(const struct probe *pr, int *known)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = !libc ? NULL : pr->version ? dlvsym(libc, pr->name, pr->version) :
		   dlsym(libc, pr->name);	/* libc's own */
	const char *name = pr->name;
	int rounds = pr->rounds;
	unsigned keep = pr->keep ? pr->keep : 0xfff;
	int avx = __builtin_cpu_supports("avx"), bad = 0;
	const char *hw = getenv("XSC_HW");
	bool all = hw && strstr(hw, "xsaveall");	/* else xmm0-7 */
	struct regs in, out;
	long expect;

	if (*known < 0)		/* as it was before any call: rewriting changes it */
		*known = fn && !memcmp(fn, pr->plain, pr->n);
	if (!*known) {
		printf("registers (%s): not a plain wrapper here: not checked\n", name);
		return 0;
	}
	expect = pr->expected();
	for (int round = 0; round < rounds && !bad; round++) {
		for (int i = 0; i < 12; i++)
			in.gp[i] = 0x0101010101010101ULL * (uint64_t)(i + 1) + (uint64_t)round;
		for (int i = 0; pr->args && i < 3; i++)
			in.gp[6 + i] = pr->args[i];	/* rdi, rsi, rdx */
		in.rax = 0;
		in.flags = 0x202 | 0x1 | 0x4 | 0x80 | 0x800;	/* IF, CF, PF, SF, OF */
		/* rounding toward zero, or down, and flush-to-zero: not the
		 * runtime's own control state */
		in.mxcsr = round & 1 ? 0xff80 : 0xbf80;
		in.fcw = round & 1 ? 0x0f7f : 0x077f;
		for (int v = 0; v < 16; v++)
			for (int b = 0; b < 32; b++)
				in.vec[v][b] = (uint8_t)(v * 32 + b + round);
		for (int i = 0; i < 15; i++)
			in.red[i] = 0xfeedface00000000ULL + (uint64_t)i;
		memset(&out, 0, sizeof(out));
		(avx ? probe_avx : probe_sse)(fn, &in, &out);
		if ((long)out.rax != expect) {
			printf("registers (%s): round %d: rax %ld, expected %ld\n", name,
			       round, (long)out.rax, expect);
			bad = 1;
		}
		for (int i = 0; i < 12; i++)
			if (((keep >> i) & 1) && out.gp[i] != in.gp[i]) {
				printf("registers (%s): round %d: general register %d "
				       "changed\n", name, round, i);
				bad = 1;
			}
		if (pr->flags && (out.flags & FLAGS) != (in.flags & FLAGS)) {
			printf("registers (%s): round %d: flags %#lx, were %#lx\n", name, round,
			       (unsigned long)(out.flags & FLAGS), (unsigned long)(in.flags & FLAGS));
			bad = 1;
		}
		for (int v = 0; v < (all ? 16 : 8); v++)
			if (memcmp(out.vec[v], in.vec[v], all && avx ? 32 : 16)) {
				printf("registers (%s): round %d: vector register %d "
				       "changed\n", name, round, v);
				bad = 1;
			}
		if (out.mxcsr != in.mxcsr || out.fcw != in.fcw) {
			printf("registers (%s): round %d: MXCSR %#x, x87 control %#x, were "
			       "%#x, %#x\n", name, round, out.mxcsr, out.fcw, in.mxcsr, in.fcw);
			bad = 1;
		}
		if (memcmp(out.red, in.red, sizeof(in.red))) {
			printf("registers (%s): round %d: the red zone changed\n", name, round);
			bad = 1;
		}
	}
	if (!bad)
		printf("registers (%s): kept across %d calls\n", name, rounds);
	return bad;
}

static long parent_pid(void)
{
	return (long)getppid();
}

static long zero(void)
{
	return 0;
}

static int check_registers(void)
{
	static const uint8_t plain[8] = { 0xb8, 0x6e, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	static const struct probe pr = { "getppid", NULL, plain, 8, 3, true, parent_pid,
					 NULL, 0 };
	static int known = -1;

	return check_registers_of(&pr, &known);
}

static long sixteen(void)
{
	return 16;
}

/* Sites of other shapes: syscall(), whose number comes from a register
 * (it moves its arguments down one register and loads r9 from the
 * stack: only the callee-saved registers are its caller's to check), and
 * __read_nocancel ("xor %eax,%eax; syscall": too short for a 5-byte jump,
 * so a 2-byte jump to a trampoline in padding), reading /dev/zero. */
static int check_register_sites(void)
{
	static const uint8_t sys[3] = { 0x48, 0x89, 0xf8 };	/* mov %rdi,%rax */
	static const uint8_t rd[4] = { 0x31, 0xc0, 0x0f, 0x05 };
	static uint64_t sys_args[3] = { SYS_getppid, 0, 0 }, rd_args[3];
	static char buf[16];
	static const struct probe p_sys = { "syscall", NULL, sys, 3, 3, false, parent_pid,
					    sys_args, 0x3f };
	static const struct probe p_rd = { "__read_nocancel", "GLIBC_PRIVATE", rd, 4, 3,
					   false, sixteen, rd_args, 0 };
	static int known_sys = -1, known_rd = -1;
	int fd = open("/dev/zero", O_RDONLY), bad;

	rd_args[0] = (uint64_t)fd;
	rd_args[1] = (uint64_t)(uintptr_t)buf;
	rd_args[2] = sizeof(buf);
	bad = check_registers_of(&p_sys, &known_sys);
	bad |= check_registers_of(&p_rd, &known_rd);
	close(fd);
	return bad;
}

/* Yields with garbage in every register it can reach, until told. */
static volatile int stop_yield;

static void *clobber(void *arg)
{
	uint32_t mx = 0x5f80, mx0 = 0x1f80;	/* rounding up; the default */
	uint16_t cw = 0x0b7f, cw0 = 0x037f;
	(void)arg;
	while (!stop_yield) {
		__asm__ __volatile__("pcmpeqd %%xmm0, %%xmm0; pcmpeqd %%xmm1, %%xmm1;"
				     "pcmpeqd %%xmm2, %%xmm2; pcmpeqd %%xmm3, %%xmm3;"
				     "pcmpeqd %%xmm4, %%xmm4; pcmpeqd %%xmm5, %%xmm5;"
				     "pcmpeqd %%xmm6, %%xmm6; pcmpeqd %%xmm7, %%xmm7;"
				     "pcmpeqd %%xmm15, %%xmm15; mov $-1, %%r10; mov $-1, %%r8;"
				     "mov $-1, %%r9; mov $-1, %%rdi; mov $-1, %%rsi; mov $-1, %%rdx"
				     ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
				     "xmm7", "xmm15", "r10", "r8", "r9", "rdi", "rsi", "rdx",
				     "memory");
		/* another rounding mode while this thread runs */
		__asm__ __volatile__("ldmxcsr %0; fldcw %1" :: "m"(mx), "m"(cw));
		sched_yield();
		__asm__ __volatile__("ldmxcsr %0; fldcw %1" :: "m"(mx0), "m"(cw0));
	}
	return NULL;
}

static int check_yield(void)
{
	static const uint8_t plain[7] = { 0xb8, 0x18, 0, 0, 0, 0x0f, 0x05 };
	static const struct probe pr = { "sched_yield", NULL, plain, 7, 500, false, zero,
					 NULL, 0 };
	static int known = -1;
	pthread_t th[4];
	int bad;

	if (known < 0) {	/* before the threads call it */
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		void *fn = libc ? dlsym(libc, "sched_yield") : NULL;
		known = fn && !memcmp(fn, plain, sizeof(plain));
	}
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, clobber, NULL);
	bad = check_registers_of(&pr, &known);
	stop_yield = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return bad;
}

#define NT 8
#define NCALL 20000
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static pid_t parent;

static void *racer(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < NCALL; i++) {
		errno = 777;		/* a call that succeeds leaves errno alone */
		bad += getppid() != parent || errno != 777;
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	return (void *)bad;
}

static int check_race(void)
{
	pthread_t th[NT];
	long bad = 0;

	parent = getppid();
	for (int i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, racer, NULL);
	for (int i = 0; i < NT; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad += (long)r;
	}
	printf("race: %d threads, %ld wrong results, counter %ld of %d\n", NT, bad,
	       counter, NT * NCALL);
	return bad != 0 || counter != NT * NCALL;
}

#define NSIG_SENT 200
static volatile sig_atomic_t handled, handler_bad, spin_stop;

static void on_rt(int sig)
{
	(void)sig;
	handler_bad |= getppid() != parent;
	handled++;
}

static void *spinner(void *arg)
{
	long bad = 0;

	(void)arg;
	while (!spin_stop)
		bad += getppid() != parent;
	return (void *)bad;
}

static int check_signals(void)
{
	struct sigaction sa;
	pthread_t th;
	void *r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	parent = getppid();
	pthread_create(&th, NULL, spinner, NULL);
	for (int i = 0; i < NSIG_SENT; i++) {
		pthread_kill(th, SIGRTMIN + 1);
		usleep(200);
	}
	for (int i = 0; i < 2000 && handled < NSIG_SENT; i++)
		usleep(1000);
	spin_stop = 1;
	pthread_join(th, &r);
	printf("signals: %d of %d handled, %s\n", (int)handled, NSIG_SENT,
	       (long)r || handler_bad ? "wrong results" : "every result right");
	return handled != NSIG_SENT || (long)r != 0 || handler_bad;
}

static int check_fork(void)
{
	pid_t me = getpid(), c;
	int st = 0;

	fflush(stdout);
	c = fork();
	if (c == 0) {
		int ok = getppid() == me && getpid() != me;
		mode_t m = umask(022);
		for (int i = 0; i < 10000; i++)
			ok &= umask(022) == 022;
		umask(m);
		exit(ok ? 0 : 1);	/* exit: xsc run -v reports the child */
	}
	if (c < 0 || waitpid(c, &st, 0) != c) {
		printf("fork: failed\n");
		return 1;
	}
	printf("fork: the child's getppid %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ?
	       "is its parent" : "is wrong");
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int check_own_code(void)
{
	static const uint8_t code[8] = { 0xb8, 0x6e, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long (*f)(void);
	int ok = 1;

	if (p == MAP_FAILED) {
		printf("own code: no memory\n");
		return 1;
	}
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC)) {
		printf("own code: mprotect failed\n");
		return 1;
	}
	f = (long (*)(void))(void *)p;
	for (int i = 0; i < 2; i++)
		ok &= f() == getppid();
	ok &= !memcmp(p, code, sizeof(code));
	printf("own code: %s\n", ok ? "runs, and is unchanged" : "changed or wrong");
	munmap(p, 4096);
	return !ok;
}

int main(void)
{
	int bad = check_registers();

	bad |= check_register_sites();

	bad |= check_yield();
	bad |= check_race();
	bad |= check_signals();
	bad |= check_fork();
	bad |= check_own_code();
	bad |= check_registers();	/* once more, after the threads: */
	bad |= check_register_sites();	/* the runtime runs them now */
	return bad;
}
