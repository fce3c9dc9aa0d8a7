# xsc-gdb.py - xsc's fibers in gdb.
#
# Under xsc threads or `xsc run` a program's threads are fibers that
# kernel threads (vcpus) take turns running; gdb's `info threads` shows
# the vcpus only.  This adds:
#
#   info xsc-fibers         every fiber: id, state, vcpu, the system call
#                           it is in with its arguments, where it was made
#   xsc-fiber N bt [ARGS]   the backtrace of fiber N (ARGS go to `bt`)
#   xsc-fiber N CMD...      any gdb command with fiber N's stack as the
#                           selected thread's (`xsc-fiber 7 frame 3`,
#                           `xsc-fiber 7 info locals`)
#
# Load it with `source tools/gdb/xsc-gdb.py`; an installed xsc puts it
# where gdb loads it by itself with libxsc.so and libxsc-preload.so
# (docs/debugging.md).  It works on a live process (all-stop) and on a
# core file, and changes nothing in the inferior.
#
# What it reads, by name from libxsc's debug info (src/sched/sched.h:
# update this file when those change): the list xsc__fibers (head,
# struct xsc_fiber's all_next), a fiber's id, state (enum fstate),
# home, created_at, in_call (nr + 1) and in_args, ctx.sp; xsc__rt.v/n
# and a vcpu's cur, id and th; the syscall table xsc__sys[nr].args and
# the names in table.c.  A parked fiber's registers are where
# xsc__ctx_swap (src/arch/x86_64/switch.S) left them on its stack:
# from the saved rsp, MXCSR/x87 word, r15, r14, r13, r12, rbx, rbp, and
# the return address.
#
# A parked fiber's stack is shown by a frame unwinder that, while a
# command runs for fiber N, makes the selected thread's innermost frame
# return into the fiber's saved registers: gdb's own unwinding (DWARF
# CFI) does the rest, which works the same on a core file, where
# registers cannot be written, and leaves nothing to restore but the
# unwinder's switch (in a `finally`).  `bt` leaves out the borrowed
# thread's own frames and numbers the fiber's from 0; other commands
# show gdb's frame numbers (`xsc-fiber N frame K` takes the fiber's K).
# A running fiber's stack is its vcpu's thread's: the command runs
# there.  While the script is loaded it also unwinds through the
# signal frames of `xsc run`'s handlers (xsc__tp_restorer).

import re

import gdb
import gdb.unwinder

NO_DEBUG = ("no debug info for libxsc (%s): install debug symbols "
            "(xsc built with -g, e.g. CMAKE_BUILD_TYPE=RelWithDebInfo)")
MAX_FIBERS = 1 << 22        # a bound on a list walk in a damaged process
STATES = {0: "runnable", 1: "running", 2: "parked", 3: "done"}
SWITCH_FRAME = ["r15", "r14", "r13", "r12", "rbx", "rbp"]   # from sp + 8


class XscError(gdb.GdbError):
    pass


# ---- finding the runtime ----------------------------------------------------

def _objfile_symbol(objfile, name):
    try:
        sym = objfile.lookup_global_symbol(name)
        if sym is None:
            sym = objfile.lookup_static_symbol(name)
    except (gdb.error, AttributeError):
        sym = None
    return sym


def _is_libxsc(objfile):
    return re.match(r"libxsc(-preload)?\.so", (objfile.filename or "").split("/")[-1])


def _linked_in():
    """Whether libxsc's code is in the process without its debug info
    (a program linked with libxsc.a)."""
    try:
        gdb.parse_and_eval("xsc_thread_create")
        return True
    except gdb.error:
        return False


