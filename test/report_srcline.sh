#!/usr/bin/env bash
# test-parallel: yes
# perfring report --sort srcline / srcfile judged by perf report --stdio
# (6.1) on the same files (recorded by perf record and by perfring
# record, with and without -g): a workload built -O0 -g (stable lines:
# srclines.c, libc's lines from libc6-dbg), kernel and vDSO samples (perf's
# "name+offset"), alone and with other keys (the column's width, its
# truncation, perf's order of equal entries), with children (the chain
# entries' srclines, as perf looks them up from the raw address), without
# and with -g none.  And PLT stubs: the workload calls strtoul() through
# its PLT, and a sample in the stub must be named strtoul@plt (not _init+,
# which the fixups stretch over the PLT, unless perf's symbol tree finds
# _init first) by script and report, as perf.  And a build without -g
# (addr2line's file:0 from the symbol table).
# The text is compared but for perf's first line and its closing tip.
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 600
set -u
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
. "$(dirname "$0")/lib.sh"
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")
[ -x "$wl/srclines" ] || fail "$wl/srclines is missing (make build/workloads/srclines)"

need_perf_events

# perf report and perfring report on one file, compared (test/lib.sh).
compare() { report_like_perf "$@"; }

# A recording by @rec (perf or perfring) into @out, options @3..; again
# (at most 20 times: one stub instruction gets a sample in most 0.6 s
# runs, not all: CI once saw 5 runs without one) until perf sees a sample
# in the strtoul stub, so the PLT check cannot pass vacuously.
record_plt() {
	local rec=$1 out=$2
	shift 2
	for try in $(seq 1 20); do
		if [ "$rec" = perf ]; then
			perf record -q "$@" -e cpu-clock -F 4000 -o "$out" -- "$wl/srclines" 0.6 2>/dev/null ||
				fail "perf record $*"
		else
			"$cli" record -q "$@" -e cpu-clock -F 4000 -o "$out" -- "$wl/srclines" 0.6 ||
				fail "perfring record $*"
		fi
		perf script -F ip,sym -i "$out" 2>/dev/null | grep -q ' strtoul@plt$' && return 0
	done
	fail "$rec record $*: no sample in strtoul@plt in 20 runs"
}

record_plt perf "$tmp/perf.data"
record_plt perfring "$tmp/ours.data"
record_plt perf "$tmp/perf-g.data" -g
record_plt perfring "$tmp/ours-g.data" -g

for f in "$tmp/perf.data" "$tmp/ours.data"; do
	compare "$f" --sort srcline
	grep -q '^ *[0-9.]*%  srclines\.c:[0-9]*$' "$tmp/ours.txt" || fail "$f: no srclines.c:N entry"
	grep -q '^ *[0-9.]*%  strtoul_l\.c:[0-9]*$' "$tmp/ours.txt" ||
		fail "$f: no libc line (is libc6-dbg installed? scripts/deps.sh)"
	grep -q '^ *[0-9.]*%  strtoul@plt+0$' "$tmp/ours.txt" || fail "$f: the PLT stub's sample is not strtoul@plt+0"
	compare "$f" --sort srcfile
	compare "$f" --sort comm,srcline
	compare "$f" -s dso,srcline
	compare "$f" -s srcline,dso
	compare "$f" -s sym,srcline
	compare "$f" -s srcfile,sym -n
	compare "$f" --sort dso,sym
	grep -q '\[\.\] strtoul@plt$' "$tmp/ours.txt" || fail "$f: report does not name strtoul@plt"
	# (a sample in another stub may be _init's, if perf's tree finds _init
	# first there: the comparison above judges it)
	# script names the stub as perf script does
	perf script -F comm,tid,ip,sym,dso -i "$f" >"$tmp/perf-s.txt" 2>/dev/null || fail "perf script"
	"$cli" script -F comm,tid,ip,sym,dso -i "$f" >"$tmp/ours-s.txt" 2>"$tmp/ours.err" ||
		fail "perfring script: $(cat "$tmp/ours.err")"
	if ! cmp -s "$tmp/perf-s.txt" "$tmp/ours-s.txt"; then
		diff "$tmp/perf-s.txt" "$tmp/ours-s.txt" | head -10 >&2
		fail "$(basename "$f"): perfring script differs from perf script"
	fi
	echo "$(basename "$f"): script names $(grep -c 'strtoul@plt' "$tmp/ours-s.txt") samples strtoul@plt, as perf"
done

