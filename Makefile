# perfring: GNU Make build.  `make`, `make check`, `make bench`, `make demo`,
# `make install PREFIX=...`, `make fuzz T=ring SECS=60`, `make format-check`.

CC ?= cc
OBJCOPY ?= objcopy
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# Debian's site directory for modules a local install adds (python3 -m site)
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
VERSION := 0.2.0
# libperfring.so.1: 0.2 moved the tools' functions out (docs/design.md 1).
SOVERSION := 1
TOOLS_SOVERSION := 0

# `make demo` and `make check` set a fresh Debian 12 up themselves: what
# is missing is installed (as root) before anything below asks pkg-config.
ifneq ($(filter demo check,$(MAKECMDGOALS)),)
DEPS_STATUS := $(shell ./scripts/deps.sh >&2; echo $$?)
ifneq ($(DEPS_STATUS),0)
$(error missing dependencies, see above)
endif
# Both build four variants of everything: use every core unless told.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS_COMMON := -std=c11 $(WARN) -Iinclude -pthread
CFLAGS_release := -O2 -g
CFLAGS_asan := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
CFLAGS_tsan := -O1 -g -fsanitize=thread $(shell $(CC) -Werror -Wno-tsan -fsyntax-only -x c /dev/null 2>/dev/null && echo -Wno-tsan)
# libperfring links libc only.
LDLIBS := -pthread
# libperfring-tools: libtraceevent, libelf, libzstd, zlib (pprof's gzip); CoreSight decoding
# with OpenCSD's C API (its .pc names only the C++ library) and capstone
# for disassembly; libunwind (remote, x86_64) unwinds --call-graph dwarf
# samples' user stacks as perf does; libdw reads source lines (srcline);
# libbabeltrace-ctf (babeltrace 1.5's CTF writer, perf's) writes CTF;
# libm: sched's standard deviations; libbpf loads record --off-cpu's BPF
# program (its skeleton, generated in $(B)/bpf, is included from there).
TOOLS_CFLAGS := $(shell pkg-config --cflags libtraceevent libelf libdw libzstd zlib capstone libunwind-generic babeltrace-ctf libbpf)
TOOLS_LDLIBS := $(shell pkg-config --libs libtraceevent libelf libdw libzstd zlib) \
	-lopencsd_c_api $(shell pkg-config --libs libopencsd capstone) \
	$(shell pkg-config --libs libunwind-generic babeltrace-ctf libbpf) -lm