class Runtime:
    """One copy of libxsc's runtime in the inferior (a program linked to
    libxsc and run under `xsc run` has two)."""

    def __init__(self, objfile, fibers):
        self.objfile = objfile
        self.fibers = fibers.value()
        rt = _objfile_symbol(objfile, "xsc__rt")
        self.rt = rt.value() if rt is not None else None
        self.sys = _objfile_symbol(objfile, "xsc__sys")
        self.names = None
        if self.sys is not None and self.sys.symtab is not None:
            block = self.sys.symtab.static_block()
            names = gdb.lookup_symbol("names", block)[0]
            if names is not None:
                self.names = names.value()
        self.long_p = gdb.lookup_type("long").pointer()
        self.u64_p = gdb.lookup_type("unsigned long").pointer()
        self.cur = {}           # running fiber -> its vcpu, read once
        for v in self.vcpus():
            if int(v["cur"]) != 0:
                self.cur[int(v["cur"])] = v
        self.args = {}          # nr -> the table's argument names

    def walk(self):
        f = self.fibers["head"]
        seen = set()
        while int(f) != 0 and len(seen) < MAX_FIBERS:
            if int(f) in seen:
                raise XscError("xsc: the fiber list loops at %#x" % int(f))
            seen.add(int(f))
            yield f
            f = f["all_next"]

    def vcpus(self):
        if self.rt is None or int(self.rt["v"]) == 0:
            return []
        return [self.rt["v"][i] for i in range(int(self.rt["n"]))]

    def running_on(self, f):
        return self.cur.get(int(f))

    def call_name(self, nr):
        if self.names is not None:
            try:
                s = self.names[nr]
                if int(s) != 0:
                    return s.string()
            except (gdb.error, gdb.MemoryError, IndexError):
                pass
        return "syscall_%d" % nr

    def arg_names(self, nr):
        if self.sys is None:
            return []
        try:
            a = self.sys.value()[nr]["args"]
            return [n for n in a.string().split(",") if n] if int(a) else []
        except (gdb.error, gdb.MemoryError, IndexError):
            return []

    def call_text(self, f):
        nr = int(f["in_call"]) - 1
        if nr < 0:
            return None
        if nr not in self.args:
            self.args[nr] = self.arg_names(nr)
        names = self.args[nr]
        count = len(names) if names else 6
        args = []
        try:
            p = f["in_args"].cast(self.long_p)
            for i in range(count):
                v = int(p[i])
                txt = str(v) if -65536 < v < 65536 else "%#x" % (v & (2**64 - 1))
                args.append("%s=%s" % (names[i], txt) if names else txt)
        except (gdb.error, gdb.MemoryError):
            args = ["<args unreadable>"]
        return "%s(%s)" % (self.call_name(nr), ", ".join(args))


def runtimes():
    found, nodebug, seen = [], [], set()
    for objfile in gdb.objfiles():
        sym = _objfile_symbol(objfile, "xsc__fibers")
        if sym is not None:
            # a library and its separate debug file (libxsc0-dbgsym, by
            # build id) are two objfiles of one runtime: listed once
            try:
                at = int(sym.value().address)
            except gdb.error:
                at = None
            if at is not None and at in seen:
                continue
            seen.add(at)
            found.append(Runtime(objfile, sym))
        elif _is_libxsc(objfile):
            nodebug.append(objfile.filename)
    if found:
        return found
    if nodebug:
        raise XscError(NO_DEBUG % ", ".join(nodebug))
    if _linked_in():
        raise XscError(NO_DEBUG % "linked into the program")
    raise XscError("xsc: no libxsc in this process")


def all_fibers():
    """(runtime, fiber) for every listed fiber of every runtime."""
    for rt in runtimes():
        for f in rt.walk():
            yield rt, f


def find_fiber(n):
    for rt, f in all_fibers():
        if int(f["id"]) == n:
            return rt, f
    raise XscError("xsc: no fiber %d (see info xsc-fibers)" % n)


_sites = {}


def symbolize(addr):
    """addr as `0x... <function + off> at file:line` (cached: fibers share
    the few places that create them)."""
    if addr not in _sites:
        _sites[addr] = _symbolize(addr)
    return _sites[addr]


def _symbolize(addr):
    if addr == 0:
        return "(the process's first thread)"
    try:
        out = gdb.execute("info symbol %#x" % addr, to_string=True).strip()
    except gdb.error:
        out = "No symbol"
    where = "%#x" % addr
    if not out.startswith("No symbol"):
        where += " <%s>" % out.split(" in section")[0]
    sal = gdb.find_pc_line(addr - 1)   # a return address: its call's line
    if sal.symtab is not None:
        where += " at %s:%d" % (sal.symtab.filename.split("/")[-1], sal.line)
    return where


# ---- a parked fiber's stack --------------------------------------------------

# The registers of a signal frame's ucontext (glibc's REG_* order, from
# uc_mcontext.gregs at offset 40): what a handler that returns to
# xsc__tp_restorer (stub_x86_64.S) goes back to.  gdb knows glibc's
# __restore_rt by name, not this one, and stopped at it: a thread that
# trapped into `xsc run` (SIGSYS) showed no frame of its own.
GREGS = ["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi",
         "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip"]


def _restorers():
    """Where xsc__tp_restorer is (libxsc-preload.so alone has one)."""
    try:
        out = gdb.execute("info address xsc__tp_restorer", to_string=True)
    except gdb.error:
        return set()
    m = re.search(r" at (?:address )?(0x[0-9a-f]+)", out)
    return {int(m.group(1), 16)} if m else set()


