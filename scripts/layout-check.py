#!/usr/bin/env python3
r"""
scripts/layout-check.py - the tree's size and layout limits, checked.

    scripts/layout-check.py [--report] [--allow FILE] [--no-duplicates] [ROOT]

The limits:
  - no file in src/ over 700 lines, except the syscall table's rows
    (src/table/*.h, one designated initializer a call);
  - no file in src/preload/signals/ over 400 lines;
  - no C function in src/, bench/ or tools/ over 80 lines, counted from
    the line its name is on to its closing brace;
  - src/sched/ includes nothing from src/preload/ ("preload/..." or
    "../preload/...");
  - the tests/tp programs take CHECK from the shared tests/tp/tp.h: none
    defines its own;
  - the `duplicates` tool, where it is installed, shows at most 5 pairs
    that are not boilerplate;
  - README.md is at most 250 lines;
  - a .c or .h file in src/ that opens with a comment (blank lines before
    it aside) keeps that comment to at most 20 lines, from the line it
    starts on to the line it ends on: what the file is for and its rules,
    the rationale in docs/;
  - no text in src/, bench/, tools/, tests/, docs/ or README.md names how
    the code was made: nothing matches `\b[Ii]ssues? #?[0-9]+` or
    `\(#[0-9]+\)` (files holding a NUL byte are not read).

Every violation is one line, "KEY: what", where KEY names the file (and
the function, the word "header", or the text found) and never a line
number, so that it survives edits elsewhere in the file (the line
number, where there is one, follows in brackets).  A violation whose
line is in the allowlist (scripts/layout-allow.txt: the limits the tree
did not yet meet when this check arrived) is printed as "still over" and
does not fail, as long as its number has not grown past the listed one;
any other fails the check (exit 1).  An allowlist line that matches
nothing is reported (the limit is met now: delete the line, so that it
stays met).  --report prints everything and exits 0.

Functions are found by reading the C text (comments, strings and
preprocessor lines set aside) and matching braces: a brace at file level
that follows a ")" opens a function body.  House style puts a function's
opening and closing brace in column 0, and on this tree the two readings
agree but for one-line functions ("static int f(void) { return 0; }"),
which brace matching reads as well; a function defined twice under
#if/#else is counted twice (its second key gets "#2").
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

FILE_LIMIT = 700
SIGNALS_LIMIT = 400
FUNC_LIMIT = 80
DUP_LIMIT = 5
README_LIMIT = 250
HEADER_LIMIT = 20
FUNC_DIRS = ("src/", "bench/", "tools/")
C_EXT = (".c", ".h")


def tracked_files(root):
    """The files git knows or would add (tracked, and untracked but not
    ignored); every file below root outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            check=True, capture_output=True, text=True).stdout
        names = [n for n in out.split("\0") if n]
        return sorted(n for n in set(names)
                      if os.path.isfile(os.path.join(root, n)))
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            for f in files:
                names.append(os.path.relpath(os.path.join(d, f), root))
        return sorted(names)


def read_text(root, name):
    with open(os.path.join(root, name), encoding="utf-8",
              errors="replace") as f:
        return f.read()


