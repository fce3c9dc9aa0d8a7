/*
 * uring_ops.h - io_uring opcodes and SQE fields newer than the liburing 2.3
 * headers Debian 12 ships.  Values are the kernel ABI (include/uapi/linux/
 * io_uring.h); whether the running kernel has them is decided by probing,
 * never by version numbers.
 */
#ifndef XSC_URING_OPS_H
#define XSC_URING_OPS_H

#define XSC_OP_WAITID      50	/* 6.7 */
#define XSC_OP_FUTEX_WAIT  51	/* 6.7 */
#define XSC_OP_FUTEX_WAKE  52	/* 6.7 */
#define XSC_OP_FTRUNCATE   55	/* 6.9 */
#define XSC_OP_BIND        56	/* 6.11 */
#define XSC_OP_LISTEN      57	/* 6.11 */
#define XSC_OP_EPOLL_WAIT  59	/* 6.15 */

#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE 128
#endif
#define XSC_FUTEX_BITSET_ANY 0xffffffffu

#endif