class FrameId:
    """A frame's id as gdb.unwinder asks for it."""

    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


def _ptr():
    return gdb.lookup_type("void").pointer()


class FiberUnwinder(gdb.unwinder.Unwinder):
    """While `regs` is set, the innermost frame of the selected thread
    returns into those registers (a parked fiber's); a frame at
    xsc__tp_restorer returns to where its signal came."""

    def __init__(self):
        super().__init__("xsc-fiber")
        self.regs = None
        self.level = 0
        self.restorers = set()

    def __call__(self, pending):
        if self.restorers:
            pc = int(pending.read_register("rip"))
            if pc in self.restorers:
                return self.sigframe(pending, pc)
        if self.regs is None or pending.level() != self.level:
            return None
        # The frame's id is below any fiber stack (sp 0): gdb checks that
        # each caller is outer to its callee, and a fiber's stack may lie
        # anywhere against the vcpu's.
        ident = FrameId(gdb.Value(0).cast(_ptr()), pending.read_register("rip"))
        info = pending.create_unwind_info(ident)
        for name, value in self.regs.items():
            info.add_saved_register(name, value)
        return info

    def sigframe(self, pending, pc):
        sp = pending.read_register("rsp")
        words = (sp + 40).cast(gdb.lookup_type("unsigned long").pointer())
        info = pending.create_unwind_info(FrameId(sp, gdb.Value(pc)))
        for i, name in enumerate(GREGS):
            info.add_saved_register(name, gdb.Value(int(words[i])).cast(_ptr()))
        return info


_unwinder = FiberUnwinder()
gdb.unwinder.register_unwinder(None, _unwinder, replace=True)


def _new_objfile(event):
    # looked up here, not in the unwinder, which must not run commands
    _unwinder.restorers = _restorers()


gdb.events.new_objfile.connect(_new_objfile)
_unwinder.restorers = _restorers()


def saved_regs(rt, f):
    """The registers a parked fiber resumes with, after xsc__ctx_swap."""
    sp = int(f["ctx"]["sp"])
    if sp == 0:
        raise XscError("xsc: fiber %d has no saved context" % int(f["id"]))
    words = gdb.Value(sp).cast(rt.u64_p)
    regs = {}
    for i, name in enumerate(SWITCH_FRAME):
        regs[name] = gdb.Value(int(words[1 + i])).cast(_ptr())
    regs["rip"] = gdb.Value(int(words[7])).cast(_ptr())    # the return address
    regs["rsp"] = gdb.Value(sp + 64).cast(_ptr())          # past it
    return regs


def with_fiber(rt, f, command, capture=True):
    """Runs a gdb command with f's stack as the selected thread's; the
    unwinder is switched off and gdb's frames forgotten however it ends.
    Returns the level of the borrowed thread's last frame and, if
    captured, the output."""
    state = int(f["state"])
    v = rt.running_on(f)
    if v is not None:
        return on_vcpu_thread(rt, f, v, command, capture)
    if state == 1:
        raise XscError("xsc: fiber %d is switching in or out: try again after "
                       "`stepi`, or see the vcpus' threads" % int(f["id"]))
    if state == 3:
        raise XscError("xsc: fiber %d is done: it has no stack" % int(f["id"]))
    if gdb.selected_thread() is None:
        raise XscError("xsc: no thread selected")
    frame = gdb.selected_frame()
    regs = saved_regs(rt, f)
    try:
        # the innermost frame that is a function's own (functions inlined
        # into it are frames gdb unwinds without asking an unwinder)
        inner = gdb.newest_frame()
        while inner.type() == gdb.INLINE_FRAME and inner.older() is not None:
            inner = inner.older()
        _unwinder.level = inner.level()
        _unwinder.regs = regs
        gdb.invalidate_cached_frames()
        first = gdb.newest_frame()
        for _ in range(_unwinder.level + 1):
            first = first.older()
        if first is None:
            raise XscError("xsc: fiber %d: no frame unwound from its context"
                           % int(f["id"]))
        first.select()
        # `frame K`: K as the fiber's backtrace numbers it
        m = re.match(r"(frame|f)\s+(\d+)\s*$", command)
        if m:
            command = "frame %d" % (int(m.group(2)) + _unwinder.level + 1)
        return _unwinder.level, gdb.execute(command, to_string=capture)
    finally:
        _unwinder.regs = None
        gdb.invalidate_cached_frames()
        try:
            frame.select()
        except gdb.error:
            pass