def count_lines(text):
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def blank_c(text):
    """text with comments, string and character literals and preprocessor
    lines replaced by spaces, newlines kept (so offsets and line numbers
    stay those of the source)."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while j < n:  # the directive, with its continuation lines
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                if text.startswith("/*", j):  # a comment inside it
                    e = text.find("*/", j + 2)
                    j = n if e < 0 else e + 2
                    continue
                j += 1
            blank(i, j)
            i = j
            continue
        line_start = False
        if c == "\n":
            line_start = True
            i += 1
        elif text.startswith("/*", i):
            e = text.find("*/", i + 2)
            e = n if e < 0 else e + 2
            blank(i, e)
            i = e
        elif text.startswith("//", i):
            e = text.find("\n", i)
            e = n if e < 0 else e
            blank(i, e)
            i = e
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


NOT_NAMES = {"__attribute__", "__attribute", "__typeof__", "typeof",
             "__declspec", "if", "for", "while", "switch", "return",
             "sizeof", "_Alignas", "alignas", "__asm__", "asm"}


def functions(text):
    """(name, line of the name, line of the closing brace) of each
    function defined in C text; raises ValueError where the braces do
    not balance."""
    code = blank_c(text)
    line_of = []
    ln = 1
    for ch in code:
        line_of.append(ln)
        if ch == "\n":
            ln += 1
    found = []
    depth = 0
    decl_start = 0  # where the declaration before a file-level { begins
    open_at = None
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[decl_start:i].rstrip()
                open_at = i if head.endswith(")") else None
                if open_at is not None:
                    head_at = decl_start
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced } on line %d" % line_of[i])
            if depth == 0:
                if open_at is not None:
                    found.append(_function(code, line_of, head_at, open_at, i))
                    open_at = None
                decl_start = i + 1
        elif ch == ";" and depth == 0:
            decl_start = i + 1
    if depth != 0:
        raise ValueError("unbalanced { (%d open at the end)" % depth)
    return found


def _function(code, line_of, head_at, open_at, close_at):
    head = code[head_at:open_at]
    for m in re.finditer(r"([A-Za-z_]\w*)\s*\(", head):
        if m.group(1) not in NOT_NAMES:
            return (m.group(1), line_of[head_at + m.start(1)],
                    line_of[close_at])
    return ("?", line_of[open_at], line_of[close_at])


def check_files(root, names):
    """Yields (key, number or None, message, detail)."""
    for name in names:
        if not name.startswith("src/"):
            continue
        if re.match(r"src/table/[^/]+\.h$", name):
            continue  # the syscall table's rows
        try:
            n = count_lines(read_text(root, name))
        except OSError:
            continue
        limit = FILE_LIMIT
        if name.startswith("src/preload/signals/"):
            limit = SIGNALS_LIMIT
        if n > limit:
            yield (name, n, "%d lines (limit %d)" % (n, limit), "")


def check_functions(root, names):
    for name in names:
        if not name.startswith(FUNC_DIRS) or not name.endswith(C_EXT):
            continue
        text = read_text(root, name)
        try:
            funcs = functions(text)
        except ValueError as e:
            yield (name + " unread", None,
                   "cannot find its functions: %s" % e, "")
            continue
        seen = {}
        for fn, first, last in funcs:
            seen[fn] = seen.get(fn, 0) + 1
            # a name defined twice (#if/#else) keeps its keys apart
            key = "%s:%s()" % (name, fn)
            if seen[fn] > 1:
                key += "#%d" % seen[fn]
            n = last - first + 1
            if n > FUNC_LIMIT:
                yield (key, n, "%d lines (limit %d)" % (n, FUNC_LIMIT),
                       "line %d" % first)


INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^">]*)[">]', re.M)


def check_includes(root, names):
    for name in names:
        if not name.startswith("src/sched/"):
            continue
        text = read_text(root, name)
        for m in INCLUDE_RE.finditer(text):
            path = m.group(1)
            if path.startswith("preload/") or "../preload" in path:
                line = text.count("\n", 0, m.start()) + 1
                yield ("%s -> %s" % (name, path), None,
                       "src/sched/ includes nothing from src/preload/",
                       "line %d" % line)


def check_readme(root, names):
    if "README.md" in names:
        n = count_lines(read_text(root, "README.md"))
        if n > README_LIMIT:
            yield ("README.md", n, "%d lines (limit %d)" % (n, README_LIMIT),
                   "")


def opening_comment(text):
    """The number of lines of the comment text opens with (blank lines
    before it aside), or 0 if it opens with anything else."""
    body = text.lstrip()
    if body.startswith("/*"):
        end = body.find("*/", 2)
        end = len(body) if end < 0 else end
        return body.count("\n", 0, end) + 1
    if body.startswith("//"):
        n = 0
        for line in body.split("\n"):
            if not line.lstrip().startswith("//"):
                break
            n += 1
        return n
    return 0


def check_headers(root, names):
    for name in names:
        if not name.startswith("src/") or not name.endswith(C_EXT):
            continue
        n = opening_comment(read_text(root, name))
        if n > HEADER_LIMIT:
            yield (name + " header", n,
                   "%d lines of opening comment (limit %d; the rest "
                   "belongs in docs/)" % (n, HEADER_LIMIT), "")


PROVENANCE_DIRS = ("src/", "bench/", "tools/", "tests/", "docs/")
PROVENANCE_RE = re.compile(r"\b[Ii]ssues? #?[0-9]+|\(#[0-9]+\)")


def check_provenance(root, names):
    for name in names:
        if not name.startswith(PROVENANCE_DIRS) and name != "README.md":
            continue
        text = read_text(root, name)
        if "\0" in text:
            continue  # a binary file: an image, a build product
        for m in PROVENANCE_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            yield ('%s "%s"' % (name, m.group(0)), None,
                   "names how the code was made, not what it does",
                   "line %d" % line)


CHECK_DEF_RE = re.compile(r"^\s*#\s*define\s+CHECK\b", re.M)


def check_tp(root, names):
    for name in names:
        if re.match(r"tests/tp/[^/]+\.c$", name):
            if CHECK_DEF_RE.search(read_text(root, name)):
                yield (name + " CHECK", None,
                       "defined here, not taken from tests/tp/tp.h", "")


def check_duplicates(root, seconds):
    tool = shutil.which("duplicates")
    if tool is None:
        print("note: `duplicates` is not installed: repeated code not checked")
        return
    out = subprocess.run([tool, "--most", "200", "--seconds", str(seconds)],
                         cwd=root, capture_output=True, text=True).stdout
    rows = [l for l in out.splitlines() if re.match(r"D\d+ ", l)]
    # the syscall table's rows are data, one initializer a call: alike
    # by format, not repeated logic
    real = [l for l in rows if not l.endswith("boilerplate")
            and "boilerplate (+" not in l
            and not re.search(r"src/table/[^/ ]+\.h:", l)]
    incomplete = [l for l in out.splitlines() if l.startswith("incomplete:")]
    if incomplete:
        print("note: duplicates did not finish (%s): repeated code not checked"
              % incomplete[0])
        return
    if len(real) > DUP_LIMIT:
        yield ("duplicates", len(real),
               "%d real repeated pairs (limit %d)" % (len(real), DUP_LIMIT),
               "\n".join("    " + l for l in real))


def load_allow(path):
    """{key: number or None} from the allowlist, whose lines are
    violation lines as the check prints them ("KEY: N lines ..."), with
    or without "still over: " before them; '#' starts a comment line."""
    allow = {}
    if not path or not os.path.exists(path):
        return allow
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("still over: "):
                line = line[len("still over: "):]
            key, _, msg = line.partition(": ")
            m = re.match(r"(\d+) ", msg)
            allow[key] = int(m.group(1)) if m else None
    return allow


def main():
    ap = argparse.ArgumentParser(description="the tree's size and layout "
                                 "limits (see the top of this file)")
    ap.add_argument("root", nargs="?", default=None,
                    help="the tree (default: this script's ..)")
    ap.add_argument("--report", action="store_true",
                    help="list every violation, allowed or not; exit 0")
    ap.add_argument("--allow", default=None,
                    help="allowlist (default: scripts/layout-allow.txt)")
    ap.add_argument("--no-duplicates", action="store_true",
                    help="do not run the duplicates tool")
    ap.add_argument("--seconds", type=int, default=120,
                    help="time the duplicates tool may take")
    a = ap.parse_args()
    root = a.root or os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    allow_path = a.allow or os.path.join(root, "scripts", "layout-allow.txt")
    allow = {} if a.report else load_allow(allow_path)

    names = tracked_files(root)
    found = []
    for gen in (check_files(root, names), check_functions(root, names),
                check_includes(root, names), check_tp(root, names),
                check_readme(root, names), check_headers(root, names),
                check_provenance(root, names)):
        found.extend(gen)
    if not a.no_duplicates:
        found.extend(check_duplicates(root, a.seconds))

    bad = still = 0
    keys = set()
    for key, num, msg, detail in found:
        keys.add(key)
        line = "%s: %s" % (key, msg)
        where = ("  [%s]" % detail) if detail and "\n" not in detail else ""
        if key in allow and (num is None or allow[key] is None
                             or num <= allow[key]):
            still += 1
            print("still over: " + line + where)
        else:
            bad += 1
            grown = (" (the allowlist says %d)" % allow[key]
                     if key in allow and allow[key] is not None else "")
            print(line + grown + where)
        if "\n" in detail:
            print(detail)
    for key in sorted(set(allow) - keys):
        if key != "duplicates" or not a.no_duplicates:
            print("met now, delete its line from %s: %s" % (
                os.path.relpath(allow_path, root), key))
    if a.report:
        print("%d violations" % (bad + still))
        return 0
    print("%d violations, %d of them allowed for now (%s)" % (
        bad + still, still, os.path.relpath(allow_path, root)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
