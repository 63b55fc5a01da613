# perfring: GNU Make build.  `make`, `make check`, `make bench`, `make demo`,
# `make install PREFIX=...`, `make fuzz T=ring SECS=60`, `make format-check`.

CC ?= cc
OBJCOPY ?= objcopy
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
VERSION := 0.1.0
SOVERSION := 0

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
CFLAGS_COMMON := -std=c11 $(WARN) -Iinclude -pthread $(shell pkg-config --cflags libtraceevent libelf libzstd)
CFLAGS_release := -O2 -g
CFLAGS_asan := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
CFLAGS_tsan := -O1 -g -fsanitize=thread $(shell $(CC) -Werror -Wno-tsan -fsyntax-only -x c /dev/null 2>/dev/null && echo -Wno-tsan)
LDLIBS := -pthread $(shell pkg-config --libs libtraceevent libelf libzstd)
# CoreSight decoding: OpenCSD's C API (its .pc names only the C++ library)
# and capstone for disassembly.
CFLAGS_COMMON += $(shell pkg-config --cflags capstone)
LDLIBS += -lopencsd_c_api $(shell pkg-config --libs libopencsd capstone)

# Layers: src/ring (core, libc only) -> src/sources -> src/format ->
# src/record -> tools (CLI, public API only).
LIB_SRC := $(sort $(wildcard src/ring/*.c src/sources/*.c src/format/*.c src/record/*.c src/report/*.c))
HDRS := include/perfring.h include/perfring/abi.h $(wildcard src/*/*.h)

# Tests: every test/test_*.c runs under ASan+UBSan; the concurrency ones
# (test/stress_*.c) run under both ASan+UBSan and TSan.
UNIT_TESTS := $(basename $(notdir $(wildcard test/test_*.c)))
STRESS_TESTS := $(basename $(notdir $(wildcard test/stress_*.c)))
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
EXAMPLES := $(basename $(notdir $(wildcard examples/*.c)))
WORKLOADS := $(basename $(notdir $(wildcard test/workloads/*.c)))
TEST_APPS := $(basename $(notdir $(wildcard test/apps/*.c)))

B := build
SONAME := libperfring.so.$(SOVERSION)
SHLIB := $(B)/libperfring.so.$(VERSION)

.PHONY: all check soak bench demo install uninstall clean fuzz format format-check check-abi
all: $(B)/libperfring.a $(SHLIB) $(B)/perfring $(EXAMPLES:%=$(B)/examples/%) $(B)/perfring.pc

# One set of rules per build variant: build/ (release), build/asan, build/tsan.
define variant
$(1)_DIR := $(if $(filter release,$(1)),$(B),$(B)/$(1))
$$($(1)_DIR)/obj/%.o: %.c $(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_COMMON) $$(CFLAGS_$(1)) $$(CFLAGS) -fPIC -fvisibility=hidden -DPERFRING_BUILD -c $$< -o $$@
# Tests and fuzz replays call internal functions: they link the objects
# as they are (libperfring-internal.a, never installed).
$$($(1)_DIR)/libperfring-internal.a: $(LIB_SRC:%.c=$$($(1)_DIR)/obj/%.o)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
$$($(1)_DIR)/test/%: test/%.c test/harness.h test/stress.h $$($(1)_DIR)/libperfring-internal.a $(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_COMMON) $$(CFLAGS_$(1)) $$(CFLAGS) -Isrc -o $$@ $$< $$($(1)_DIR)/libperfring-internal.a $$(LDLIBS)
$$($(1)_DIR)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay.c $$($(1)_DIR)/libperfring-internal.a $(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_COMMON) $$(CFLAGS_$(1)) $$(CFLAGS) -Isrc -o $$@ $$< fuzz/replay.c $$($(1)_DIR)/libperfring-internal.a $$(LDLIBS)
endef
$(foreach v,release asan tsan,$(eval $(call variant,$(v))))

# The installed archive: one partially linked object in which only the
# PERFRING_API names stay global (-fvisibility=hidden decides, as for the
# .so; objcopy makes every hidden symbol local), so that a program linking
# it statically meets none of its internal names.
$(B)/libperfring.a: $(LIB_SRC:%.c=$(B)/obj/%.o)
	@rm -f $@
	$(LD) -r -o $(B)/libperfring.o $^
	$(OBJCOPY) --localize-hidden $(B)/libperfring.o
	$(AR) rcs $@ $(B)/libperfring.o

$(SHLIB): $(LIB_SRC:%.c=$(B)/obj/%.o) src/libperfring.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/libperfring.map -Wl,--no-undefined -o $@ $(filter %.o,$^) $(LDLIBS)
	ln -sf libperfring.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $(B)/libperfring.so

# The CLI and examples link the static library: one self-contained binary.
# The CLI is tools/perfring.c (dispatch), tools/cli.c (what commands
# share) and one tools/builtin-*.c per command.
TOOLS_SRC := $(sort $(wildcard tools/*.c))
TOOLS_DEPS := $(TOOLS_SRC) $(wildcard tools/*.h) include/perfring.h include/perfring/abi.h
$(B)/perfring: $(TOOLS_DEPS) $(B)/libperfring.a
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $(TOOLS_SRC) $(B)/libperfring.a $(LDLIBS)
# The CLI under ASan+UBSan, for the tests that feed it hostile programs
# (the ASan variant has no installed archive: it links the objects).
$(B)/asan/perfring: $(TOOLS_DEPS) $(B)/asan/libperfring-internal.a
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_asan) $(CFLAGS) -o $@ $(TOOLS_SRC) $(B)/asan/libperfring-internal.a $(LDLIBS)
$(B)/examples/%: examples/%.c include/perfring.h $(B)/libperfring.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $< $(B)/libperfring.a $(LDLIBS)
# Traced programs (they link libperfring) for the application tests.
$(B)/apps/%: test/apps/%.c include/perfring.h $(B)/libperfring.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $< $(B)/libperfring.a $(LDLIBS)
# Programs with known behaviour that the record tests run.
$(B)/workloads/%: test/workloads/%.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Werror -O1 -g -fno-omit-frame-pointer -o $@ $<

# bench/main.c (the case table), util.c and one file per area; the two
# traced programs below are separate.
BENCH_SRC := $(sort $(filter-out bench/app_emit.c bench/lttng_emit.c,$(wildcard bench/*.c)))
$(B)/bench: $(BENCH_SRC) bench/bench.h include/perfring.h $(B)/libperfring.a
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $(BENCH_SRC) $(B)/libperfring.a $(LDLIBS)
# The programs bench emit-vs-lttng and app-sustained run (make bench only):
# the same events through perfring and through LTTng-UST (liblttng-ust-dev).
$(B)/bench_app_emit: bench/app_emit.c include/perfring.h $(B)/libperfring.a
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_release) $(CFLAGS) -o $@ $< $(B)/libperfring.a $(LDLIBS)
$(B)/bench_lttng_emit: bench/lttng_emit.c bench/lttng_tp.h
	$(CC) -std=gnu11 $(WARN) -O2 -g -Ibench $(CFLAGS) -o $@ $< $$(pkg-config --libs lttng-ust)

$(B)/perfring.pc: perfring.pc.in Makefile
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< > $@

CHECK_BINS := $(UNIT_TESTS:%=$(B)/asan/test/%) $(STRESS_TESTS:%=$(B)/asan/test/%) \
	$(STRESS_TESTS:%=$(B)/tsan/test/%) $(FUZZ_TARGETS:%=$(B)/asan/fuzz/replay_%)

check: $(CHECK_BINS) all $(B)/asan/perfring $(WORKLOADS:%=$(B)/workloads/%) $(TEST_APPS:%=$(B)/apps/%)
	@FUZZ_CORPUS_DIR=fuzz/corpus PERFRING_CLI=$(B)/perfring PERFRING_ASAN_CLI=$(B)/asan/perfring WORKLOADS=$(B)/workloads TEST_APPS=$(B)/apps \
		./test/run-tests.sh $(CHECK_BINS) test/cli.sh test/install.sh test/record.sh test/export.sh test/script.sh test/app.sh test/app_trust.sh test/app_fork.sh test/cs.sh test/tracefs.sh test/aux.sh test/outputs.sh test/kill_matrix.sh test/soak.sh

# The hostile-program soak for longer than make check's 20 s.
soak: $(B)/asan/perfring $(B)/apps/apphostile
	SOAK_SECS=$(or $(SECS),300) PERFRING_ASAN_CLI=$(B)/asan/perfring TEST_APPS=$(B)/apps ./test/soak.sh

bench: $(B)/bench $(B)/perfring $(WORKLOADS:%=$(B)/workloads/%) $(B)/bench_app_emit $(B)/bench_lttng_emit
	$(B)/bench $(CASE)

# The ring demo, then a real recording judged by perf.
demo: all $(WORKLOADS:%=$(B)/workloads/%)
	$(B)/perfring demo
	$(B)/perfring record -g -e cpu-clock -F 2000 -o $(B)/demo.data -- $(B)/workloads/hot 0.5
	@if command -v perf >/dev/null; then perf report --stdio --no-children -i $(B)/demo.data 2>/dev/null | grep -v '^#' | grep -v '^$$' | head -n 12; \
	else echo "perf is not installed: read $(B)/demo.data with perf report"; fi

fuzz:
	@test -n "$(T)" || { echo "usage: make fuzz T=<$(FUZZ_TARGETS)> [SECS=60]"; exit 2; }
	@mkdir -p $(B)/libfuzzer
	clang $(CFLAGS_COMMON) -O1 -g -fsanitize=fuzzer,address,undefined -DPERFRING_BUILD -Isrc \
		-o $(B)/libfuzzer/fuzz_$(T) fuzz/fuzz_$(T).c $(LIB_SRC) $(LDLIBS)
	@mkdir -p $(B)/libfuzzer/corpus_$(T)
	$(B)/libfuzzer/fuzz_$(T) -max_total_time=$(or $(SECS),60) $(B)/libfuzzer/corpus_$(T) fuzz/corpus/$(T)

install: all
	install -d $(DESTDIR)$(INCLUDEDIR)/perfring $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/perfring.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 include/perfring/abi.h $(DESTDIR)$(INCLUDEDIR)/perfring/
	install -m 644 $(B)/libperfring.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libperfring.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libperfring.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		perfring.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/perfring.pc
	install -m 755 $(B)/perfring $(DESTDIR)$(BINDIR)/
	install -m 644 docs/perfring.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 docs/libperfring.3 $(DESTDIR)$(MANDIR)/man3/

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/perfring.h $(DESTDIR)$(INCLUDEDIR)/perfring/abi.h \
		$(DESTDIR)$(LIBDIR)/libperfring.* $(DESTDIR)$(LIBDIR)/pkgconfig/perfring.pc \
		$(DESTDIR)$(BINDIR)/perfring $(DESTDIR)$(MANDIR)/man1/perfring.1 $(DESTDIR)$(MANDIR)/man3/libperfring.3

# Exported symbols must be exactly the map's, and neither library may
# export a name without the perfring_ prefix (no exceptions).
check-abi: $(SHLIB) $(B)/libperfring.a
	@nm -D --defined-only $(SHLIB) | awk '$$2 ~ /^[TDBR]$$/ {sub(/@.*/, "", $$3); print $$3}' | sort > $(B)/abi.syms
	@grep -o 'perfring_[a-z_0-9]*' src/libperfring.map | sort > $(B)/abi.map
	@diff -u $(B)/abi.map $(B)/abi.syms && echo "abi: exported symbols match src/libperfring.map"
	@{ nm -D --defined-only $(SHLIB); nm -g --defined-only $(B)/libperfring.a; } | \
		awk 'NF == 3 && $$3 !~ /^perfring_/ && $$3 !~ /^PERFRING_0\./ { print "  " $$3 " (" $$2 ")" }' | sort -u > $(B)/abi.unprefixed
	@if [ -s $(B)/abi.unprefixed ]; then echo "abi: names without the perfring_ prefix exported:"; cat $(B)/abi.unprefixed; exit 1; fi
	@echo "abi: $(notdir $(SHLIB)) and libperfring.a export only perfring_ names ($$(nm -g --defined-only $(B)/libperfring.a | awk 'NF == 3' | wc -l) in the archive)"

FORMAT_FILES := $(wildcard include/*.h include/*/*.h src/*/*.[ch] tools/*.[ch] examples/*.c test/*.[ch] test/apps/*.c bench/*.c bench/bench.h fuzz/*.c)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(B)
