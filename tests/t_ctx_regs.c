/*
 * t_ctx_regs - state that must survive a switch does: the callee-saved
 * registers (rbx, rbp, r12-r15) hold distinct values on each side across
 * many switches, and each fiber keeps its own MXCSR (rounding mode, FTZ)
 * and x87 control word (rounding and precision control).  A new fiber
 * starts with its creator's floating-point control state (C11 7.6).
 */
#include <fenv.h>
#include <stdint.h>

#include "fiber/ctx.h"
#include "testlib.h"

/* regs_call(fn, a, b, in, out): load rbx, rbp, r12-r15 from in[0..5],
 * call fn(a, b), store the same six registers to out[0..5]. */
void regs_call(void (*fn)(void *, void *), void *a, void *b,
	       const uint64_t *in, uint64_t *out);
__asm__(".text\n"
	".type regs_call,@function\n"
	"regs_call:\n"
	"	pushq %rbp\n pushq %rbx\n pushq %r12\n pushq %r13\n"
	"	pushq %r14\n pushq %r15\n pushq %r8\n"	/* rsp 16-aligned */
	"	movq %rdi, %rax\n movq %rsi, %rdi\n movq %rdx, %rsi\n"
	"	movq 0(%rcx), %rbx\n movq 8(%rcx), %rbp\n"
	"	movq 16(%rcx), %r12\n movq 24(%rcx), %r13\n"
	"	movq 32(%rcx), %r14\n movq 40(%rcx), %r15\n"
	"	call *%rax\n"
	"	popq %rax\n"
	"	movq %rbx, 0(%rax)\n movq %rbp, 8(%rax)\n"
	"	movq %r12, 16(%rax)\n movq %r13, 24(%rax)\n"
	"	movq %r14, 32(%rax)\n movq %r15, 40(%rax)\n"
	"	popq %r15\n popq %r14\n popq %r13\n popq %r12\n"
	"	popq %rbx\n popq %rbp\n ret\n"
	".size regs_call, .-regs_call\n");

static struct xsc_ctx m_ctx, f_ctx;

static __attribute__((noinline)) void do_switch(void *from, void *to)
{
	xsc__ctx_switch(from, to);
}

static void fill(uint64_t *v, uint64_t seed)
{
	for (int i = 0; i < 6; i++)
		v[i] = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0x1111;
}

static void check_regs(const uint64_t *in, const uint64_t *out)
{
	for (int i = 0; i < 6; i++)
		CHECK_EQ(out[i], in[i]);
}

/* The SSE and x87 control words (MXCSR, FPU control word) */
struct ctl {
	uint32_t mx;
	uint16_t cw;
};

static struct ctl get_ctl(void)
{
	struct ctl c;

	__asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(c.mx), "=m"(c.cw));
	return c;
}

static void set_ctl(struct ctl c)
{
	__asm__ volatile("ldmxcsr %0\n\tfldcw %1" : : "m"(c.mx), "m"(c.cw));
}

#define SWITCHES 10000
#define MX_RC_MASK 0x6000u
#define MX_FTZ 0x8000u
#define CW_RC_MASK 0x0c00u
#define CW_PC_MASK 0x0300u

static void regs_fiber(void *arg)
{
	uint64_t in[6], out[6];

	for (uint64_t i = 0; i < SWITCHES; i++) {
		fill(in, 1000003 + i);
		regs_call(do_switch, &f_ctx, &m_ctx, in, out);
		check_regs(in, out);
	}
}

/* 1/3 rounds differently in each mode.  In asm so the compiler cannot
 * move the division across fesetround (we do not build with
 * -frounding-math). */
static __attribute__((noinline)) double third(void)
{
	double x = 1.0, y = 3.0;

	__asm__ volatile("divsd %1, %0" : "+x"(x) : "x"(y));
	return x;
}

static void fp_fiber(void *arg)
{
	int inherited = *(int *)arg;
	double up, zero;

	CHECK_EQ(fegetround(), inherited);
	up = third();
	fesetround(FE_TOWARDZERO);
	struct ctl c = get_ctl();
	c.mx |= MX_FTZ;
	c.cw &= (uint16_t)~CW_PC_MASK;	/* single */
	set_ctl(c);
	zero = third();
	if (inherited == FE_UPWARD)
		CHECK(up > zero);
	for (int i = 0; i < SWITCHES; i++) {
		xsc__ctx_switch(&f_ctx, &m_ctx);
		CHECK_EQ(fegetround(), FE_TOWARDZERO);
		CHECK_EQ(get_ctl().mx & (MX_RC_MASK | MX_FTZ), MX_RC_MASK | MX_FTZ);
		CHECK_EQ(get_ctl().cw & (CW_RC_MASK | CW_PC_MASK), CW_RC_MASK);
		CHECK(third() == zero);
	}
}

static void back_to_main(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &m_ctx);
}

static void run(struct xsc_stack *st, void (*fn)(void *), void *arg)
{
	CHECK_EQ(xsc__ctx_make(&f_ctx, st->lo, (char *)st->hi - (char *)st->lo,
			       fn, arg, back_to_main), 0);
}

int main(void)
{
	struct xsc_stack *st;
	uint64_t in[6], out[6];
	uint16_t cw;
	int mode = FE_UPWARD;
	double up;

	CHECK_EQ(xsc__stack_thread_init(), 0);
	CHECK_EQ(xsc__stack_get(0, &st), 0);

	run(st, regs_fiber, NULL);
	for (uint64_t i = 0; i < SWITCHES; i++) {
		fill(in, i + 1);
		regs_call(do_switch, &m_ctx, &f_ctx, in, out);
		check_regs(in, out);
	}
	xsc__ctx_switch(&m_ctx, &f_ctx);	/* let it finish */

	fesetround(FE_UPWARD);
	cw = get_ctl().cw;
	up = third();
	run(st, fp_fiber, &mode);
	for (int i = 0; i <= SWITCHES; i++) {
		xsc__ctx_switch(&m_ctx, &f_ctx);
		CHECK_EQ(fegetround(), FE_UPWARD);
		CHECK_EQ(get_ctl().mx & (MX_RC_MASK | MX_FTZ), 0x4000);
		CHECK_EQ(get_ctl().cw, cw);
		CHECK(third() == up);
	}
	/* Inheritance again, from another mode. */
	fesetround(FE_DOWNWARD);
	mode = FE_DOWNWARD;
	run(st, fp_fiber, &mode);
	xsc__ctx_switch(&m_ctx, &f_ctx);
	CHECK_EQ(fegetround(), FE_DOWNWARD);
	fesetround(FE_TONEAREST);

	xsc__stack_put(st);
	xsc__stack_thread_fini();
	printf("ok: registers, MXCSR and x87 CW preserved over %d switches\n",
	       4 * SWITCHES);
	return 0;
}