def vcpu_thread(rt, v):
    """gdb's thread for vcpu v: the one whose pthread_t is v->th (vcpu 0
    of xsc_main is the thread that called it: th 0, and then the
    process's first thread)."""
    threads = gdb.selected_inferior().threads()
    th = int(v["th"])
    for t in threads:
        try:
            if th and int.from_bytes(t.handle(), "little") == th:
                return t
        except (gdb.error, TypeError):
            pass
    if th == 0:
        pid = gdb.selected_inferior().pid
        for t in threads:
            if t.ptid[1] == pid:
                return t
    return None


def on_vcpu_thread(rt, f, v, command, capture):
    """A running fiber's stack is its vcpu's thread's: the command runs
    there, and the thread that was selected is selected again."""
    t = vcpu_thread(rt, v)
    if t is None:
        raise XscError("xsc: fiber %d runs on vcpu %d, whose thread gdb does not "
                       "show" % (int(f["id"]), int(v["id"])))
    old = gdb.selected_thread()
    frame = gdb.selected_frame()
    try:
        t.switch()
        return -1, gdb.execute(command, to_string=capture)
    finally:
        old.switch()
        try:
            frame.select()
        except gdb.error:
            pass


def renumber(level, out, drop):
    """Frame numbers as the fiber's own: frames 0..level are the
    borrowed thread's (left out of a backtrace: drop)."""
    lines, keep = [], True
    for line in out.splitlines():
        m = re.match(r"#(\d+)(\s+)(.*)", line)
        if m:
            n = int(m.group(1))
            keep = n > level or not drop
            if n > level:
                line = "#%-*d%s" % (len(m.group(1)) + len(m.group(2)),
                                    n - level - 1, m.group(3))
        if keep:
            lines.append(line)
    return "\n".join(lines) + "\n"


def fiber_backtrace(rt, f, args=""):
    level, out = with_fiber(rt, f, "backtrace " + args)
    return renumber(level, out, True)


# ---- commands -----------------------------------------------------------------

class InfoFibers(gdb.Command):
    """info xsc-fibers: every fiber of xsc's runtime, with its id (for
    xsc-fiber N), state (running, runnable, parked, blocked in a system
    call, done), vcpu, the system call it is in and its arguments, and the
    code that created it (NULL: the process's first thread)."""

    def __init__(self):
        super().__init__("info xsc-fibers", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        _sites.clear()          # addresses of this process, not the last one
        rows = []
        for rt, f in all_fibers():
            state = STATES.get(int(f["state"]), "state %d" % int(f["state"]))
            call = rt.call_text(f)
            v = rt.running_on(f)
            if v is not None:
                state = "running"
            if call and state == "parked":
                state = "blocked in " + call
            elif call and state == "running":
                state = "running in " + call
            if v is None and int(f["home"]) != 0:
                v = f["home"].dereference()
            vcpu = "-" if v is None else str(int(v["id"]))
            tid = int(f["vtid"]) if int(f["fs"]) != 0 else 0
            rows.append((int(f["id"]), tid, vcpu, state,
                         symbolize(int(f["created_at"]))))
        rows.sort()
        gdb.write("%d fibers\n" % len(rows))
        gdb.write("%5s %11s %4s  %-48s %s\n" % ("id", "tid", "vcpu", "state",
                                                "created at"))
        for n, tid, vcpu, state, site in rows:
            gdb.write("%5d %11s %4s  %-48s %s\n" % (n, tid or "-", vcpu, state,
                                                    site))


class FiberCommand(gdb.Command):
    """xsc-fiber N [bt [ARGS]] | xsc-fiber N COMMAND: fiber N's backtrace
    (the default), or any gdb command run with fiber N's stack in place of
    the selected thread's.  N is an id from info xsc-fibers."""

    def __init__(self):
        super().__init__("xsc-fiber", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        argv = arg.split(None, 1)
        if not argv or not argv[0].isdigit():
            raise XscError("usage: xsc-fiber N [bt [ARGS] | COMMAND]")
        rt, f = find_fiber(int(argv[0]))
        rest = argv[1].strip() if len(argv) > 1 else "bt"
        words = rest.split(None, 1)
        if words[0] in ("bt", "backtrace", "where"):
            gdb.write(fiber_backtrace(rt, f, words[1] if len(words) > 1 else ""))
        else:
            # not captured: gdb prints some (a frame's source line) to
            # its terminal whatever asks; frame numbers are gdb's there
            with_fiber(rt, f, rest, capture=False)


InfoFibers()
FiberCommand()