# Layers: libperfring (src/ring, src/app: libc only) -> libperfring-tools
# (src/sources, src/format -> src/machine, src/tracepoint -> src/coresight
# -> src/fleet -> src/record, src/report, src/convert) -> tools/ (the CLI,
# public headers only);
# docs/design.md section 1 draws them.  Stateless pieces both libraries need are
# built into both (SHARED_SRC: each library keeps its own hidden copy).
LIB_SRC := $(sort $(wildcard src/ring/*.c src/app/*.c))
SHARED_SRC := src/ring/subbuf_page.c src/app/app_format.c
TOOLS_LAYERS := sources format machine tracepoint coresight fleet record report convert
# (*.bpf.c: eBPF programs, built by clang -target bpf below, never by $(CC))
TOOLS_SRC := $(sort $(filter-out %.bpf.c,$(wildcard $(TOOLS_LAYERS:%=src/%/*.c))) $(SHARED_SRC))
INTERNAL_SRC := $(sort $(LIB_SRC) $(TOOLS_SRC))
HDRS := include/perfring.h include/perfring/abi.h include/perfring/tools.h $(wildcard src/*/*.h)
# Only the tools layer sees the tools' dependencies' headers.
obj_cflags = $(if $(filter $(LIB_SRC),$(1)),,$(TOOLS_CFLAGS))

# Tests: every test/test_*.c runs under ASan+UBSan; the concurrency ones
# (test/stress_*.c) run under both ASan+UBSan and TSan.
UNIT_TESTS := $(basename $(notdir $(wildcard test/test_*.c)))
STRESS_TESTS := $(basename $(notdir $(wildcard test/stress_*.c)))
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
EXAMPLES := $(basename $(notdir $(wildcard examples/*.c)))
WORKLOADS := $(basename $(notdir $(wildcard test/workloads/*.c)))
TEST_APPS := $(basename $(notdir $(wildcard test/apps/*.c)))

B := build
# the BPF program's skeleton (below)
TOOLS_CFLAGS += -I$(B)/bpf
SONAME := libperfring.so.$(SOVERSION)
# The file name starts with the soname (libperfring.so.1.0.0).
SHLIB_FILE := libperfring.so.$(SOVERSION).0.0
SHLIB := $(B)/$(SHLIB_FILE)
TOOLS_SONAME := libperfring-tools.so.$(TOOLS_SOVERSION)
TOOLS_SHLIB := $(B)/libperfring-tools.so.$(VERSION)
# What the CLI, bench and tools programs link (static: one binary).
CLI_LIBS = $(B)/libperfring-tools.a $(B)/libperfring.a
# The CLI's browser (tools/browser.c: report and annotate on a terminal)
# is ncurses'.
CLI_LDLIBS := $(TOOLS_LDLIBS) $(shell pkg-config --libs ncursesw) $(LDLIBS)

.PHONY: all check soak soak-fleet bench demo install uninstall clean fuzz format format-check check-abi
# Everything README.md runs: the libraries, build/perfring, the examples,
# the workloads its tour records (build/workloads/hot, ...) and .pc files
# that work from this tree (build/*-uninstalled.pc).
all: $(B)/libperfring.a $(SHLIB) $(B)/libperfring-tools.a $(TOOLS_SHLIB) $(B)/perfring \
	$(EXAMPLES:%=$(B)/examples/%) $(B)/perfring.pc $(B)/perfring-tools.pc \
	$(B)/perfring-uninstalled.pc $(B)/perfring-tools-uninstalled.pc \
	$(WORKLOADS:%=$(B)/workloads/%)

# One set of rules per build variant: build/ (release), build/asan, build/tsan.
define variant
$(1)_DIR := $(if $(filter release,$(1)),$(B),$(B)/$(1))
$$($(1)_DIR)/obj/%.o: %.c $(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_COMMON) $$(call obj_cflags,$$<) $$(CFLAGS_$(1)) $$(CFLAGS) -fPIC -fvisibility=hidden -DPERFRING_BUILD -c $$< -o $$@
# Tests and fuzz replays call internal functions of both libraries: they
# link the objects as they are (libperfring-internal.a, never installed).
$$($(1)_DIR)/libperfring-internal.a: $(INTERNAL_SRC:%.c=$$($(1)_DIR)/obj/%.o)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
$$($(1)_DIR)/test/%: test/%.c test/harness.h test/stress.h $$($(1)_DIR)/libperfring-internal.a $(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_COMMON) $$(TOOLS_CFLAGS) $$(CFLAGS_$(1)) $$(CFLAGS) -Isrc -o $$@ $$< $$($(1)_DIR)/libperfring-internal.a $$(CLI_LDLIBS)
$$($(1)_DIR)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay.c fuzz/fuzz_file.h $$($(1)_DIR)/libperfring-internal.a $(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_COMMON) $$(TOOLS_CFLAGS) $$(CFLAGS_$(1)) $$(CFLAGS) -Isrc -o $$@ $$< fuzz/replay.c $$($(1)_DIR)/libperfring-internal.a $$(CLI_LDLIBS)
endef
$(foreach v,release asan tsan,$(eval $(call variant,$(v))))

# record --off-cpu's eBPF program (src/sources/offcpu.bpf.c): built for
# the BPF target with its BTF (CO-RE: libbpf relocates its field accesses
# to the running kernel's), then embedded as bytes in a skeleton header
# that src/sources/offcpu_bpf.c includes (nothing read from disk at run
# time).  clang, libbpf-dev and bpftool: scripts/deps.sh.
BPF_CLANG ?= clang
BPF_CFLAGS := -target bpf -g -O2 -Wall -Werror -I/usr/include/$(shell $(CC) -print-multiarch)
$(B)/bpf/offcpu.bpf.o: src/sources/offcpu.bpf.c src/sources/offcpu_bpf_abi.h
	@mkdir -p $(@D)
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@
$(B)/bpf/offcpu.skel.h: $(B)/bpf/offcpu.bpf.o
	bpftool gen skeleton $< name offcpu_skel > $@.tmp && mv $@.tmp $@
$(foreach d,$(B) $(B)/asan $(B)/tsan,$(d)/obj/src/sources/offcpu_bpf.o): $(B)/bpf/offcpu.skel.h

# The installed archives: one partially linked object each, in which only
# the PERFRING_API names (and libperfring's perfring__ ones for the tools)
# stay global (-fvisibility=hidden decides, as for the .so; objcopy makes
# every hidden symbol local), so that a program linking them statically
# meets none of their internal names.
$(B)/libperfring.a: $(LIB_SRC:%.c=$(B)/obj/%.o)
	@rm -f $@
	$(LD) -r -o $(B)/libperfring.o $^
	$(OBJCOPY) --localize-hidden $(B)/libperfring.o
	$(AR) rcs $@ $(B)/libperfring.o
$(B)/libperfring-tools.a: $(TOOLS_SRC:%.c=$(B)/obj/%.o)
	@rm -f $@
	$(LD) -r -o $(B)/libperfring-tools.o $^
	$(OBJCOPY) --localize-hidden $(B)/libperfring-tools.o
	$(AR) rcs $@ $(B)/libperfring-tools.o

$(SHLIB): $(LIB_SRC:%.c=$(B)/obj/%.o) src/libperfring.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/libperfring.map -Wl,--no-undefined -o $@ $(filter %.o,$^) $(LDLIBS)
	ln -sf $(SHLIB_FILE) $(B)/$(SONAME)
	ln -sf $(SONAME) $(B)/libperfring.so
# The tools library links libperfring.so (its DT_NEEDED: libperfring.so.1).
$(TOOLS_SHLIB): $(TOOLS_SRC:%.c=$(B)/obj/%.o) src/libperfring-tools.map $(SHLIB)
	$(CC) -shared -Wl,-soname,$(TOOLS_SONAME) -Wl,--version-script=src/libperfring-tools.map -Wl,--no-undefined -o $@ $(filter %.o,$^) $(SHLIB) $(TOOLS_LDLIBS) $(LDLIBS)
	ln -sf libperfring-tools.so.$(VERSION) $(B)/$(TOOLS_SONAME)
	ln -sf $(TOOLS_SONAME) $(B)/libperfring-tools.so

# The CLI links the static libraries: one self-contained binary.  It is
# tools/perfring.c (dispatch), tools/cli.c (what commands share) and one
# tools/builtin-*.c per command.
TOOLS_CLI_SRC := $(sort $(wildcard tools/*.c))
TOOLS_CLI_DEPS := $(TOOLS_CLI_SRC) $(wildcard tools/*.h) $(HDRS)
$(B)/perfring: $(TOOLS_CLI_DEPS) $(CLI_LIBS)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $(TOOLS_CLI_SRC) $(CLI_LIBS) $(CLI_LDLIBS)
# The CLI under ASan+UBSan, for the tests that feed it hostile programs
# (the ASan variant has no installed archive: it links the objects).
$(B)/asan/perfring: $(TOOLS_CLI_DEPS) $(B)/asan/libperfring-internal.a
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_asan) $(CFLAGS) -o $@ $(TOOLS_CLI_SRC) $(B)/asan/libperfring-internal.a $(CLI_LDLIBS)
# Examples and traced programs (application tests) link libperfring only:
# libc and nothing else.
$(B)/examples/%: examples/%.c include/perfring.h include/perfring/abi.h $(B)/libperfring.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $< $(B)/libperfring.a $(LDLIBS)
$(B)/apps/%: test/apps/%.c include/perfring.h include/perfring/abi.h $(B)/libperfring.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $< $(B)/libperfring.a $(LDLIBS)
# Programs with known behaviour that the record tests run.
$(B)/workloads/%: test/workloads/%.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Werror -O1 -g -fno-omit-frame-pointer -o $@ $<
# Without frame pointers: only DWARF unwinding follows its calls (test/dwarf.sh).
$(B)/workloads/nofp: test/workloads/nofp.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Werror -O1 -g -fomit-frame-pointer -o $@ $<
# -O0: stable source lines; calls libc through its PLT (test/report_srcline.sh).
$(B)/workloads/srclines: test/workloads/srclines.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Werror -O0 -g -fno-omit-frame-pointer -o $@ $<
# Optimised: its static functions are inlined and cloned (test/inline.sh).
$(B)/workloads/inlchain: test/workloads/inlchain.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Werror -O2 -g -fno-omit-frame-pointer -fno-plt -o $@ $<
$(B)/workloads/inlcxx: test/workloads/inlcxx.cc
	@mkdir -p $(@D)
	$(CXX) -std=gnu++17 -Wall -Werror -O2 -g -fno-omit-frame-pointer -fno-plt -o $@ $<
$(B)/workloads/thunks: test/workloads/thunks.cc
	@mkdir -p $(@D)
	$(CXX) -std=gnu++17 -Wall -Werror -O2 -g -fno-omit-frame-pointer -fno-plt -o $@ $<

# bench/main.c (the case table), util.c and one file per area; the two
# traced programs below are separate.
BENCH_SRC := $(sort $(filter-out bench/app_emit.c bench/lttng_emit.c,$(wildcard bench/*.c)))
$(B)/bench: $(BENCH_SRC) bench/bench.h $(HDRS) $(CLI_LIBS)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $(BENCH_SRC) $(CLI_LIBS) $(CLI_LDLIBS)
# The programs bench emit-vs-lttng and app-sustained run (make bench only):
# the same events through perfring and through LTTng-UST (liblttng-ust-dev).
$(B)/bench_app_emit: bench/app_emit.c include/perfring.h $(B)/libperfring.a
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $< $(B)/libperfring.a $(LDLIBS)
$(B)/bench_lttng_emit: bench/lttng_emit.c bench/lttng_tp.h
	$(CC) -std=gnu11 $(WARN) -O2 -g -Ibench $(CFLAGS) -o $@ $< $$(pkg-config --libs lttng-ust)

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|'
# The -uninstalled.pc files name this tree by absolute paths.
PC_UNINSTALLED_SED = sed -e 's|@BUILDDIR@|$(abspath $(B))|; s|@SRCDIR@|$(CURDIR)|g; s|@VERSION@|$(VERSION)|'
$(B)/%-uninstalled.pc: %-uninstalled.pc.in Makefile
	@mkdir -p $(@D)
	$(PC_UNINSTALLED_SED) $< > $@
$(B)/%.pc: %.pc.in Makefile
	$(PC_SED) $< > $@

CHECK_BINS := $(UNIT_TESTS:%=$(B)/asan/test/%) $(STRESS_TESTS:%=$(B)/asan/test/%) \
	$(STRESS_TESTS:%=$(B)/tsan/test/%) $(FUZZ_TARGETS:%=$(B)/asan/fuzz/replay_%)

# The shell tests, in the order make check runs them (the kill matrix and
# the soak last: they are the longest).
SHELL_TESTS := \
	test/cli.sh \
	test/options.sh \
	test/install.sh \
	test/man.sh \
	test/record.sh \
	test/nonroot.sh \
	test/record_opts.sh \
	test/switch_app.sh \
	test/export.sh \
	test/offcpu.sh \
	test/sched.sh \
	test/export_tdat.sh \
	test/convert.sh \
	test/pprof.sh \
	test/viewer.sh \
	test/script.sh \
	test/script_opts.sh \
	test/script_show.sh \
	test/reader_api.sh \
	test/report_opts.sh \
	test/report_srcline.sh \
	test/report_more.sh \
	test/annotate.sh \
	test/diff.sh \
	test/pager.sh \
	test/tui.sh \
	test/progress.sh \
	test/groups.sh \
	test/header.sh \
	test/app.sh \
	test/app_trust.sh \
	test/hotspot.sh \
	test/hostile_inputs.sh \
	test/app_fork.sh \
	test/cs.sh \
	test/cs_framing.sh \
	test/cs_goldens.sh \
	test/tracefs.sh \
	test/record_all.sh \
	test/aux.sh \
	test/aux_all.sh \
	test/dwarf.sh \
	test/inline.sh \
	test/events.sh \
	test/outputs.sh \
	test/top.sh \
	test/top_tui.sh \
	test/fleet.sh \
	test/soak_fleet.sh \
	test/readme_tour.sh \
	test/kill_matrix.sh \
	test/soak.sh

check: $(CHECK_BINS) all $(B)/asan/perfring $(WORKLOADS:%=$(B)/workloads/%) $(B)/workloads/inlcxx $(B)/workloads/thunks $(TEST_APPS:%=$(B)/apps/%)
	@FUZZ_CORPUS_DIR=fuzz/corpus PERFRING_CLI=$(B)/perfring PERFRING_ASAN_CLI=$(B)/asan/perfring WORKLOADS=$(B)/workloads TEST_APPS=$(B)/apps \
		./test/run-tests.sh $(CHECK_BINS) $(SHELL_TESTS)

# The hostile-program soak for longer than make check's 20 s, then the
# fleet soak (record -a --push, memory over time) for SECS or 10 minutes.
soak: $(B)/asan/perfring $(B)/apps/apphostile soak-fleet
	SOAK_SECS=$(or $(SECS),300) PERFRING_ASAN_CLI=$(B)/asan/perfring TEST_APPS=$(B)/apps ./test/soak.sh
soak-fleet: $(B)/perfring $(B)/workloads/hot
	SOAK_SECS=$(or $(SECS),600) PERFRING_CLI=$(B)/perfring WORKLOADS=$(B)/workloads ./test/soak_fleet.sh

bench: $(B)/bench $(B)/perfring $(WORKLOADS:%=$(B)/workloads/%) $(B)/bench_app_emit $(B)/bench_lttng_emit
	$(B)/bench $(CASE) $(ARGS)

# The ring demo, then a real recording judged by perf, then perfring top.
demo: all $(WORKLOADS:%=$(B)/workloads/%)
	$(B)/perfring demo
	$(B)/perfring record -g -e cpu-clock -F 2000 -o $(B)/demo.data -- $(B)/workloads/hot 0.5
	@if command -v perf >/dev/null; then perf report --stdio --no-children -i $(B)/demo.data 2>/dev/null | grep -v '^#' | grep -v '^$$' | head -n 12; \
	else echo "perf is not installed: read $(B)/demo.data with perf report"; fi
	$(B)/perfring export -i $(B)/demo.data -f pprof -o $(B)/demo.pb.gz
	$(B)/perfring export -i $(B)/demo.data -f chrome -o $(B)/demo.json
	@echo "demo: $(B)/demo.pb.gz (go tool pprof -top $(B)/demo.pb.gz) and $(B)/demo.json (ui.perfetto.dev, speedscope)"
	@if command -v go >/dev/null; then HOME=$${TMPDIR:-/tmp} GOCACHE=$${TMPDIR:-/tmp}/perfring-demo-gocache go tool pprof -top -nodecount=5 $(B)/demo.pb.gz 2>/dev/null | tail -n +5; fi
	@# perf top's live table from the rings, no file: two refreshes,
	@# system-wide, beside the hot workload (plain text, not a terminal).
	$(B)/workloads/hot 2 & hot=$$!; \
	$(B)/perfring top -F 1000 -d 0.5 --iterations 2 -E 8 > $(B)/demo.top; rc=$$?; \
	kill $$hot 2>/dev/null; wait; cat $(B)/demo.top; exit $$rc

fuzz: $(B)/bpf/offcpu.skel.h
	@test -n "$(T)" || { echo "usage: make fuzz T=<$(FUZZ_TARGETS)> [SECS=60]"; exit 2; }
	@mkdir -p $(B)/libfuzzer
	clang $(CFLAGS_COMMON) -O1 -g -fsanitize=fuzzer,address,undefined -DPERFRING_BUILD -Isrc \
		$(TOOLS_CFLAGS) -o $(B)/libfuzzer/fuzz_$(T) fuzz/fuzz_$(T).c $(INTERNAL_SRC) $(CLI_LDLIBS)
	@mkdir -p $(B)/libfuzzer/corpus_$(T)
	$(B)/libfuzzer/fuzz_$(T) -max_total_time=$(or $(SECS),60) $(B)/libfuzzer/corpus_$(T) fuzz/corpus/$(T)

# The manual: perfring(1) and a page per command, libperfring(3) and a page
# per object (a new page is a new file here; test/man.sh checks them).
MAN1 := $(wildcard docs/*.1)
MAN3 := $(wildcard docs/*.3)
# man 3 FUNCTION: each name on a library page's NAME line gets a ".so" link
# to its page ("page:name" pairs).
MAN3_LINKS := $(shell for p in $(MAN3); do for f in $$(sed -n '/^\.SH NAME$$/{n;s/ \\-.*//;s/,//g;p;}' $$p); do \
	[ "docs/$$f.3" = "$$p" ] || echo "$${p#docs/}:$$f"; done; done)

install: all
	install -d $(DESTDIR)$(INCLUDEDIR)/perfring $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/perfring.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 include/perfring/abi.h include/perfring/tools.h $(DESTDIR)$(INCLUDEDIR)/perfring/
	install -m 644 $(B)/libperfring.a $(B)/libperfring-tools.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHLIB) $(TOOLS_SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SHLIB_FILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libperfring.so
	ln -sf libperfring-tools.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(TOOLS_SONAME)
	ln -sf $(TOOLS_SONAME) $(DESTDIR)$(LIBDIR)/libperfring-tools.so
	$(PC_SED) perfring.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/perfring.pc
	$(PC_SED) perfring-tools.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/perfring-tools.pc
	install -m 755 $(B)/perfring $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	for l in $(MAN3_LINKS); do echo ".so man3/$${l%%:*}" > $(DESTDIR)$(MANDIR)/man3/$${l#*:}.3; done
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 scripts/perfring-completion.bash $(DESTDIR)$(BASHCOMPDIR)/perfring
	install -d $(DESTDIR)$(PYTHONDIR)
	install -m 644 python/perfring.py $(DESTDIR)$(PYTHONDIR)/

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/perfring.h $(DESTDIR)$(INCLUDEDIR)/perfring/abi.h \
		$(DESTDIR)$(INCLUDEDIR)/perfring/tools.h \
		$(DESTDIR)$(LIBDIR)/libperfring.* $(DESTDIR)$(LIBDIR)/libperfring-tools.* \
		$(DESTDIR)$(LIBDIR)/pkgconfig/perfring.pc $(DESTDIR)$(LIBDIR)/pkgconfig/perfring-tools.pc \
		$(DESTDIR)$(BINDIR)/perfring $(MAN1:docs/%=$(DESTDIR)$(MANDIR)/man1/%) $(MAN3:docs/%=$(DESTDIR)$(MANDIR)/man3/%) \
		$(foreach l,$(MAN3_LINKS),$(DESTDIR)$(MANDIR)/man3/$(lastword $(subst :, ,$(l))).3) \
		$(DESTDIR)$(BASHCOMPDIR)/perfring $(DESTDIR)$(PYTHONDIR)/perfring.py \
		$(DESTDIR)$(PYTHONDIR)/__pycache__/perfring.*
	-rmdir $(DESTDIR)$(INCLUDEDIR)/perfring

# For each library: the .so exports exactly its map's names, the .a keeps
# exactly those global, and neither exports a name without the perfring_
# prefix (no exceptions).  $(1): library, $(2): its .so, $(3): its map.
define check_abi_lib
	@nm -D --defined-only $(2) | awk '$$2 ~ /^[TDBRV]$$/ {sub(/@.*/, "", $$3); print $$3}' | sort > $(B)/abi.$(1).so
	@nm -g --defined-only $(B)/$(1).a | awk 'NF == 3 {print $$3}' | sort > $(B)/abi.$(1).a
	@grep -o 'perfring_[a-z_0-9]*' $(3) | sort > $(B)/abi.$(1).map
	@diff -u $(B)/abi.$(1).map $(B)/abi.$(1).so && diff -u $(B)/abi.$(1).map $(B)/abi.$(1).a
	@{ nm -D --defined-only $(2); nm -g --defined-only $(B)/$(1).a; } | \
		awk 'NF == 3 && $$3 !~ /^perfring_/ && $$3 !~ /^PERFRING_[A-Z_]*[0-9.]*$$/ { print "  " $$3 " (" $$2 ")" }' | sort -u > $(B)/abi.$(1).unprefixed
	@if [ -s $(B)/abi.$(1).unprefixed ]; then echo "abi: $(1) exports names without the perfring_ prefix:"; cat $(B)/abi.$(1).unprefixed; exit 1; fi
	@echo "abi: $(notdir $(2)) and $(1).a export exactly $(3) ($$(wc -l < $(B)/abi.$(1).map) names), all perfring_"
endef
check-abi: $(SHLIB) $(B)/libperfring.a $(TOOLS_SHLIB) $(B)/libperfring-tools.a
	$(call check_abi_lib,libperfring,$(SHLIB),src/libperfring.map)
	$(call check_abi_lib,libperfring-tools,$(TOOLS_SHLIB),src/libperfring-tools.map)
	@needed=$$(readelf -d $(SHLIB) | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '); \
	other=$$(echo $$needed | tr ' ' '\n' | grep -v -e '^libc\.so\.6$$' -e '^ld-linux.*\.so\.[0-9]*$$'); \
	if [ -n "$$other" ]; then echo "abi: libperfring.so needs $$needed: libc and the dynamic loader only"; exit 1; fi; \
	echo "abi: libperfring.so needs only $$needed(libc, and the loader for __rseq_offset)"

FORMAT_FILES := $(wildcard include/*.h include/*/*.h src/*/*.[ch] tools/*.[ch] examples/*.c test/*.[ch] test/apps/*.c bench/*.c bench/bench.h fuzz/*.c fuzz/*.h)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(B)
