/*
 * table.c - the syscall table: one row per x86-64 system call, the single
 * description every part of xsc reads (dispatcher, executors, xsc info,
 * tests).  Like the kernel's io_uring/opdef.c.
 *
 * Every number the kernel headers name gets a default row (name, six
 * arguments, may block: runs on a syscall thread).  The rows below then
 * refine the calls xsc knows: argument count and kinds, whether the call
 * can block, whether it depends on the calling thread, and its io_uring
 * translation.  Update uring_prep.h, the README's list of translated
 * calls and the differential tests (tests/t_diff_fs.c, t_diff_net.c,
 * t_diff_misc.c) when you add an io_uring mapping here.
 */
#include "uring_prep.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define B XSC_F_BLOCK
#define T XSC_F_THREAD
#define R XSC_F_REFUSE
#define K XSC_F_KNOWN

/* A row without an io_uring mapping. */
#define ROW(nm, n, fl, kinds) \
	[SYS_##nm] = { .name = #nm, .nargs = n, .flags = (fl) | K, .args = kinds }
/* A row with one (op) io_uring translation, prep, and optional done. */
#define URING(nm, n, fl, opc, kinds, pfn, dfn, nt) \
	[SYS_##nm] = { .name = #nm, .nargs = n, .flags = (fl) | K, \
		       .op = { opc, 0 }, .prep = pfn, .done = dfn, \
		       .args = kinds, .note = "io_uring" nt }
#define URING2(nm, n, fl, op0, op1, kinds, pfn, dfn, nt) \
	[SYS_##nm] = { .name = #nm, .nargs = n, .flags = (fl) | K, \
		       .op = { op0, op1 }, .prep = pfn, .done = dfn, \
		       .args = kinds, .note = "io_uring" nt }
#define U(nm, n, opc, kinds) URING(nm, n, B, opc, kinds, xsc__prep_##nm, NULL, "")

/* Notes shown by `xsc info`. */
#define NBNOTE "; non-blocking attempt first (O_NONBLOCK exact)"
#define POSNOTE NBNOTE "; an explicit offset: fallback (-ESPIPE exact)"

/* Numbers newer than the C library's headers. */
#ifndef SYS_uretprobe
#define SYS_uretprobe 335
#endif
#define XSC_NEWER(X) X(cachestat, 451) X(fchmodat2, 452) X(map_shadow_stack, 453) \
	X(futex_wake, 454) X(futex_wait, 455) X(futex_requeue, 456) \
	X(statmount, 457) X(listmount, 458) X(lsm_get_self_attr, 459) \
	X(lsm_set_self_attr, 460) X(lsm_list_modules, 461) X(mseal, 462) \
	X(setxattrat, 463) X(getxattrat, 464) X(listxattrat, 465) \
	X(removexattrat, 466) X(open_tree_attr, 467) X(file_getattr, 468) \
	X(file_setattr, 469)
#define XSC_NEWER_NR(nm, n) SYS_##nm##_xsc = n,
enum { XSC_NEWER(XSC_NEWER_NR) };

/* ---- arguments that make a call depend on the calling thread ---------- */

/* Priority-inheritance futexes record the caller's thread id as owner. */
static bool futex_bound(const int64_t a[6])
{
	switch (a[1] & FUTEX_CMD_MASK) {
	case FUTEX_LOCK_PI: case FUTEX_UNLOCK_PI: case FUTEX_TRYLOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI: case FUTEX_CMP_REQUEUE_PI: case 13 /* LOCK_PI2 */:
		return true;
	default:
		return false;
	}
}

/* __WNOTHREAD: children of the calling thread alone. */
static bool wait4_bound(const int64_t a[6]) { return (a[2] & __WNOTHREAD) != 0; }
static bool waitid_bound(const int64_t a[6]) { return (a[3] & __WNOTHREAD) != 0; }

/* A signal mask set for the wait is the calling thread's, and the signals
 * that end the wait are the ones delivered to it. */
static bool ppoll_bound(const int64_t a[6]) { return a[3] != 0; }
static bool pselect6_bound(const int64_t a[6]) { return a[5] != 0; }
static bool epoll_pwait_bound(const int64_t a[6]) { return a[4] != 0; }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"

const struct xsc_sysdef xsc__sys[XSC_NR_MAX] = {
#define XSC_SYSNAME(nr, nm) [nr] = { .name = #nm, .nargs = 6, .flags = B },
#include "sysnames.h"
#undef XSC_SYSNAME

#define XSC_NEWER_ROW(nm, n) [n] = { .name = #nm, .nargs = 6, .flags = B },
	XSC_NEWER(XSC_NEWER_ROW)
#undef XSC_NEWER_ROW

	[XSC_NR_NOP] = { .name = "xsc_nop", .nargs = 0, .flags = K,
			 .op = { IORING_OP_NOP, 0 }, .prep = xsc__prep_nop,
			 .args = "", .note = "IORING_OP_NOP; 0 without a syscall elsewhere" },

	/* ---- read/write ------------------------------------------------ */
	URING(read, 3, B, IORING_OP_READ, "fd,out,len", xsc__prep_read, xsc__done_read, NBNOTE "; count > MAX_RW_COUNT: fallback"),
	URING(write, 3, B, IORING_OP_WRITE, "fd,in,len", xsc__prep_write, xsc__done_write, NBNOTE "; count > MAX_RW_COUNT: fallback"),
	ROW(pread64, 4, B, "fd,out,len,off"),
	ROW(pwrite64, 4, B, "fd,in,len,off"),
	URING(readv, 3, B, IORING_OP_READV, "fd,iov_out,n", xsc__prep_readv, xsc__done_readv, NBNOTE),
	URING(writev, 3, B, IORING_OP_WRITEV, "fd,iov_in,n", xsc__prep_writev, xsc__done_writev, NBNOTE),
	ROW(preadv, 5, B, "fd,iov_out,n,off,off_hi"),
	ROW(pwritev, 5, B, "fd,iov_in,n,off,off_hi"),
	URING(preadv2, 6, B, IORING_OP_READV, "fd,iov_out,n,off,off_hi,flags", xsc__prep_preadv2, xsc__done_readv, POSNOTE),
	URING(pwritev2, 6, B, IORING_OP_WRITEV, "fd,iov_in,n,off,off_hi,flags", xsc__prep_pwritev2, xsc__done_writev, POSNOTE),

	/* ---- files and directories --------------------------------------- */
	U(open, 3, IORING_OP_OPENAT, "path,flags,mode"),
	U(openat, 4, IORING_OP_OPENAT, "dirfd,path,flags,mode"),
	U(openat2, 4, IORING_OP_OPENAT2, "dirfd,path,how,size"),
	URING(close, 1, B, IORING_OP_CLOSE, "fd", xsc__prep_close, xsc__done_close,
	      "; -EBADF re-checked synchronously (io_uring fds)"),
	U(fsync, 1, IORING_OP_FSYNC, "fd"),
	U(fdatasync, 1, IORING_OP_FSYNC, "fd"),
	U(sync_file_range, 4, IORING_OP_SYNC_FILE_RANGE, "fd,off,len,flags"),
	U(fallocate, 4, IORING_OP_FALLOCATE, "fd,mode,off,len"),
	U(fadvise64, 4, IORING_OP_FADVISE, "fd,off,len,advice"),
	URING(madvise, 3, 0, IORING_OP_MADVISE, "addr,len,advice", xsc__prep_madvise, NULL, ""),
	U(ftruncate, 2, XSC_OP_FTRUNCATE, "fd,len"),
	U(statx, 5, IORING_OP_STATX, "dirfd,path,flags,mask,out"),
/* statx runs on an io_uring worker thread and the copy-out is a crossing
 * of its own: more than the call itself, so AUTO keeps these inline. */
#define STAT(nm, n, kinds) URING(nm, n, B | XSC_F_CHEAP, IORING_OP_STATX, kinds, \
	xsc__prep_##nm, xsc__done_stat, "; statx + exact conversion + checked copy-out")
	STAT(stat, 2, "path,out"),
	STAT(lstat, 2, "path,out"),
	STAT(fstat, 2, "fd,out"),
	STAT(newfstatat, 4, "dirfd,path,out,flags"),
#undef STAT
	U(rename, 2, IORING_OP_RENAMEAT, "path,path"),
	U(renameat, 4, IORING_OP_RENAMEAT, "dirfd,path,dirfd,path"),
	U(renameat2, 5, IORING_OP_RENAMEAT, "dirfd,path,dirfd,path,flags"),
	U(unlink, 1, IORING_OP_UNLINKAT, "path"),
	U(rmdir, 1, IORING_OP_UNLINKAT, "path"),
	U(unlinkat, 3, IORING_OP_UNLINKAT, "dirfd,path,flags"),
	U(mkdir, 2, IORING_OP_MKDIRAT, "path,mode"),
	U(mkdirat, 3, IORING_OP_MKDIRAT, "dirfd,path,mode"),
	U(symlink, 2, IORING_OP_SYMLINKAT, "path,path"),
	U(symlinkat, 3, IORING_OP_SYMLINKAT, "path,dirfd,path"),
	U(link, 2, IORING_OP_LINKAT, "path,path"),
	U(linkat, 5, IORING_OP_LINKAT, "dirfd,path,dirfd,path,flags"),
	U(getxattr, 4, IORING_OP_GETXATTR, "path,name,out,len"),
	U(setxattr, 5, IORING_OP_SETXATTR, "path,name,in,len,flags"),
	U(fgetxattr, 4, IORING_OP_FGETXATTR, "fd,name,out,len"),
	U(fsetxattr, 5, IORING_OP_FSETXATTR, "fd,name,in,len,flags"),

	/* ---- sockets ----------------------------------------------------- */
	U(socket, 3, IORING_OP_SOCKET, "domain,type,proto"),
	URING(connect, 3, B, IORING_OP_CONNECT, "fd,addr_in,len", xsc__prep_connect, NULL, "; non-blocking socket: fallback (one fcntl)"),
	URING(accept, 3, B, IORING_OP_ACCEPT, "fd,addr_out,lenp", xsc__prep_accept, xsc__done_accept, NBNOTE),
	URING(accept4, 4, B, IORING_OP_ACCEPT, "fd,addr_out,lenp,flags", xsc__prep_accept4, xsc__done_accept, NBNOTE),
	U(bind, 3, XSC_OP_BIND, "fd,addr_in,len"),
	U(listen, 2, XSC_OP_LISTEN, "fd,backlog"),
	URING2(sendto, 6, B, IORING_OP_SEND, IORING_OP_SENDMSG, "fd,in,len,flags,addr_in,len",
	       xsc__prep_sendto, xsc__done_sendto, "; with an address: SENDMSG" NBNOTE),
	URING(recvfrom, 6, B, IORING_OP_RECV, "fd,out,len,flags,addr_out,lenp",
	      xsc__prep_recvfrom, xsc__done_recv, "; with an address or MSG_WAITALL: fallback" NBNOTE),
	URING(sendmsg, 3, B, IORING_OP_SENDMSG, "fd,msg_in,flags", xsc__prep_sendmsg, xsc__done_sendmsg, NBNOTE),
	URING(recvmsg, 3, B, IORING_OP_RECVMSG, "fd,msg_out,flags", xsc__prep_recvmsg, xsc__done_recvmsg, "; MSG_WAITALL: fallback" NBNOTE),
	U(shutdown, 2, IORING_OP_SHUTDOWN, "fd,how"),

	/* ---- pipes, events, time, futex, children ------------------------ */
	URING(splice, 6, B, IORING_OP_SPLICE, "fd,offp,fd,offp,len,flags", xsc__prep_splice,
	      NULL, "; offset pointers: fallback"),
	U(tee, 4, IORING_OP_TEE, "fd,fd,len,flags"),
	URING(epoll_ctl, 4, 0, IORING_OP_EPOLL_CTL, "epfd,op,fd,event_in", xsc__prep_epoll_ctl, NULL, ""),
	URING(nanosleep, 2, B, IORING_OP_TIMEOUT, "ts_in,ts_out", xsc__prep_nanosleep,
	      xsc__done_sleep, "; timeout op; the timespec is copied with a checked read"),
	URING(clock_nanosleep, 4, B, IORING_OP_TIMEOUT, "clock,flags,ts_in,ts_out",
	      xsc__prep_clock_nanosleep, xsc__done_sleep, "; MONOTONIC/REALTIME/BOOTTIME"),
	URING2(poll, 3, B, IORING_OP_POLL_ADD, IORING_OP_LINK_TIMEOUT, "pollfd_io,n,ms",
	       xsc__prep_poll, xsc__done_poll, "; one fd, timeout != 0; pollfd via checked copies"),
	[SYS_futex] = { .name = "futex", .nargs = 6, .flags = B | K,
			.op = { XSC_OP_FUTEX_WAIT, 0 }, .prep = xsc__prep_futex,
			.args = "uaddr,op,val,ts_in,uaddr2,val3", .bound = futex_bound,
			.note = "io_uring; WAIT/WAKE(+BITSET) without timeout; PI ops: "
				"the caller; rest: fallback" },
	[SYS_waitid] = { .name = "waitid", .nargs = 5, .flags = B | K,
			 .op = { XSC_OP_WAITID, 0 }, .prep = xsc__prep_waitid,
			 .done = xsc__done_waitid, .bound = waitid_bound,
			 .args = "which,pid,info_out,options,rusage_out",
			 .note = "io_uring; rusage: fallback; __WNOTHREAD: the caller" },

	/* ---- no io_uring form: syscall threads or inline ----------------- */
	ROW(getppid, 0, 0, ""), ROW(getpid, 0, 0, ""),
	ROW(getpgrp, 0, 0, ""), ROW(getpgid, 1, 0, "pid"), ROW(getsid, 1, 0, "pid"),
	ROW(umask, 1, 0, "mode"), ROW(uname, 1, 0, "out"), ROW(sysinfo, 1, 0, "out"),
	ROW(mmap, 6, 0, "addr,len,prot,flags,fd,off"), ROW(munmap, 2, 0, "addr,len"),
	ROW(mprotect, 3, 0, "addr,len,prot"), ROW(mremap, 5, 0, "addr,len,len,flags,addr"),
	ROW(brk, 1, 0, "addr"), ROW(mincore, 3, 0, "addr,len,out"),
	ROW(dup, 1, 0, "fd"), ROW(dup2, 2, 0, "fd,fd"), ROW(dup3, 3, 0, "fd,fd,flags"),
	ROW(lseek, 3, 0, "fd,off,whence"), ROW(getcwd, 2, 0, "out,len"),
	ROW(pipe, 1, 0, "fds_out"), ROW(pipe2, 2, 0, "fds_out,flags"),
	ROW(socketpair, 4, 0, "domain,type,proto,fds_out"),
	ROW(eventfd2, 2, 0, "count,flags"), ROW(epoll_create1, 1, 0, "flags"),
	ROW(memfd_create, 2, 0, "name,flags"), ROW(kill, 2, 0, "pid,sig"),
	ROW(tgkill, 3, 0, "tgid,tid,sig"), ROW(prlimit64, 4, 0, "pid,res,in,out"),
	ROW(getrandom, 3, 0, "out,len,flags"),
	ROW(gettimeofday, 2, 0, "out,out"), ROW(time, 1, 0, "out"),
	ROW(getdents64, 3, B, "fd,out,len"), ROW(ioctl, 3, B, "fd,req,arg"),
	ROW(fcntl, 3, B, "fd,cmd,arg"), ROW(epoll_wait, 4, B, "epfd,out,n,ms"),
	ROW(select, 5, B, "n,io,io,io,tv"),
	[SYS_ppoll] = { .name = "ppoll", .nargs = 5, .flags = B | K, .bound = ppoll_bound,
			.args = "fds,n,ts,mask,size" },
	[SYS_pselect6] = { .name = "pselect6", .nargs = 6, .flags = B | K,
			   .bound = pselect6_bound, .args = "n,io,io,io,ts,mask" },
	[SYS_epoll_pwait] = { .name = "epoll_pwait", .nargs = 6, .flags = B | K,
			      .bound = epoll_pwait_bound, .args = "epfd,out,n,ms,mask,size" },
	[SYS_epoll_pwait2] = { .name = "epoll_pwait2", .nargs = 6, .flags = B | K,
			       .bound = epoll_pwait_bound, .args = "epfd,out,n,ts,mask,size" },
	[SYS_wait4] = { .name = "wait4", .nargs = 4, .flags = B | K, .bound = wait4_bound,
			.args = "pid,status_out,options,rusage_out" },
	ROW(sendfile, 4, B, "fd,fd,offp,len"), ROW(copy_file_range, 6, B, "fd,offp,fd,offp,len,flags"),
	ROW(access, 2, B, "path,mode"), ROW(faccessat, 3, B, "dirfd,path,mode"),
	ROW(chdir, 1, B, "path"), ROW(fchdir, 1, 0, "fd"), ROW(readlink, 3, B, "path,out,len"),
	ROW(chmod, 2, B, "path,mode"), ROW(fchmod, 2, B, "fd,mode"),
	ROW(truncate, 2, B, "path,len"), ROW(sync, 0, B, ""), ROW(syncfs, 1, B, "fd"),
	ROW(flock, 2, B, "fd,op"), ROW(msync, 3, B, "addr,len,flags"),

	/* ---- depend on the calling thread: always inline ----------------- */
	ROW(gettid, 0, T, ""), ROW(set_tid_address, 1, T, "tidp"),
	ROW(set_robust_list, 2, T, "head,len"), ROW(get_robust_list, 3, T, "tid,out,out"),
	ROW(rt_sigprocmask, 4, T, "how,set,old,size"), ROW(rt_sigpending, 2, T, "out,size"),
	ROW(rt_sigsuspend, 2, T, "mask,size"), ROW(rt_sigtimedwait, 4, T, "set,info,ts,size"),
	ROW(sigaltstack, 2, T, "ss,old"), ROW(pause, 0, T, ""),
	ROW(exit, 1, T, "status"), ROW(exit_group, 1, T, "status"),
	ROW(arch_prctl, 2, T, "code,addr"), ROW(prctl, 5, T, "op,a,b,c,d"),
	ROW(seccomp, 3, T, "op,flags,args"), ROW(sched_setaffinity, 3, T, "pid,len,mask"),
	ROW(sched_getaffinity, 3, T, "pid,len,mask"), ROW(sched_yield, 0, T, ""),
	ROW(sched_setscheduler, 3, T, "pid,policy,param"), ROW(sched_getscheduler, 1, T, "pid"),
	ROW(sched_setparam, 2, T, "pid,param"), ROW(sched_getparam, 2, T, "pid,param"),
	ROW(sched_setattr, 3, T, "pid,attr,flags"), ROW(sched_getattr, 4, T, "pid,attr,size,flags"),
	ROW(setpriority, 3, T, "which,who,prio"), ROW(getpriority, 2, T, "which,who"),
	ROW(capget, 2, T, "hdr,data"), ROW(capset, 2, T, "hdr,data"),
	ROW(setuid, 1, T, "uid"), ROW(setgid, 1, T, "gid"), ROW(setreuid, 2, T, "uid,uid"),
	ROW(setregid, 2, T, "gid,gid"), ROW(setresuid, 3, T, "uid,uid,uid"),
	ROW(setresgid, 3, T, "gid,gid,gid"), ROW(setgroups, 2, T, "n,list"),
	ROW(setfsuid, 1, T, "uid"), ROW(setfsgid, 1, T, "gid"),
	ROW(unshare, 1, T, "flags"), ROW(setns, 2, T, "fd,type"), ROW(ptrace, 4, T, "req,pid,addr,data"),
	ROW(fork, 0, T, ""), ROW(execve, 3, T, "path,argv,envp"),
	ROW(execveat, 5, T, "dirfd,path,argv,envp,flags"), ROW(getcpu, 3, T, "cpu,node,cache"),
	ROW(set_thread_area, 1, T, "desc"), ROW(get_thread_area, 1, T, "desc"),
	ROW(ioprio_set, 3, T, "which,who,prio"), ROW(ioprio_get, 2, T, "which,who"),
	ROW(getrusage, 2, T, "who,out"), ROW(clock_gettime, 2, T, "clock,out"),
	ROW(rseq, 4, T, "rseq,len,flags,sig"), ROW(personality, 1, T, "persona"),
	/* the sandbox of the calling thread (Landlock), its credentials as the
	 * kernel reads them for this task, its keyrings (thread keyring), its
	 * memory policy, its I/O port bitmap and protection-key register */
	ROW(landlock_restrict_self, 2, T, "ruleset_fd,flags"),
	ROW(getuid, 0, T, ""), ROW(geteuid, 0, T, ""), ROW(getgid, 0, T, ""),
	ROW(getegid, 0, T, ""), ROW(getresuid, 3, T, "out,out,out"),
	ROW(getresgid, 3, T, "out,out,out"), ROW(getgroups, 2, T, "n,out"),
	ROW(keyctl, 5, T, "op,a,b,c,d"), ROW(add_key, 5, T, "type,desc,payload,len,ring"),
	ROW(request_key, 4, T, "type,desc,info,ring"),
	ROW(set_mempolicy, 3, T, "mode,nodemask,maxnode"),
	ROW(get_mempolicy, 5, T, "out,nodemask,maxnode,addr,flags"),
	ROW(ioperm, 3, T, "from,num,on"), ROW(iopl, 1, T, "level"),
	ROW(pkey_alloc, 2, T, "flags,rights"),
	/* the round-robin slice of thread 0 (the caller); the calling task's
	 * LSM attributes ("current" of AppArmor, SELinux...); a uretprobe's
	 * return, valid only from its trampoline */
	ROW(sched_rr_get_interval, 2, T, "pid,out"),
	[SYS_lsm_get_self_attr_xsc] = { .name = "lsm_get_self_attr", .nargs = 4,
		.flags = T | K, .args = "attr,out,size_io,flags" },
	[SYS_lsm_set_self_attr_xsc] = { .name = "lsm_set_self_attr", .nargs = 4,
		.flags = T | K, .args = "attr,in,size,flags" },
	ROW(uretprobe, 0, T, ""),
	/* measure or signal the calling thread: pid 0 of perf_event_open,
	 * CLOCK_THREAD_CPUTIME_ID and SIGEV_THREAD_ID timers, thread clocks */
	ROW(perf_event_open, 5, T, "attr,pid,cpu,group_fd,flags"),
	ROW(timer_create, 3, T, "clock,sevp,out"), ROW(clock_getres, 2, T, "clock,out"),
	/* io_uring itself: a single-issuer ring belongs to the task that made
	 * it, registered ring fds are per task, DEFER_TASKRUN completions run
	 * in the submitter's enter */
	ROW(io_uring_setup, 2, T, "entries,params"),
	ROW(io_uring_enter, 6, T, "fd,to_submit,min_complete,flags,arg,argsz"),
	ROW(io_uring_register, 4, T, "fd,op,arg,nr"),

	/* ---- never run by xsc: a second thread of control on the caller's
	 * stack, or a return into a signal frame (-EINVAL everywhere) ---- */
	ROW(vfork, 0, R, ""), ROW(clone, 5, R, "flags,stack,ptid,ctid,tls"),
	ROW(clone3, 2, R, "args,size"), ROW(rt_sigreturn, 0, R, ""),
	ROW(restart_syscall, 0, R, ""),
};

#pragma GCC diagnostic pop

const struct xsc_sysdef *xsc__sysdef(long nr)
{
	if (nr < 0 || nr >= XSC_NR_MAX)
		return NULL;
	return &xsc__sys[nr];
}

XSC_EXPORT const char *xsc_syscall_name(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);
	return d && d->name ? d->name : "?";
}

XSC_EXPORT const char *xsc_backend_name(int b)
{
	static const char *const names[] = { "auto", "uring", "sqpoll", "worker",
					     "inline" };
	return b >= 0 && b <= XSC_BACKEND_INLINE ? names[b] : "?";
}
