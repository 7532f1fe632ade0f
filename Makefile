# mbdbench: make (library + mbd), make test, make report, make bench, make clean.
# Missing Debian packages are installed on first use (apt-get, as root).

CC      ?= gcc
OPT     ?= -O3 -march=native
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Wshadow -Iinclude -Ialgorithms -fopenmp
LDLIBS  += -ljansson -llapacke -lopenblas -lm -fopenmp

BUILD   := build
LIB     := $(BUILD)/libmbd.a
LIB_SRC := $(wildcard algorithms/*.c models/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_SRC := $(wildcard src/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(filter-out bench/peer_%.c,$(wildcard bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out tests/test_%.c,$(wildcard tests/*.c))

# Debian packages each goal needs; installed only when missing.
DEPS_BUILD  := gcc make pkg-config libopenblas-dev liblapacke-dev libjansson-dev
DEPS_TEST   := $(DEPS_BUILD) libcmocka-dev
DEPS_REPORT := $(DEPS_BUILD) gnuplot-nox hyperfine

.PHONY: all test report bench clean deps-build deps-test deps-report
all: deps-build mbd

define ensure_packages
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing" >&2; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >&2; \
	fi
endef

deps-build:  ; $(call ensure_packages,$(DEPS_BUILD))
deps-test:   ; $(call ensure_packages,$(DEPS_TEST))
deps-report: ; $(call ensure_packages,$(DEPS_REPORT))

$(BUILD)/%.o: %.c include/mbd.h $(wildcard algorithms/*.h) | deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	$(AR) rcs $@ $^

mbd: $(CLI_OBJ) $(LIB)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(wildcard tests/*.h) $(LIB) | deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $< $(TEST_SUPPORT) $(LIB) $(LDLIBS) -lcmocka -o $@

# Runs every test binary, then prints one closing line for all of them.
test: deps-test mbd $(TEST_BIN)
	@pass=0; fail=0; \
	for t in $(TEST_BIN); do \
	  if MBD=./mbd $$t; then pass=$$((pass+1)); else fail=$$((fail+1)); echo "FAILED: $$t" >&2; fi; \
	done; \
	echo "test binaries: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

clean:
	rm -rf $(BUILD) mbd mbd-bench
