/*
 * multicall_urun.h - one run of a chain on the ring, between the
 * executor that submits and collects it (multicall_uring.c) and the code
 * that plans and builds its submissions (multicall_build.c).  The design
 * is described at the top of multicall_uring.c.
 */
#ifndef XSC_MULTICALL_URUN_H
#define XSC_MULTICALL_URUN_H
#include "multicall_uring.h"

#pragma GCC visibility push(hidden)

#define CAP MC_SQES		/* SQEs per submission */
#define NCLS 16			/* fds classified per run */
#define OP_FIXED_FD_INSTALL 54	/* 6.8 */
#define FIXED_FD_NO_CLOEXEC 1u

/* fd kinds */
enum { K_BAD, K_BLOCKING, K_REG, K_PIPE, K_NB };

struct mc_state {		/* x->mc */
	bool files;		/* XSC_MC_MAX direct slots registered */
	bool files_failed;
	uint32_t gen;
};

struct urun {
	struct mc_run *r;
	struct urun *prev;	/* an outer run (a done_cb may nest chains) */
	uint32_t gen;
	unsigned m, got;	/* SQEs in flight, CQEs received */
	unsigned k_iters;	/* loop iterations per submission */
	bool slot_open[XSC_MC_MAX];
	bool cloexec[XSC_MC_MAX];
	unsigned ncls;
	int cls_fd[NCLS];
	uint8_t cls_kind[NCLS];
	bool cls_append[NCLS];	/* O_APPEND */
	bool cls_pos_ok[NCLS];	/* cls_pos holds the position at the build */
	int64_t cls_pos[NCLS];	/* position before the build's first SQE */
	int64_t cls_adv[NCLS];	/* bytes the build's SQEs move it, if whole */
	int64_t start[CAP];	/* position each rw SQE starts at: see track() */
	int32_t res[CAP];
	uint8_t call[CAP];
	bool fixed[CAP];
	int64_t a[CAP][6];
};

/* Classifies fd (K_*), from the run's cache where it can; need_type: a
 * blocking fd's type too (fstat). */
int mc_classify(struct urun *u, long fd, bool need_type);
/* Settles call i of the build with its result and arguments, keeping the
 * run's fd cache and direct slots right; true once the run stopped. */
bool mc_urun_settle(struct urun *u, unsigned i, long ret, const int64_t a[6],
		    bool fixed);
/* Queues SQEs from the run's position; returns how many (0 once the run
 * stopped while settling calls that needed no SQE, or the ring is lost). */
unsigned mc_build(struct urun *u);

#pragma GCC visibility pop
#endif
