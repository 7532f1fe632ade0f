# mbdbench: make (library + mbd), make test, make report, make bench, make install, make clean.
# Missing Debian packages are installed on first use (apt-get, as root).

CC      ?= gcc
OPT     ?= -O3 -march=native -flto=auto
# gcc-ar: an archiver that understands the LTO objects of -flto
AR      := gcc-ar
CFLAGS  ?= $(OPT) -g
# libxml2 reads URDF (models/model_urdf.c); pkg-config may come only with deps-build.
XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null || echo -I/usr/include/libxml2)
XML_LIBS   := $(shell pkg-config --libs libxml-2.0 2>/dev/null || echo -lxml2)
CFLAGS  += -std=c11 -ffp-contract=fast -fno-tree-slp-vectorize -D_DEFAULT_SOURCE -Wall -Wextra -Wshadow -Iinclude -Ialgorithms -fopenmp \
           $(XML_CFLAGS)
# OpenBLAS's OpenMP build, whatever the system's libblas/liblapack alternative is: the
# pthread build's per-call locking dominates small factorizations and serializes OpenMP
# batches. Linked ahead of LAPACKE so that its dpotrf/dpotrs resolve there; DT_RPATH (not
# RUNPATH) so that LAPACKE's own liblapack.so.3 also comes from that directory.
OPENBLAS_DIR := /usr/lib/$(shell $(CC) -print-multiarch)/openblas-openmp
BLAS_LIBS := $(OPENBLAS_DIR)/libopenblas.so.0 -Wl,--disable-new-dtags,-rpath,$(OPENBLAS_DIR)
LDLIBS  += -lsundials_arkode -lsundials_cvode -lsundials_nvecserial -ljansson $(XML_LIBS) \
           $(BLAS_LIBS) -llapacke -lmvec -lm -fopenmp

