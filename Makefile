# Thin wrapper around CMake.  `make demo` and `make test` install what they
# need (scripts/deps.sh), build, and run.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)

.PHONY: all build asan demo test test-fast clean install deps

all: build

build:
	@scripts/deps.sh build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

asan:
	@scripts/deps.sh build
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DXSC_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The main job: headline experiments, tables on the terminal, CSV and PNG
# plots in results/.
demo:
	@scripts/deps.sh demo
	$(MAKE) build
	scripts/demo.sh $(BUILD)

# Every test in a normal build, then again under ASan+UBSan, then the
# install check.
test:
	@scripts/deps.sh test
	$(MAKE) build asan
	tests/run.sh $(BUILD)
	XSC_TEST_SANITIZE=1 tests/run.sh $(ASAN_BUILD)
	scripts/install-check.sh $(BUILD)

test-fast: build
	tests/run.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
