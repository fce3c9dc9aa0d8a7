/*
 * src/table/net.h - rows of the syscall table (table.h, table.c):
 * sockets, pipes, events, time, futexes and children: the calls that
 * wait for a peer.
 * Included inside table.c's initializer of xsc__sys[]; each row states
 * every policy (table.h).
 */
	/* ---- sockets ----------------------------------------------------- */
	[SYS_socket] = {
		.args = "domain,type,proto",
		.newfd = XSC_NEWFD_SOCK,
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_SOCKET },
			.prep = xsc__prep_socket,
			.note = "io_uring",
		},
	},
	[SYS_connect] = {
		.args = "fd,addr_in,len",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_CONNECT },
			.prep = xsc__prep_connect,
			.note = "io_uring; non-blocking socket: fallback (one fcntl)",
		},
	},
	[SYS_accept] = {
		.args = "fd,addr_out,lenp",
		.newfd = XSC_NEWFD_SOCK,
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_ACCEPT },
			.prep = xsc__prep_accept,
			.done = xsc__done_accept,
			.note = "io_uring" NBNOTE,
		},
	},
	[SYS_accept4] = {
		.args = "fd,addr_out,lenp,flags",
		.newfd = XSC_NEWFD_SOCK,
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_ACCEPT },
			.prep = xsc__prep_accept4,
			.done = xsc__done_accept,
			.note = "io_uring" NBNOTE,
		},
	},
	[SYS_bind] = {
		.args = "fd,addr_in,len",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { XSC_OP_BIND },
			.prep = xsc__prep_bind,
			.note = "io_uring",
		},
	},
	[SYS_listen] = {
		.args = "fd,backlog",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { XSC_OP_LISTEN },
			.prep = xsc__prep_listen,
			.note = "io_uring",
		},
	},
	[SYS_sendto] = {
		.args = "fd,in,len,flags,addr_in,len",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_SEND, IORING_OP_SENDMSG },
			.prep = xsc__prep_sendto,
			.done = xsc__done_sendto,
			.note = "io_uring; with an address: SENDMSG" NBNOTE,
		},
	},
	[SYS_recvfrom] = {
		.args = "fd,out,len,flags,addr_out,lenp",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_RECV },
			.prep = xsc__prep_recvfrom,
			.done = xsc__done_recv,
			.note = "io_uring; with an address or MSG_WAITALL: fallback" NBNOTE,
		},
	},
	[SYS_sendmsg] = {
		.args = "fd,msg_in,flags",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_SENDMSG },
			.prep = xsc__prep_sendmsg,
			.done = xsc__done_sendmsg,
			.note = "io_uring" NBNOTE,
		},
	},
	[SYS_recvmsg] = {
		.args = "fd,msg_out,flags",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_RECVMSG },
			.prep = xsc__prep_recvmsg,
			.done = xsc__done_recvmsg,
			.note = "io_uring; MSG_WAITALL: fallback" NBNOTE,
		},
	},
	[SYS_shutdown] = {
		.args = "fd,how",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_SHUTDOWN },
			.prep = xsc__prep_shutdown,
			.note = "io_uring",
		},
	},
	/* ---- pipes, events, time, futex, children ------------------------ */
	[SYS_splice] = {
		.args = "fd,offp,fd,offp,len,flags",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_SPLICE },
			.prep = xsc__prep_splice,
			.note = "io_uring; offset pointers: fallback",
		},
	},
	[SYS_tee] = {
		.args = "fd,fd,len,flags",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_TEE },
			.prep = xsc__prep_tee,
			.note = "io_uring",
		},
	},
	[SYS_epoll_ctl] = {
		.args = "epfd,op,fd,event_in",
		.block = XSC_NEVER_BLOCKS,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_EPOLL_CTL },
			.prep = xsc__prep_epoll_ctl,
			.note = "io_uring",
		},
	},
	[SYS_nanosleep] = {
		.args = "ts_in,ts_out",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_TIMEOUT },
			.prep = xsc__prep_nanosleep,
			.done = xsc__done_sleep,
			.note = "io_uring; timeout op; the timespec is copied with a checked read",
		},
	},
	[SYS_clock_nanosleep] = {
		.args = "clock,flags,ts_in,ts_out",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { IORING_OP_TIMEOUT },
			.prep = xsc__prep_clock_nanosleep,
			.done = xsc__done_sleep,
			.note = "io_uring; MONOTONIC/REALTIME/BOOTTIME",
		},
	},
	[SYS_poll] = {
		.args = "pollfd_io,n,ms",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
		.shim_args = shim_poll,
		.uring = {
			.op = { IORING_OP_POLL_ADD, IORING_OP_LINK_TIMEOUT },
			.prep = xsc__prep_poll,
			.done = xsc__done_poll,
			.note = "io_uring; one fd, timeout != 0; pollfd via checked copies",
		},
	},
	[SYS_futex] = {
		.args = "uaddr,op,val,ts_in,uaddr2,val3",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.bound = futex_bound,
		.shim = XSC_SHIM_EMULATE,
		.shim_args = shim_futex,
		.uring = {
			.op = { XSC_OP_FUTEX_WAIT, XSC_OP_FUTEX_WAKE },
			.prep = xsc__prep_futex,
			.note = "io_uring; WAIT/WAKE(+BITSET) without timeout; PI ops: the caller; rest: fallback",
		},
	},
	[SYS_waitid] = {
		.args = "which,pid,info_out,options,rusage_out",
		.block = XSC_MAY_BLOCK,
		.thread = XSC_ANY_THREAD,
		.bound = waitid_bound,
		.shim = XSC_SHIM_POST,
		.uring = {
			.op = { XSC_OP_WAITID },
			.prep = xsc__prep_waitid,
			.done = xsc__done_waitid,
			.note = "io_uring; rusage: fallback; __WNOTHREAD: the caller",
		},
	},
