# Thin wrapper around CMake.  `make demo` and `make test` install what they
# need (scripts/deps.sh), build, and run.
BUILD ?= build
ASAN_BUILD ?= build-asan
RELEASE_BUILD ?= build-release
CLANG_BUILD ?= build-clang
JOBS ?= $(shell nproc)
# Warnings are errors in the developers' builds (and so in CI); a plain
# `cmake` build, what a release is built with, leaves them warnings.
WERROR ?= ON

.PHONY: all build asan other-builds demo test test-fast clean install deps deb

all: build

build:
	@scripts/deps.sh build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DXSC_WERROR=$(WERROR) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

asan:
	@scripts/deps.sh build
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DXSC_SANITIZE=ON \
		-DXSC_WERROR=$(WERROR) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# Built, not run: gcc at the Release level (-O3, where gcc's flow-based
# warnings differ from -O2's) and clang, whose warnings are its own.
# The tests already ran on the same sources in the two builds above.
other-builds:
	@scripts/deps.sh test
	cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release \
		-DXSC_WERROR=$(WERROR) >/dev/null
	cmake --build $(RELEASE_BUILD) -j $(JOBS)
	cmake -S . -B $(CLANG_BUILD) -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=Release -DXSC_WERROR=$(WERROR) >/dev/null
	cmake --build $(CLANG_BUILD) -j $(JOBS)

# The main job: headline experiments, tables on the terminal, CSV and PNG
# plots in results/.
demo:
	@scripts/deps.sh demo
	$(MAKE) build
	scripts/demo.sh $(BUILD)

# The normal and ASan builds first (a warning stops it before any test
# runs), then every test in the normal build, again under ASan+UBSan,
# once more with io_uring forbidden by a seccomp filter (tests/nouring:
# the fallback executors, as in a container whose profile denies
# io_uring), the Release and clang builds, the install check, and the
# packages' check (make deb's packages installed with apt, used and
# purged).  In the no-io_uring pass the per-executor runs are the uring
# one only: there uring and sqpoll both become AUTO without a ring (the
# fallback, "a seccomp filter is active ... using syscall threads"), while
# worker and inline never try a ring and run exactly as in the normal
# pass (the filter changes only AUTO's choices).
# The normal pass runs beside the other two, which run one after the
# other, and the Release and clang builds and the packages' build (which
# deb-check then finds up to date) run beside all three at the idle
# priority (SCHED_IDLE: they take only the time no test wants);
# what runs beside is printed whole when all have ended.  On its own the
# normal pass kept about one of the two cores busy (566 s of time, 536 s
# of CPU, 2026-11-28), and make test is bound by its CPU time (1,400 to
# 1,640 s in six runs that day; 14m10s in all at 933d2f0).
# The suite's checks of time are lower bounds written for a loaded host,
# and its benchmarks compare ratios and counts taken side by side in one
# run, under the same load.
# Tests of the normal pass that run after the no-io_uring pass, in that
# lane: the normal pass's lane took 792 s of tests and the other 642 s
# (2026-11-28), so these two (56 s and 40 s there) even them out.
SIDE_TESTS = t_cpython t_accept_wrk
test:
	@scripts/deps.sh test
	$(MAKE) build asan
	@d=$$(mktemp -d); \
	{ chrt --idle 0 $(MAKE) --no-print-directory other-builds && \
	  { ! command -v dpkg-shlibdeps >/dev/null || \
	    chrt --idle 0 scripts/make-deb.sh $(BUILD) >/dev/null; }; } >$$d/builds 2>&1 & c=$$!; \
	{ XSC_TEST_SANITIZE=1 tests/run.sh $(ASAN_BUILD); s=$$?; \
	  XSC_TEST_LOGS=$(BUILD)/test-logs-nouring XSC_TEST_BACKENDS=uring \
	  $(BUILD)/tests/nouring tests/run.sh $(BUILD); n=$$?; \
	  XSC_TEST_LOGS=$(BUILD)/test-logs-side XSC_TEST_ONLY="$(SIDE_TESTS)" \
	  tests/run.sh $(BUILD); m=$$?; \
	  [ $$s -eq 0 ] && [ $$n -eq 0 ] && [ $$m -eq 0 ]; } >$$d/out 2>&1 & o=$$!; \
	XSC_TEST_EXCLUDE="$(SIDE_TESTS)" tests/run.sh $(BUILD); a=$$?; \
	wait $$o; b=$$?; wait $$c; r=$$?; \
	echo "== XSC_TEST_SANITIZE=1 tests/run.sh $(ASAN_BUILD), then XSC_TEST_BACKENDS=uring $(BUILD)/tests/nouring tests/run.sh $(BUILD), then the normal pass's $(SIDE_TESTS)"; \
	cat $$d/out; echo "== make other-builds, scripts/make-deb.sh (at the idle priority)"; cat $$d/builds; \
	rm -rf $$d; [ $$a -eq 0 ] && [ $$b -eq 0 ] && [ $$r -eq 0 ]
	scripts/install-check.sh $(BUILD)
	scripts/deb-check.sh $(BUILD)

test-fast: build
	tests/run.sh $(BUILD)

install: build
	cmake --install $(BUILD)

# libxsc0, libxsc-dev and xsc .deb files in $(BUILD), from a build for /usr
# of its own ($(BUILD)/deb; scripts/make-deb.sh)
deb:
	@scripts/deps.sh deb
	scripts/make-deb.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(RELEASE_BUILD) $(CLANG_BUILD)
