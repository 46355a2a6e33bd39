# Two entry points (see README.md):
#   make demo   install what is missing, build Release, audit the bundled GSM8K example
#   make test   build and run the whole ctest suite
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_OUT ?= out/demo

.PHONY: all deps configure build demo test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@echo "== leakaudit audit on examples/gsm8k (300 test questions, 1,007 dev questions with planted leaks)"
	@./$(BUILD)/leakaudit audit --dev examples/gsm8k/dev.jsonl --test examples/gsm8k/test.jsonl \
	    --text-field question --cutoff 2026-01-01 --out $(DEMO_OUT); rc=$$?; \
	  if [ $$rc -gt 1 ]; then exit $$rc; fi; \
	  echo; echo "== $(DEMO_OUT)/report.md"; sed -n '1,200p' $(DEMO_OUT)/report.md; \
	  echo; echo "Exit code $$rc (1 = leaks found, as planted). Reports are in $(DEMO_OUT)/"

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

clean:
	rm -rf $(BUILD) out