for f in "$tmp/perf-g.data" "$tmp/ours-g.data"; do
	compare "$f" --sort srcline -g none
	compare "$f" --sort srcline --no-children -g none
	compare "$f" --sort srcline
	compare "$f" --sort srcfile --no-children
	compare "$f" -s comm,srcline -g caller
	compare "$f" -s srcfile,sym
done
# Without DWARF: addr2line names a local function's file from the
# symbol table's STT_FILE ("srclines.c:0"), a global's "??:0".  Built
# here without -g (its own build-id, so no cached copy has DWARF).
src=$(dirname "$(realpath "$0")")/workloads/srclines.c
cc -std=gnu11 -O0 -fno-omit-frame-pointer -o "$tmp/nodebug" "$src" || fail "cc $src"
perf record -q -e cpu-clock -F 2000 -o "$tmp/perf-n.data" -- "$tmp/nodebug" 0.4 2>/dev/null || fail "perf record nodebug"
"$cli" record -q -e cpu-clock -F 2000 -o "$tmp/ours-n.data" -- "$tmp/nodebug" 0.4 || fail "perfring record nodebug"
for f in "$tmp/perf-n.data" "$tmp/ours-n.data"; do
	compare "$f" --sort srcline
	grep -q '^ *[0-9.]*%  srclines\.c:0$' "$tmp/ours.txt" || fail "$f: no srclines.c:0 entry"
	compare "$f" --sort srcfile
	compare "$f" -s dso,sym,srcline
	perf script -F ip,sym,srcline -i "$f" >"$tmp/perf-s.txt" 2>/dev/null || fail "perf script"
	"$cli" script -F ip,sym,srcline -i "$f" >"$tmp/ours-s.txt" 2>"$tmp/ours.err" ||
		fail "perfring script: $(cat "$tmp/ours.err")"
	if ! cmp -s "$tmp/perf-s.txt" "$tmp/ours-s.txt"; then
		diff "$tmp/perf-s.txt" "$tmp/ours-s.txt" | head -10 >&2
		fail "$(basename "$f"): perfring script -F ip,sym,srcline differs from perf script"
	fi
	echo "$(basename "$f"): script -F ip,sym,srcline as perf ($(grep -c 'srclines\.c:0' "$tmp/ours-s.txt") srclines.c:0)"
done
# A -g program calling into an object built without -g: DWARF that does
# not cover the hot local function (as crtstuff's frame_dummy in every
# -g build), which addr2line names from the symbol table (nodwarf.c:0).
cat >"$tmp/nodwarf.c" <<'EOF'
#include <time.h>
static volatile unsigned long sink;
static void spin_local(double secs)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}
void nodwarf_spin(double secs) { spin_local(secs); }
EOF
cat >"$tmp/mixed.c" <<'EOF'
#include <stdlib.h>
void nodwarf_spin(double secs);
int main(int argc, char **argv) { nodwarf_spin(argc > 1 ? atof(argv[1]) : 0.3); return 0; }
EOF
cc -std=gnu11 -O0 -c -o "$tmp/nodwarf.o" "$tmp/nodwarf.c" || fail "cc nodwarf.c"
cc -std=gnu11 -O0 -g -o "$tmp/mixed" "$tmp/mixed.c" "$tmp/nodwarf.o" || fail "cc mixed.c"
perf record -q -e cpu-clock -F 2000 -o "$tmp/perf-m.data" -- "$tmp/mixed" 0.3 2>/dev/null || fail "perf record mixed"
"$cli" record -q -e cpu-clock -F 2000 -o "$tmp/ours-m.data" -- "$tmp/mixed" 0.3 || fail "perfring record mixed"
for f in "$tmp/perf-m.data" "$tmp/ours-m.data"; do
	compare "$f" --sort srcline
	grep -q '^ *[0-9.]*%  nodwarf\.c:0$' "$tmp/ours.txt" || fail "$f: no nodwarf.c:0 entry"
	perf script -F ip,sym,srcline -i "$f" >"$tmp/perf-s.txt" 2>/dev/null || fail "perf script"
	"$cli" script -F ip,sym,srcline -i "$f" >"$tmp/ours-s.txt" 2>"$tmp/ours.err" ||
		fail "perfring script: $(cat "$tmp/ours.err")"
	cmp -s "$tmp/perf-s.txt" "$tmp/ours-s.txt" ||
		fail "$(basename "$f"): script -F ip,sym,srcline differs: $(diff "$tmp/perf-s.txt" "$tmp/ours-s.txt" | head -5)"
done
echo "DWARF not covering a function: its file from the symbol table, as perf"
echo "report --sort srcline/srcfile: identical to perf report"
