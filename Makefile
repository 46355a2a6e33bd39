# Two entry points (see README.md):
#   make demo   install what is missing, build Release, audit the bundled GSM8K example
#   make test   build and run the whole ctest suite
#   make test-sanitize  the same suite built with AddressSanitizer and UBSan; any report fails it
#   make fuzz   every libFuzzer target for 60 s, the library instrumented (same build)
#   make install  build Release and install it (cmake --install) under PREFIX (default /usr/local)
#   make test-python  the Python package built from this tree into a venv (pip install .), and its pytest suite
BUILD ?= build
SAN_BUILD ?= build-sanitize
SAN_ENV = ASAN_OPTIONS=halt_on_error=1:exitcode=86:detect_leaks=1:strict_string_checks=1 \
          UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_OUT ?= out/demo
PREFIX ?= /usr/local
# CI's targets (test, test-sanitize, fuzz) treat compiler warnings as errors
WERROR ?= ON

.PHONY: all deps test-deps configure build demo test install test-python san-build test-sanitize fuzz bench clean

all: build

deps:
	@bash scripts/install-deps.sh

# what only the tests use besides (chromium for tests/cli/review_page.sh)
test-deps:
	@bash scripts/install-deps.sh --tests

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DLA_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@echo "== leakaudit audit on examples/gsm8k (300 test questions, 1,007 dev questions with planted leaks)"
	@./$(BUILD)/leakaudit audit --dev examples/gsm8k/dev.jsonl --test examples/gsm8k/test.jsonl \
	    --text-field question --cutoff 2026-01-01 --out $(DEMO_OUT); rc=$$?; \
	  if [ $$rc -gt 1 ]; then exit $$rc; fi; \
	  echo; echo "== $(DEMO_OUT)/report.md"; sed -n '1,200p' $(DEMO_OUT)/report.md; \
	  echo; echo "Exit code $$rc (1 = leaks found, as planted). Open $(DEMO_OUT)/report.html to review the links."

test: test-deps build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

# The wheel compiles the library again, without the tests, in PY_BUILD (kept: later runs are incremental).
PY_BUILD ?= build-python
test-python: deps
	@python3 -m venv $(PY_BUILD)/venv
	@$(PY_BUILD)/venv/bin/pip install -q -C build-dir=$(PY_BUILD)/cmake ".[test]"
	@$(PY_BUILD)/venv/bin/python -m pytest -q -p no:cacheprovider python/tests

# One clang build for both (CUDA off: the sanitizers do not see into device code): the library,
# the program and the tests with AddressSanitizer and UBSan (LA_SANITIZE) and libFuzzer's coverage
# instrumentation (LA_LIBFUZZER).
# test-sanitize runs the whole suite there, any sanitizer report failing it; fuzz runs every
# libFuzzer target for FUZZ_SECONDS from the committed corpus.
FUZZ_SECONDS ?= 60
SAN_CC ?= clang-14
SAN_CXX ?= clang++-14

san-build: deps
	@cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLA_WITH_CUDA=OFF \
	    -DLA_SANITIZE=address,undefined -DLA_LIBFUZZER=ON -DLA_WERROR=$(WERROR) \
	    -DCMAKE_C_COMPILER=$(SAN_CC) -DCMAKE_CXX_COMPILER=$(SAN_CXX) >/dev/null
	@cmake --build $(SAN_BUILD) -j$(JOBS)

test-sanitize: san-build
	@cd $(SAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -j$(JOBS)

fuzz: san-build
	@bash scripts/fuzz.sh $(SAN_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(PY_BUILD) out