BUILD   := build
LIB     := $(BUILD)/libmbd.a
LIB_SRC := $(wildcard algorithms/*/*.c models/*.c)
# The library's C++ (algorithms/derivatives/automatic.cc, for its operators alone): the same
# driver and flags as its C, less -std=c11, with no exceptions, RTTI or C++ library, so
# that libmbd.a links as C (every build of the library compiles it: CXX_OF). No LTO: its
# dual sweeps, minutes of optimization, would be compiled again at every link. Its 64-byte
# vectors pass between inline functions alone: no ABI concerns them (-Wno-psabi).
# Compiled by clang++ (DUAL_CXX; the sanitizer build keeps gcc for its runtime): 40 s
# instead of gcc's 110, and gcc turns the dual's vector of 16 doubles into memory traffic
# (docs/derivatives.md); gcc's -flto and its vectorizer flag are not clang's.
LIB_CXX_SRC := $(wildcard algorithms/*/*.cc)
DUAL_CXX    ?= clang++-14
CXX_OF = $(filter-out -std=c11 -flto% -fno-tree-slp-vectorize,$(1)) -std=gnu++17 -fno-exceptions \
         -fno-rtti -fno-sanitize=vptr -fno-lto -Wno-psabi
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_CXX_SRC:%.cc=$(BUILD)/%.o)
# MPI (src/par.h): where Open MPI's compiler wrapper is found, mbd and mbd-bench join MPI
# jobs (src/par_mpi.c); without it they run alone (src/par_serial.c). `make test` installs
# Open MPI (DEPS_TEST) and runs again so that this sees it.
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
PAR_SRC    := src/$(if $(MPI_LIBS),par_mpi,par_serial).c
CLI_SRC := $(filter-out src/par_%.c,$(wildcard src/*.c)) $(PAR_SRC)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
# What mbd-bench and the MuJoCo peer take from src/ (they sit above it): the CLI helpers,
# the timing core and the workloads, which `mbd recommend` uses too.
SRC_SHARED_OBJ := $(addprefix $(BUILD)/src/,cli.o timing.o workload.o)
BENCH_SRC := $(filter-out bench/peer_%.c,$(wildcard bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out tests/test_%.c,$(wildcard tests/*.c))

# Debian packages each goal needs; installed only when missing.
DEPS_BUILD  := gcc g++ clang-14 make pkg-config libopenblas-dev libopenblas0-openmp liblapacke-dev libjansson-dev \
               libsundials-dev libxml2-dev
DEPS_TEST   := $(DEPS_BUILD) libcmocka-dev libopenmpi-dev openmpi-bin universal-ctags $(DEPS_VENV)
DEPS_REPORT := $(DEPS_BUILD) gnuplot-nox hyperfine jq valgrind gawk bc libopenmpi-dev openmpi-bin
DEPS_BROWSER := chromium python3-websocket

.PHONY: all test report bench clean deps-build deps-test deps-report
all: deps-build mbd

define ensure_packages
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing" >&2; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >&2; \
	fi
endef

# ---- the Python environment .venv/ (python/requirements.txt; make's every goal) --------
# Debian's interpreter makes it; pip installs the pinned packages, no others (--no-deps:
# the file lists each dependency). The published models that the tests compare with
# MuJoCo (python/requirements-models.txt) join it for the tests alone.
VENV          := .venv
SYSTEM_PYTHON := /usr/bin/python3
VENV_STAMP    := $(VENV)/requirements.txt
MODELS_STAMP  := $(VENV)/requirements-models.txt
DEPS_VENV     := python3-venv python3-dev
.PHONY: deps-venv venv venv-models
deps-venv: ; $(call ensure_packages,$(DEPS_VENV))
venv: $(VENV_STAMP)
venv-models: $(MODELS_STAMP)
$(VENV_STAMP): python/requirements.txt | deps-venv
	@echo "making $(VENV)/ from $< (pip)" >&2
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps -r $< >&2
	cp $< $@
$(MODELS_STAMP): python/requirements-models.txt $(VENV_STAMP)
	@echo "installing the published models of $< into $(VENV)/ (pip)" >&2
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps -r $< >&2
	cp $< $@

deps-build:  ; $(call ensure_packages,$(DEPS_BUILD))
deps-test:   ; $(call ensure_packages,$(DEPS_TEST))
deps-report: ; $(call ensure_packages,$(DEPS_REPORT))

$(BUILD)/%.o: %.c include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/%.o: %.cc include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-build
	@mkdir -p $(dir $@)
	$(DUAL_CXX) $(call CXX_OF,$(CFLAGS)) -c $< -o $@

# The GPU's kernels (algorithms/gpu/gpu_kernels.c) as PTX by clang, with no CUDA toolkit
# (-nocudainc -nocudalib: no libc on the GPU), checked for each kernel's .entry, and
# embedded in the library as mbd_gpu_ptx; without clang, an empty one (no GPU kernels).
CUDA_CLANG ?= $(firstword $(shell command -v clang clang-14 2>/dev/null))
GPU_PTX    := $(BUILD)/algorithms/gpu/gpu_kernels.ptx
GPU_ENTRIES = $(shell sed -n 's/.*X([a-z_]*, [A-Z_]*, \(mbd_gpu_[a-z_]*\), \(mbd_gpu_[a-z_]*\)).*/\1 \2/p' \
                algorithms/gpu/gpu.h)
$(GPU_PTX): algorithms/gpu/gpu_kernels.c include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h algorithms/*/*.c)
	@mkdir -p $(dir $@)
	@if [ -z "$(CUDA_CLANG)" ]; then echo "no clang: a library without GPU kernels" >&2; : > $@; exit 0; fi; \
	set -x; $(CUDA_CLANG) -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
	  -O3 -S -Wno-unknown-cuda-version -Iinclude -Ialgorithms $< -o $@.tmp && \
	for e in $(GPU_ENTRIES); do grep -q "^.visible .entry $$e[(]" $@.tmp || \
	  { echo "$@: no .entry $$e" >&2; exit 1; }; done && mv $@.tmp $@
$(BUILD)/algorithms/gpu/gpu_ptx.c: $(GPU_PTX)
	{ echo 'const char mbd_gpu_ptx[] = {'; od -An -v -tx1 $< | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0};'; } > $@
# Where the CUDA toolkit's ptxas is (never needed: without it, or with GPU_PTXAS= for a
# PTX-only library, the fatbin is empty and the driver compiles the PTX): the PTX assembled
# for each of GPU_ARCHS, ptxas -v's registers, stack and spills of each kernel kept beside
# the cubin (.ptxas.txt; a warning where one spills), and the cubins with the PTX in one
# compressed fatbin, embedded as mbd_gpu_fatbin (.incbin: 2 MB), which the library loads
# before the PTX (gpu.c: gpu_image). A build that changes GPU_PTXAS needs its own BUILD.
GPU_PTXAS  ?= $(firstword $(shell command -v ptxas /usr/local/cuda/bin/ptxas 2>/dev/null))
GPU_ARCHS  := sm_80 sm_90
GPU_CUBINS := $(GPU_ARCHS:%=$(BUILD)/algorithms/gpu/gpu_kernels.%.cubin)
GPU_FATBIN := $(BUILD)/algorithms/gpu/gpu_kernels.fatbin
$(BUILD)/algorithms/gpu/gpu_kernels.%.cubin: $(GPU_PTX)
	@if [ ! -s $< ]; then : > $@; exit 0; fi; set -x; \
	$(GPU_PTXAS) -v -O3 --gpu-name $* $< -o $@ 2> $(@:.cubin=.ptxas.txt) || \
	  { cat $(@:.cubin=.ptxas.txt) >&2; rm -f $@; exit 1; }; \
	! grep -q '[1-9][0-9]* bytes spill' $(@:.cubin=.ptxas.txt) || \
	  echo "warning: a GPU kernel spills registers on $* ($(@:.cubin=.ptxas.txt))" >&2
ifneq ($(GPU_PTXAS),)
$(GPU_FATBIN): $(GPU_CUBINS) $(GPU_PTX)
	@if [ ! -s $(GPU_PTX) ]; then : > $@; exit 0; fi; set -x; \
	$(dir $(GPU_PTXAS))fatbinary --create=$@ --compress-all \
	  $(foreach a,$(GPU_ARCHS),--image3=kind=elf,sm=$(a:sm_%=%),file=$(BUILD)/algorithms/gpu/gpu_kernels.$(a).cubin) \
	  --image3=kind=ptx,sm=80,file=$(GPU_PTX)
else
$(GPU_FATBIN):
	@mkdir -p $(dir $@) && : > $@ && echo "no ptxas: the driver will compile the GPU's PTX" >&2
endif
$(BUILD)/algorithms/gpu/gpu_fatbin.c: $(GPU_FATBIN)
	printf '%s\n' '/* $< (empty: none): the bytes from mbd_gpu_fatbin to mbd_gpu_fatbin_end */' \
	  '__asm__(".section .rodata\n.balign 64\n.globl mbd_gpu_fatbin\nmbd_gpu_fatbin:\n"' \
	  '        ".incbin \"$(abspath $<)\"\n.globl mbd_gpu_fatbin_end\nmbd_gpu_fatbin_end:\n.previous");' > $@
# The library's generated sources: every build of the library (sanitizers, fuzzing, Python)
# compiles them beside LIB_SRC.
LIB_GEN_SRC := $(BUILD)/algorithms/gpu/gpu_ptx.c $(BUILD)/algorithms/gpu/gpu_fatbin.c
$(LIB_GEN_SRC:.c=.o): $(BUILD)/algorithms/gpu/%.o: $(BUILD)/algorithms/gpu/%.c
	$(CC) $(CFLAGS) -c $< -o $@
LIB_OBJ += $(LIB_GEN_SRC:.c=.o)
# The library's C objects carry machine code beside their LTO IR (-ffat-lto-objects), so
# that the test binaries link without LTO (-fno-lto, their rule below): a second each
# instead of a minute of optimizing the library again at every link. mbd, mbd-bench, the
# Python module and programs that link the installed library with -flto still get LTO.
$(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_GEN_SRC:.c=.o): CFLAGS += -ffat-lto-objects
# The fatbin's symbols come from top-level asm, which an LTO object's symbol table leaves
# out (a link would not take the object from the archive): a plain object.
$(BUILD)/algorithms/gpu/gpu_fatbin.o: CFLAGS += -fno-lto

# Made anew each time, so that a source moved or removed leaves no stale member behind.
$(LIB): $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/src/par_mpi.o: CFLAGS += $(MPI_CFLAGS)
$(CLI_OBJ): $(wildcard src/*.h)

mbd $(BUILD)/mbd: $(CLI_OBJ) $(LIB)
	$(CC) $(CFLAGS) $^ $(LDLIBS) $(MPI_LIBS) -o $@

# The tests load the plugins of this build (make plugins): TEST_PLUGINS, MBD_TEST_PLUGINS.
TEST_PLUGINS := -DMBD_TEST_PLUGINS='"$(BUILD)/plugins"'
$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(wildcard tests/*.h) $(LIB) | deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TEST_PLUGINS) -fno-lto -Itests $< $(TEST_SUPPORT) $(LIB) $(LDLIBS) -lcmocka -o $@

# Runs every test binary, then prints one closing line for all of them. A second make
# builds them, so that it sees what deps-test installed (Open MPI).
$(BUILD)/tests/test_mpi: CFLAGS += -DMBD_WITH_MPI=$(if $(MPI_LIBS),1,0)
$(BUILD)/tests/test_gpu: CFLAGS += -DMBD_BUILD_FATBIN=$(if $(GPU_PTXAS),1,0)
# test_gpu reads bench/gpu.sh's settings as mbd-gpu-bench does (bench/gpu/gpu_env.c)
GPU_ENV := bench/gpu/gpu_env.c bench/gpu/gpu_env.h
$(BUILD)/tests/test_gpu: TEST_SUPPORT += bench/gpu/gpu_env.c
$(BUILD)/tests/test_gpu: $(GPU_ENV)
# Scripts that check the sources themselves: tests/test_tags.py (ctags, .ctags.d/).
TEST_SCRIPTS := tests/test_tags.py
test: deps-test venv-models
	@$(MAKE) --no-print-directory -j$$(nproc) test-run
.PHONY: test-run
test-run: floors mbd mbd-bench $(TEST_BIN) python-ext
	@pass=0; fail=0; \
	for t in $(TEST_BIN) $(TEST_SCRIPTS); do \
	  if MBD=./mbd $$t; then pass=$$((pass+1)); else fail=$$((fail+1)); echo "FAILED: $$t" >&2; fi; \
	done; \
	if MBD=./mbd MBD_TEST_PLUGINS=$(BUILD)/plugins PYTHONPATH=python $(PYTHON) -m pytest -q -p no:cacheprovider python/tests; \
	then pass=$$((pass+1)); else fail=$$((fail+1)); echo "FAILED: python/tests" >&2; fi; \
	echo "binaries: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# The floors of algorithms/ (its README.md): from the library's objects' symbols, no call
# from a folder to one not below it.
.PHONY: floors
floors: $(LIB)
	@sh algorithms/floors.sh $(BUILD)

# The house style (.clang-format; Debian's clang-format 14): format-check, in .ci/run, fails
# on any file that clang-format would change; format rewrites them.
FORMAT_SRC = $(shell git ls-files '*.c' '*.h' '*.cc')
.PHONY: format format-check
format-check:
	$(call ensure_packages,clang-format)
	clang-format --dry-run --Werror $(FORMAT_SRC)
format:
	$(call ensure_packages,clang-format)
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf $(BUILD) mbd mbd-bench python/mbdbench/_mbdbench.*.so

# ---- plugins (include/mbd_plugin.h, docs/plugins.md) -----------------------------------
# A plugin calls the public API of the program that loads it, so mbd, mbd-bench and
# test_plugins export it: every function that include/mbd.h or mbd_plugin.h declares
# (but the plugins' own mbd_plugin_solvers) is kept (-u, also one the program never calls)
# and put in the dynamic symbol table (--dynamic-list, which LTO keeps too).
API_HEADERS := include/mbd.h include/mbd_plugin.h
API_NAMES   := $(shell cat $(API_HEADERS) | tr '\n' ' ' | grep -oP '[a-z_*][a-z0-9_ *]* [*]*mbd_[a-z0-9_]*\x28' | \
                 grep -vP '\x28[*]' | sed 's/.*\(mbd_[a-z0-9_]*\)\x28$$/\1/' | grep -vx mbd_plugin_solvers | sort -u)
API_FILES   := $(BUILD)/api.list $(BUILD)/api.undefined
API_EXPORT   = -Wl,--dynamic-list=$(BUILD)/api.list -Wl,@$(BUILD)/api.undefined
$(BUILD)/api.list: $(API_HEADERS)
	@mkdir -p $(dir $@)
	@printf '{\n%s\n};\n' "$(API_NAMES:%=%;)" > $@
$(BUILD)/api.undefined: $(API_HEADERS)
	@mkdir -p $(dir $@)
	@printf -- '-u %s\n' $(API_NAMES) > $@
$(LIB_OBJ) $(CLI_OBJ) $(BENCH_OBJ): include/mbd_plugin.h
PLUGIN_HOSTS := mbd mbd-bench $(BUILD)/mbd $(BUILD)/mbd-bench $(BUILD)/tests/test_plugins \
                $(BUILD)/tests/test_pinocchio $(BUILD)/tests/test_mujoco_plugin
$(PLUGIN_HOSTS): LDLIBS += $(API_EXPORT)
$(PLUGIN_HOSTS): | $(API_FILES)

# The example plugin (examples/plugins/) and the faulty ones that tests/test_plugins.c
# loads: tests/plugins/faulty.c, one library per fault, built with only the public headers.
PLUGIN_CFLAGS  := -O2 -g -std=c11 -Wall -Wextra -Iinclude -fPIC -shared
EXAMPLE_PLUGIN := $(BUILD)/plugins/textbook.so
PLUGIN_FAULTS  := no_table_function null_table negative_count huge_count wrong_abi null_name \
                  space_name long_name builtin_name twin_names null_summary null_work_new \
                  null_work_free null_forward dash_name row_name simd_name nan_result \
                  work_new_fails not_a_status mixed_abi method_name
# faulty_abi1.so and textbook_abi1.so: no fault, built against ABI 1's header (a plugin
# built before ABI 2), which must keep loading.
OLDER_PLUGINS  := $(BUILD)/plugins/faulty_abi1.so $(BUILD)/plugins/textbook_abi1.so
FAULTY_PLUGINS := $(PLUGIN_FAULTS:%=$(BUILD)/plugins/faulty_%.so) $(OLDER_PLUGINS)
$(EXAMPLE_PLUGIN): examples/plugins/textbook.c $(API_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) $< -o $@
$(BUILD)/plugins/faulty_%.so: tests/plugins/faulty.c $(API_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -DFAULT_$(shell echo $* | tr a-z A-Z) $< -o $@
$(BUILD)/plugins/faulty_abi1.so: tests/plugins/faulty.c tests/plugins/abi1/mbd_plugin.h include/mbd.h
	@mkdir -p $(dir $@)
	$(CC) -Itests/plugins/abi1 $(PLUGIN_CFLAGS) -DOLDER_ABI $< -o $@
$(BUILD)/plugins/textbook_abi1.so: examples/plugins/textbook.c tests/plugins/abi1/mbd_plugin.h include/mbd.h
	@mkdir -p $(dir $@)
	$(CC) -Itests/plugins/abi1 $(PLUGIN_CFLAGS) $< -o $@
.PHONY: plugins
plugins: $(EXAMPLE_PLUGIN) $(FAULTY_PLUGINS)
test-run test-sanitize: plugins

# ---- make python: the package mbdbench in place (python/; docs/python.md) ----------------
# An extension module is a shared object: the library's sources compiled again with -fPIC
# into build/python/, linked with python/ext/ into python/mbdbench/, for the interpreter
# and numpy of .venv/ (Debian's python3 with pip's numpy; its headers first, before
# Python's include directory, where Debian's python3-numpy puts its own).
PYTHON        := $(VENV)/bin/python
PY_INCLUDE     = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
PY_SUFFIX      = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
NUMPY_INCLUDE  = $(shell $(PYTHON) -c 'import numpy; print(numpy.get_include())' 2>/dev/null)
PY_BUILD      := $(BUILD)/python
PY_EXT_SRC    := $(wildcard python/ext/*.c)
# The wheel (WHEEL_PIC, set by wheel-files) compiles the library once: its objects in
# $(BUILD) are the extension's (-fPIC, hidden but the API), which mbd and mbd-bench link too.
ifdef WHEEL_PIC
PY_LIB_OBJ    := $(LIB_OBJ)
$(LIB_OBJ): CFLAGS += -fPIC -fvisibility=hidden
else
PY_LIB_OBJ    := $(LIB_SRC:%.c=$(PY_BUILD)/%.o) $(LIB_GEN_SRC:%.c=$(PY_BUILD)/%.o) \
                 $(LIB_CXX_SRC:%.cc=$(PY_BUILD)/%.o)
endif
PY_OBJ        := $(PY_LIB_OBJ) $(PY_EXT_SRC:%.c=$(PY_BUILD)/%.o)
PY_EXT         = python/mbdbench/_mbdbench$(PY_SUFFIX)
DEPS_PYTHON   := $(DEPS_BUILD) $(DEPS_VENV)

.PHONY: python python-ext deps-python
deps-python: ; $(call ensure_packages,$(DEPS_PYTHON))
python: deps-python venv
	@$(MAKE) --no-print-directory python-ext
python-ext: $(PY_EXT)

$(PY_BUILD)/%.o: %.c include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-python
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -I$(NUMPY_INCLUDE) -I$(PY_INCLUDE) -c $< -o $@
$(PY_BUILD)/%.o: %.cc include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-python
	@mkdir -p $(dir $@)
	$(DUAL_CXX) $(call CXX_OF,$(CFLAGS)) -fPIC -fvisibility=hidden -c $< -o $@
$(PY_EXT_SRC:%.c=$(PY_BUILD)/%.o): python/ext/ext.h
# The public API keeps default visibility (python/ext/api_visible.h), for plugins.
$(PY_OBJ): CFLAGS += -include python/ext/api_visible.h -fno-semantic-interposition
$(PY_OBJ): python/ext/api_visible.h include/mbd_plugin.h

$(PY_EXT): $(PY_OBJ)
	$(CC) $(CFLAGS) -fPIC -shared $^ $(LDLIBS) -o $@

# ---- the wheel: `pip install .` (pyproject.toml, meson.build; docs/python.md) ----------
# meson-python's build runs `make wheel-files WHEEL_DIR=its build dir PYTHON=the interpreter
# it builds for`: this Makefile's flags and rules, in a build of their own (WHEEL_DIR/make;
# the library compiled once, -fPIC, for the extension and the commands) with WHEEL_OPT for
# OPT, so for any x86-64-v3 CPU (Haswell, Zen 1 and later) rather than
# this one (WHEEL_MARCH=native, or pip's -Csetup-args=-Dmarch=..., for a wheel of this
# machine alone), and without MPI (mbd and mbd-bench then run alone). MuJoCo is the one of
# PYTHON's site-packages (the mujoco-core wheel, a dependency of the package), found by
# rpath from site-packages/mbdbench/ and its bin/ (then the build's own, for an editable
# install, whose extension stays in WHEEL_DIR); none where PYTHON has none (Python
# < 3.11, which MuJoCo 4 does not support): MJCF models are then refused.
WHEEL_DIR    ?= $(BUILD)/wheel
WHEEL_MARCH  ?= x86-64-v3
WHEEL_OPT    ?= -O3 -march=$(WHEEL_MARCH) -flto=auto
WHEEL_BUILD   = $(WHEEL_DIR)/make
WHEEL_MUJOCO  = $(shell $(PYTHON) -c 'import glob, importlib.util, os; s = importlib.util.find_spec("mujoco"); \
                  print((glob.glob(os.path.join(os.path.dirname(s.origin), "libmujoco.so.*")) + [""])[0] if s else "")')
WHEEL_FILES   = _mbdbench$(PY_SUFFIX) mbd mbd-bench
.PHONY: wheel-files
wheel-files: deps-python
	$(MAKE) --no-print-directory BUILD=$(WHEEL_BUILD) WHEEL_PIC=1 OPT='$(WHEEL_OPT)' MPI_LIBS= MPI_CFLAGS= \
	  PYTHON=$(PYTHON) MUJOCO_LIB=$(WHEEL_MUJOCO) MUJOCO_RPATH='$$$$ORIGIN/../mujoco:$$$$ORIGIN/../../mujoco:$(dir $(WHEEL_MUJOCO))' \
	  PY_EXT=$(WHEEL_BUILD)/_mbdbench$(PY_SUFFIX) $(addprefix $(WHEEL_BUILD)/,$(WHEEL_FILES))
	cp -p $(addprefix $(WHEEL_BUILD)/,$(WHEEL_FILES)) $(WHEEL_DIR)/

# ---- make install: the library, its header and pkg-config file, mbd and mbd-bench ------
# Under PREFIX (default /usr/local), staged under DESTDIR if set. libmbd.a holds gcc's LTO
# objects (-flto) with their machine code for this build's -march; the pkg-config file's
# Libs carry -flto, so that gcc optimizes the library with the program that links it:
# cc prog.c $(pkg-config --cflags --libs mbd). tests/test_install.c builds and runs
# examples/batch.c that way. mbd check finds the golden trajectories (and the model files
# they name) in PREFIX/share/mbdbench, beside PREFIX/bin/mbd.
PREFIX  ?= /usr/local
# The release, in one place: the file VERSION, which the library's mbd_version (mbd
# --version, mbdbench.__version__, pkg-config) and the wheel's metadata (meson.build) read.
# mbd --version adds the commit it was built from (git describe), compiled again when that
# changes ($(BUILD)/commit, rewritten then only).
VERSION := $(shell cat VERSION)
COMMIT  := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
COMMIT_STAMP := $(BUILD)/commit
$(shell mkdir -p $(BUILD) && echo '$(COMMIT)' | cmp -s - $(COMMIT_STAMP) || echo '$(COMMIT)' > $(COMMIT_STAMP))
$(BUILD)/src/mbd.o: $(COMMIT_STAMP)
$(BUILD)/src/mbd.o: CFLAGS += -DMBD_COMMIT='"$(COMMIT)"'
$(BUILD)/models/version.o $(PY_BUILD)/models/version.o: VERSION
$(BUILD)/models/version.o $(PY_BUILD)/models/version.o: CFLAGS += -DMBD_VERSION='"$(VERSION)"'
INSTALLED := include/mbd.h include/mbd_plugin.h lib/libmbd.a lib/pkgconfig/mbd.pc bin/mbd bin/mbd-bench
DATA_DIR   = $(PREFIX)/share/mbdbench
# The package mbdbench where Debian's python3 looks: /usr/lib/python3/dist-packages for
# PREFIX /usr, PREFIX/lib/python3.X/dist-packages otherwise.
PY_SITE = $(PREFIX)/lib/$(if $(filter /usr,$(PREFIX)),python3,$(shell $(PYTHON) -c \
            'import sys; print("python%d.%d" % sys.version_info[:2])'))/dist-packages

.PHONY: install uninstall
install: all mbd-bench python
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -d $(DESTDIR)$(PY_SITE)/mbdbench
	install -m 644 python/mbdbench/*.py python/mbdbench/*.pyi python/mbdbench/py.typed $(PY_EXT) $(DESTDIR)$(PY_SITE)/mbdbench
	install -m 644 include/mbd.h include/mbd_plugin.h $(DESTDIR)$(PREFIX)/include
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib
	install -m 755 mbd mbd-bench $(DESTDIR)$(PREFIX)/bin
	install -d $(DESTDIR)$(DATA_DIR)/golden $(DESTDIR)$(DATA_DIR)/models
	install -m 644 tests/golden/cases.txt tests/golden/*.csv $(DESTDIR)$(DATA_DIR)/golden
	install -m 644 models/*.json models/*.urdf $(DESTDIR)$(DATA_DIR)/models
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' '' \
	  'Name: mbd' 'Description: forward dynamics of rigid multibody systems (mbdbench)' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lmbd $(filter -flto%,$(CFLAGS)) $(LDLIBS)' \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/mbd.pc

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	rm -rf $(DESTDIR)$(PY_SITE)/mbdbench
	rm -rf $(DESTDIR)$(DATA_DIR)

# ---- MuJoCo from PyPI (.venv/), the MJCF reader and the MuJoCo peer ---------------------
# The mujoco wheel pinned in python/requirements.txt carries libmujoco.so and its headers.
# $(BUILD)/mujoco.mk names the library once .venv/ exists; make includes it, making it
# (and so .venv/) first when it is missing, and then reads this Makefile again, so that
# every goal of a fresh clone builds against it. Linked by path with an rpath (DT_RPATH,
# as BLAS_LIBS), so that mbd runs without LD_LIBRARY_PATH. The wheel (wheel-files) names
# the library of its own build's interpreter on the command line instead, and an rpath
# relative to the installed package ($ORIGIN).
MUJOCO_MK := $(BUILD)/mujoco.mk
ifeq ($(filter clean deps-% wheel-files,$(MAKECMDGOALS))$(filter command line,$(origin MUJOCO_LIB)),)
include $(MUJOCO_MK)
endif
$(MUJOCO_MK): $(VENV_STAMP)
	@mkdir -p $(@D)
	@printf 'MUJOCO_LIB := %s\n' "$$(ls $(abspath $(VENV))/lib/python3*/site-packages/mujoco/libmujoco.so.* \
	   2>/dev/null | head -n 1)" > $@

# The MJCF reader (models/model_mjcf.c) compiles MJCF with that MuJoCo, or says that the
# build has none (the fuzzing build: libFuzzer would fuzz MuJoCo's own parser). A stamp
# named after the library makes the reader rebuilt when it changes.
MUJOCO_FOUND := $(if $(MUJOCO_LIB),yes,no)
MUJOCO_DIR   := $(patsubst %/,%,$(dir $(MUJOCO_LIB)))
MUJOCO_STAMP := $(BUILD)/with-mujoco-$(if $(MUJOCO_LIB),$(notdir $(MUJOCO_LIB)),none)
ifeq ($(MUJOCO_FOUND),yes)
MUJOCO_CFLAGS := -I$(MUJOCO_DIR)/include
MUJOCO_RPATH ?= $(MUJOCO_DIR)
LDLIBS += $(MUJOCO_LIB) -Wl,-rpath,'$(MUJOCO_RPATH)'
%/models/model_mjcf.o: CFLAGS += -DMBD_WITH_MUJOCO $(MUJOCO_CFLAGS)
%/models/model_mjcf.o: ASAN_CFLAGS += -DMBD_WITH_MUJOCO $(MUJOCO_CFLAGS)
endif
$(MUJOCO_STAMP): ; @mkdir -p $(@D) && rm -f $(BUILD)/with-mujoco-* && touch $@
$(BUILD)/models/model_mjcf.o $(PY_BUILD)/models/model_mjcf.o: $(MUJOCO_STAMP)

# build/peer-mujoco compares MuJoCo with our solvers (tests/test_mujoco.c runs it in
# `make test` and `make test-sanitize`) and times both (bench/mujoco.sh, a step of
# report/make_report.sh; alone: `make report-mujoco`).
PEER_MUJOCO     := $(BUILD)/peer-mujoco
PEER_MUJOCO_SRC := $(wildcard bench/peer_mujoco*.c)
PEER_MUJOCO_OBJ := $(PEER_MUJOCO_SRC:%.c=$(BUILD)/%.o) \
                   $(addprefix $(BUILD)/bench/,context.o harness.o json.o) $(SRC_SHARED_OBJ)

.PHONY: report-mujoco
$(PEER_MUJOCO_SRC:%.c=$(BUILD)/%.o): CFLAGS += $(MUJOCO_CFLAGS)
$(PEER_MUJOCO_SRC:%.c=$(BUILD)/%.o): $(wildcard bench/*.h) $(wildcard src/*.h) $(MUJOCO_STAMP)

$(PEER_MUJOCO): $(PEER_MUJOCO_OBJ) $(LIB)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

test-run test-sanitize report: $(PEER_MUJOCO)

# MuJoCo as a solver plugin (bench/peers/mujoco/, docs/plugins.md): mujoco-smooth and
# mujoco-forward, on the peer's model of ours (bench/peer_mujoco_model.c, compiled in);
# built by make whenever the wheel's libmujoco.so is there.
MUJOCO_PLUGIN := $(BUILD)/plugins/mujoco.so
MUJOCO_PLUGIN_SRC := bench/peers/mujoco/mujoco_plugin.c bench/peer_mujoco_model.c
$(MUJOCO_PLUGIN): $(MUJOCO_PLUGIN_SRC) bench/peer_mujoco.h $(API_HEADERS) $(MUJOCO_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -D_DEFAULT_SOURCE $(MUJOCO_CFLAGS) $(MUJOCO_PLUGIN_SRC) \
	  $(MUJOCO_LIB) -Wl,-rpath,$(MUJOCO_DIR) -o $@
.PHONY: plugin-mujoco
plugin-mujoco: $(MUJOCO_PLUGIN)
all test-run: $(if $(MUJOCO_LIB),$(MUJOCO_PLUGIN))

# ---- Pinocchio from PyPI (.venv/), the solver plugin bench/peers/pinocchio/ ------------
# The pin package pinned in python/requirements.txt brings Pinocchio's headers (and those
# of Eigen and Boost) under site-packages/cmeel.prefix/. The plugin instantiates Pinocchio's
# templates itself, without PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION: with this build's
# -O3 -march=native, as mbd's own solvers, rather than the wheel's generic x86-64 copies in
# libpinocchio_default.so; so it links no library of the wheels and needs no rpath. The
# Boost limits are those of Pinocchio's CMake target (pinocchio::pinocchio_headers).
# -Wno-maybe-uninitialized, -Wno-array-bounds, -Wno-stringop-overread: gcc 12's false
# alarms inside its AVX-512 intrinsics under Eigen's fixed-size vectors (70 of each).
PIN_HEADER   := $(firstword $(wildcard $(abspath $(VENV))/lib/python3*/site-packages/cmeel.prefix/include/pinocchio/config.hpp))
PIN_PREFIX   := $(PIN_HEADER:%/include/pinocchio/config.hpp=%)
PIN_PLUGIN   := $(BUILD)/plugins/pinocchio.so
PIN_CXXFLAGS := -O3 -march=native -DNDEBUG -std=c++17 -Wall -Wextra -Wno-maybe-uninitialized -Wno-array-bounds \
                -Wno-stringop-overread -fPIC -shared \
                -Iinclude -isystem $(PIN_PREFIX)/include -isystem $(PIN_PREFIX)/include/eigen3 \
                -DBOOST_MPL_LIMIT_LIST_SIZE=30 -DBOOST_MPL_LIMIT_VECTOR_SIZE=30 \
                -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS -DBOOST_FUSION_INVOKE_MAX_ARITY=12
$(PIN_PLUGIN): bench/peers/pinocchio/pinocchio_plugin.cc $(API_HEADERS) $(PIN_HEADER)
	@mkdir -p $(dir $@)
	$(CXX) $(PIN_CXXFLAGS) $< -o $@
.PHONY: plugin-pinocchio
plugin-pinocchio: $(PIN_PLUGIN)
test-run: $(if $(PIN_HEADER),$(PIN_PLUGIN))

# Every MJCF file of the published model packages (python/requirements-models.txt) against
# MuJoCo's qacc_smooth, M and inverse dynamics: a table on stdout, docs/models.md written.
.PHONY: check-menagerie
check-menagerie: deps-test venv-models
	@$(MAKE) --no-print-directory mbd python-ext
	MBD=./mbd PYTHONPATH=python $(PYTHON) python/tests/mujoco_models.py --all --markdown docs/models.md

report-mujoco: deps-report $(PEER_MUJOCO)
	bench/mujoco.sh
report report-mujoco: export PEER_MUJOCO := $(PEER_MUJOCO)

# ---- the GPU against the CPU batch (bench/gpu/, bench/gpu.sh) ------------------------
# build/mbd-gpu-bench times the GPU batch; `make gpu-bundle` packs it, build/tests/test_gpu,
# mbd-bench (the CPU batch on one core and on all) and bench/gpu.sh with the libraries
# they load (ldd) and their loader into build-gpu/mbd-gpu.tar.xz, built for any x86-64-v3
# CPU without MPI, for a GPU machine that has only a CUDA driver: unpack it there and run
# bench/gpu.sh (it says how).
MBD_GPU_BENCH := $(BUILD)/mbd-gpu-bench
$(BUILD)/bench/gpu/gpu_bench.o: $(wildcard bench/*.h) $(wildcard src/*.h)
$(MBD_GPU_BENCH): $(addprefix $(BUILD)/bench/,gpu/gpu_bench.o gpu/gpu_env.o context.o harness.o json.o) \
                  $(SRC_SHARED_OBJ) $(LIB)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@
test-run: $(MBD_GPU_BENCH)

.PHONY: gpu-bundle
gpu-bundle: deps-test
	$(MAKE) BUILD=build-gpu OPT='-O3 -march=x86-64-v3 -flto=auto' MPI_LIBS= MPI_CFLAGS= \
	  build-gpu/mbd-gpu-bench build-gpu/tests/test_gpu build-gpu/mbd-bench
	bench/gpu.sh --pack build-gpu

# ---- benchmarks, `mbd recommend` and the report (bench/, report/; see bench/README.md) --
BENCH_INFO := $(BUILD)/bench/build-info
QUICK      ?=

.PHONY: bench-info-force
$(BENCH_OBJ): $(wildcard bench/*.h) $(wildcard src/*.h)
# The machine's rates (bench/machine.c) need the fused multiply-adds and registers that gcc
# gives from -O2 on, whatever OPT a fast build takes.
$(BUILD)/bench/machine.o: CFLAGS += -O2

# $(BUILD)/mbd-bench: the same program inside its build (gpu-bundle's, of another BUILD)
mbd-bench $(BUILD)/mbd-bench: $(BENCH_OBJ) $(SRC_SHARED_OBJ) $(PAR_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS) $^ $(LDLIBS) $(MPI_LIBS) -o $@

# The compiler, flags and commit that the JSON context reports. $(BENCH_INFO) holds them,
# rewritten only when they change, so that context.o is rebuilt exactly then.
BENCH_CC     := $(CC)
BENCH_CFLAGS := $(CFLAGS)
BENCH_COMMIT  = $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
                  [ -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || c=$$c-dirty; echo $$c)
$(BENCH_INFO): bench-info-force
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(BENCH_CC)' '$(BENCH_CFLAGS)' '$(BENCH_COMMIT)' > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/bench/context.o: $(BENCH_INFO)
$(BUILD)/bench/context.o: CFLAGS += -DMBD_BENCH_CC='"$(BENCH_CC)"' \
	-DMBD_BENCH_CFLAGS='"$(BENCH_CFLAGS)"' -DMBD_GIT_COMMIT='"$(BENCH_COMMIT)"'

# The report page's style and script, embedded in mbd-bench for `mbd-bench compare --html`.
PAGE_ASSETS := $(BUILD)/bench/page_assets.c
$(PAGE_ASSETS): report/page/page.css report/page/page.js
	@mkdir -p $(dir $@)
	{ for a in css js; do echo "const char bench_page_$$a[] = {"; \
	  od -An -v -tx1 report/page/page.$$a | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0};'; done; } > $@
$(PAGE_ASSETS:.c=.o): $(PAGE_ASSETS)
	$(CC) $(CFLAGS) -c $< -o $@
mbd-bench $(BUILD)/mbd-bench: $(PAGE_ASSETS:.c=.o)

# The default sweep, table on stdout; BENCH_ARGS adds mbd-bench flags (mbd-bench --help).
bench: deps-build mbd-bench
	./mbd-bench $(BENCH_ARGS)

# Two runs row by row (bench/compare.c): make compare A=old.json B=new.json; the page in
# report/compare.html.
.PHONY: compare
compare: deps-build mbd-bench
	./mbd-bench compare $(A) $(B) --html report/compare.html

# The pages in headless Chromium (report/test_page.py): report/index.html from a quick
# report, and a comparison of two committed runs; screenshots in build/test-report/.
.PHONY: test-report deps-browser
deps-browser: ; $(call ensure_packages,$(DEPS_BROWSER))
test-report: deps-browser mbd-bench
	$(MAKE) --no-print-directory report QUICK=1
	@mkdir -p $(BUILD)/test-report
	./mbd-bench compare results/vm-2026-11-24-e70373f.json results/latest.json \
	  --html $(BUILD)/test-report/compare.html > /dev/null
	$(SYSTEM_PYTHON) report/test_page.py $(BUILD)/test-report report/index.html $(BUILD)/test-report/compare.html

# Sweep, hyperfine, charts and report/README.md; QUICK=1 for a short smoke run.
report: deps-report venv-models mbd mbd-bench
	report/make_report.sh $(if $(filter 1 yes true,$(QUICK)),--quick)
# PLUGINS=A.so:B.so: the plugins' solvers in every step (docs/plugins.md), through mbd's
# and mbd-bench's MBD_PLUGINS; by default the peer libraries' plugins that this build
# makes (MuJoCo's and Pinocchio's, from their wheels in .venv/), timed beside our solvers.
PEER_PLUGINS := $(if $(MUJOCO_LIB),$(MUJOCO_PLUGIN)) $(if $(PIN_HEADER),$(PIN_PLUGIN))
space        := $(subst ,, )
PLUGINS      ?= $(subst $(space),:,$(strip $(PEER_PLUGINS)))
report: $(PEER_PLUGINS)
ifneq ($(PLUGINS),)
report: export MBD_PLUGINS := $(PLUGINS)
endif

# ---- reliability: sanitizers and fuzzing (see README.md, Reliability; fuzz/) ----------
# make test-sanitize: the library, mbd and every test binary built again into build-asan/
# with AddressSanitizer + UndefinedBehaviorSanitizer (any report, leaks included, fails the
# binary), then run with MBD=build-asan/mbd.
# make fuzz: each libFuzzer target fuzz/fuzz_*.c (clang) for FUZZ_SECONDS from its committed
# seeds fuzz/corpus/TARGET (fuzz/run.sh), on FUZZ_JOBS processes each (libFuzzer's -fork);
# make -jN runs N targets at once. New inputs and crashes stay under build-fuzz/.
# make fuzz-smoke: every target for 30 s, as CI runs them (a crash fails).
# The sanitizer builds, like the fuzzing build, do not force inlining (MBD_NO_FORCE_INLINE,
# see FUZZ_CFLAGS): the same code, compiled in seconds instead of minutes per lane file.
ASAN_BUILD  := build-asan
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
               -std=c11 -D_DEFAULT_SOURCE -DMBD_NO_FORCE_INLINE -Wall -Wextra -Wshadow -Iinclude -Ialgorithms -fopenmp $(XML_CFLAGS)
ASAN_LIB    := $(ASAN_BUILD)/libmbd.a
ASAN_MBD    := $(ASAN_BUILD)/mbd
ASAN_TESTS  := $(TEST_SRC:tests/%.c=$(ASAN_BUILD)/tests/%)
ASAN_ENV    := ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_BUILD   := build-fuzz
# MBD_NO_FORCE_INLINE (algorithms/spatial/spatial.h): always_inline flattens each solver's
# sweep, every joint type's steps included, into one function (bodies.c: 10k lines of IR
# become 450k); UBSan's checks triple that (73k checks, 170k blocks) and clang's -O1 passes
# are superlinear in it: 21 min for batch_x4.c, 30 s without forcing, the same code run.
# No -fopenmp: the batch runs its OpenMP loops on one thread; -lgomp for its omp_* calls.
FUZZ_CFLAGS  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
                -std=c11 -D_DEFAULT_SOURCE -DMBD_NO_FORCE_INLINE -Wall -Wextra -Wno-source-uses-openmp \
                -Iinclude -Ialgorithms -Imodels -Isrc $(XML_CFLAGS)
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_LIB     := $(FUZZ_BUILD)/libmbd.a
DEPS_FUZZ    := $(DEPS_BUILD) clang-14 libclang-rt-14-dev

.PHONY: test-sanitize fuzz fuzz-build fuzz-smoke deps-fuzz
deps-fuzz: ; $(call ensure_packages,$(DEPS_FUZZ))

$(ASAN_BUILD)/%.o: %.c include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-build
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -c $< -o $@
$(ASAN_BUILD)/%.o: %.cc include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-build
	@mkdir -p $(dir $@)
	$(CC) $(call CXX_OF,$(ASAN_CFLAGS)) -c $< -o $@

$(ASAN_BUILD)/models/model_mjcf.o: $(MUJOCO_STAMP)
$(ASAN_BUILD)/models/version.o: ASAN_CFLAGS += -DMBD_VERSION='"$(VERSION)"'
$(ASAN_LIB): $(LIB_SRC:%.c=$(ASAN_BUILD)/%.o) $(LIB_GEN_SRC:%.c=$(ASAN_BUILD)/%.o) \
             $(LIB_CXX_SRC:%.cc=$(ASAN_BUILD)/%.o)
	rm -f $@ && $(AR) rcs $@ $^

# mbd's own objects, mirrored into build-asan/.
ASAN_MBD_OBJ := $(patsubst $(BUILD)/%,$(ASAN_BUILD)/%,$(CLI_OBJ))
$(ASAN_BUILD)/src/par_mpi.o: ASAN_CFLAGS += $(MPI_CFLAGS)
$(ASAN_BUILD)/tests/test_mpi: ASAN_CFLAGS += -DMBD_WITH_MPI=$(if $(MPI_LIBS),1,0)
$(ASAN_BUILD)/tests/test_gpu: ASAN_CFLAGS += -DMBD_BUILD_FATBIN=$(if $(GPU_PTXAS),1,0)
$(ASAN_BUILD)/tests/test_gpu: TEST_SUPPORT += bench/gpu/gpu_env.c
$(ASAN_BUILD)/tests/test_gpu: $(GPU_ENV)
$(ASAN_MBD): $(ASAN_MBD_OBJ) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) $^ $(LDLIBS) $(MPI_LIBS) -o $@
ASAN_PLUGIN_HOSTS := $(ASAN_MBD) $(ASAN_BUILD)/tests/test_plugins $(ASAN_BUILD)/tests/test_pinocchio \
                     $(ASAN_BUILD)/tests/test_mujoco_plugin
$(ASAN_PLUGIN_HOSTS): LDLIBS += $(API_EXPORT)
$(ASAN_PLUGIN_HOSTS): | $(API_FILES)

$(ASAN_BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(wildcard tests/*.h) $(ASAN_LIB) | deps-test
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $(TEST_PLUGINS) -Itests $< $(TEST_SUPPORT) $(ASAN_LIB) $(LDLIBS) -lcmocka -o $@

test-sanitize: deps-test $(ASAN_MBD) $(ASAN_TESTS)
	@pass=0; fail=0; \
	for t in $(ASAN_TESTS); do \
	  if MBD=$(ASAN_MBD) $(ASAN_ENV) $$t; then pass=$$((pass+1)); else fail=$$((fail+1)); echo "FAILED: $$t" >&2; fi; \
	done; \
	echo "test-sanitize: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

$(FUZZ_BUILD)/%.o: %.c include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-fuzz
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
# clang's function check in C++ reads the C++ library's type information (gcc has none).
$(FUZZ_BUILD)/%.o: %.cc include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-fuzz
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(call CXX_OF,$(FUZZ_CFLAGS)) -fno-sanitize=function -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o) $(LIB_GEN_SRC:%.c=$(FUZZ_BUILD)/%.o) \
             $(LIB_CXX_SRC:%.cc=$(FUZZ_BUILD)/%.o)
	rm -f $@ && $(AR) rcs $@ $^

# Each target links src/cli.o and the library; one that needs more objects names them in a
# line of its own: $(FUZZ_BUILD)/fuzz_x: $(FUZZ_BUILD)/bench/x.o
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/*.h) $(FUZZ_BUILD)/src/cli.o $(FUZZ_LIB) | deps-fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(filter %.c %.o,$^) $(FUZZ_LIB) \
	  $(filter-out -fopenmp,$(LDLIBS)) -lgomp -o $@

$(FUZZ_BUILD)/fuzz_cli: $(addprefix $(FUZZ_BUILD)/src/,cmd_fd.o cmd_id.o cmd_coeffs.o cmd_minv.o cmd_info.o \
                          cmd_derivatives.o)
$(FUZZ_BUILD)/fuzz_states: $(addprefix $(FUZZ_BUILD)/src/,cmd_simulate.o cmd_ensemble.o par_serial.o)

$(FUZZ_BUILD)/fuzz_bench_json: $(addprefix $(FUZZ_BUILD)/bench/,compare.o compare_html.o)

fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%) $(FUZZ_BUILD)/src/cli.o

.PHONY: $(FUZZ_TARGETS:%=fuzz-run-%)
fuzz: $(FUZZ_TARGETS:%=fuzz-run-%)
$(FUZZ_TARGETS:%=fuzz-run-%): fuzz-run-%: $(FUZZ_BUILD)/%
	@fuzz/run.sh $(FUZZ_BUILD) $* $(FUZZ_SECONDS) $(FUZZ_JOBS)

fuzz-smoke:
	@$(MAKE) --no-print-directory -j$$(nproc) fuzz FUZZ_SECONDS=30

# make test-tsan: the OpenMP batch pattern (tests/tsan/batch_race.c) under ThreadSanitizer,
# with clang's libomp and libarcher (which shows the runtime's barriers to TSan; libgomp
# cannot). Passes when the real batch is race-free AND the deliberately racy variant (one
# workspace shared by all threads) is reported, so a silent checker cannot pass.
TSAN_BUILD  := build-tsan
TSAN_CFLAGS := -O1 -g -fsanitize=thread -std=c11 -D_DEFAULT_SOURCE -DMBD_NO_FORCE_INLINE -Iinclude -Ialgorithms $(XML_CFLAGS)
TSAN_ENV    := OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so \
               TSAN_OPTIONS=ignore_noninstrumented_modules=1:halt_on_error=1
DEPS_TSAN   := $(DEPS_BUILD) clang-14 libclang-rt-14-dev libomp-14-dev
.PHONY: test-tsan deps-tsan
deps-tsan: ; $(call ensure_packages,$(DEPS_TSAN))

$(TSAN_BUILD)/%.o: %.c include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-tsan
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(TSAN_CFLAGS) -c $< -o $@
$(TSAN_BUILD)/%.o: %.cc include/mbd.h $(wildcard algorithms/*.h algorithms/*/*.h) | deps-tsan
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(call CXX_OF,$(TSAN_CFLAGS)) -c $< -o $@

$(TSAN_BUILD)/batch_race: tests/tsan/batch_race.c $(LIB_SRC:%.c=$(TSAN_BUILD)/%.o) \
                           $(LIB_GEN_SRC:%.c=$(TSAN_BUILD)/%.o) $(LIB_CXX_SRC:%.cc=$(TSAN_BUILD)/%.o) \
                           | deps-tsan
	$(FUZZ_CC) $(TSAN_CFLAGS) -fopenmp $^ $(filter-out -fopenmp $(BLAS_LIBS),$(LDLIBS)) -lopenblas -o $@

test-tsan: $(TSAN_BUILD)/batch_race
	$(TSAN_ENV) $<
	@if $(TSAN_ENV) $< --shared-work > $(TSAN_BUILD)/shared-work.log 2>&1; then \
	  echo "test-tsan: the racy variant went unreported: ThreadSanitizer is not working" >&2; exit 1; \
	elif grep -q "ThreadSanitizer: data race" $(TSAN_BUILD)/shared-work.log; then \
	  echo "racy variant reported, as it must be"; echo "test-tsan: 2 passed, 0 failed"; \
	else cat $(TSAN_BUILD)/shared-work.log >&2; exit 1; fi

clean: clean-reliability
.PHONY: clean-reliability
clean-reliability: ; rm -rf $(ASAN_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)

# ---- Yudintsev's ten rods, reproduced (report/rods.sh) -----------------------------------
# Ten rods over 10 s with CVODE's Adams method by three solvers: the charts
# report/rods-angles.png/.svg, report/rods-energy.png and the paragraph report/rods.md.
.PHONY: rods
rods: deps-report mbd
	report/rods.sh

report: rods
