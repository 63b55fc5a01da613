#!/usr/bin/env bash
# test-parallel: yes
# Inlined frames judged by perf 6.1: a workload built -O2 -g whose static
# functions are inlined and cloned (scaled.constprop.0), and a C++ one
# (inlcxx: demangled member functions, a static function that addr2line
# names by its ELF symbol), recorded by perf
# record and by perfring record with --call-graph dwarf and with -g.
# perfring script must print what perf script prints, byte for byte, by
# default (perf shows the functions inlined at each DWARF-unwound frame as
# "name+0x.. (inlined)", the clone as its source name) and with
# --no-inline, also with -F ...,srcline (each inlined frame's own line as
# addr2line gives it; libc's lines named as binutils 2.40 names them, which
# needs libc6-dbg); perf's output must hold the inlined frames, or the test
# proves nothing.  perfring report must print what perf report --stdio
# prints on the same dwarf files: the inlined functions in the call graphs
# (compared whole with --no-children, -g caller and --no-inline) and as
# entries of their own (Children: the same inlined entries as perf's); C++ special names (a non-virtual thunk) keep their
# parameters as perf prints them.  Skips (77) only if the kernel refuses
# perf_event_open.
set -u
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
. "$(dirname "$0")/lib.sh"
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")
[ -x "$wl/inlchain" ] || fail "$wl/inlchain is missing (make build/workloads/inlchain)"
[ -x "$wl/inlcxx" ] || fail "$wl/inlcxx is missing (make build/workloads/inlcxx)"
[ -x "$wl/thunks" ] || fail "$wl/thunks is missing (make build/workloads/thunks)"

need_perf_events

# perfring script vs perf script with options $3.. on file $1.
compare() {
	local f=$1 name=$2
	shift 2
	"$cli" script "$@" -i "$f" >"$tmp/ours.txt" 2>"$tmp/ours.err" || fail "$name: perfring script $* failed: $(cat "$tmp/ours.err")"
	perf script "$@" -i "$f" >"$tmp/perf.txt" 2>/dev/null || fail "$name: perf script $* failed"
	[ -s "$tmp/perf.txt" ] || fail "$name: perf script $* printed nothing"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -20 >&2
		fail "$name: perfring script $* differs from perf script"
	fi
	[ -s "$tmp/ours.err" ] && fail "$name: perfring script complained: $(head -3 "$tmp/ours.err")"
	echo "$name: script $*: $(wc -l <"$tmp/ours.txt") lines, identical to perf"
}

# The inlined frames perf shows: mix in round_step in scaled (the clone
# scaled.constprop.0) and in checked (inlined in hot_loop).
inlined_frames() {
	local f=$1 name=$2 n
	for fn in mix round_step scaled checked; do
		n=$(grep -c "^[[:space:]]*[0-9a-f]* $fn\(+0x[0-9a-f]*\)\? (inlined)\$" "$f")
		[ "$n" -gt 0 ] || fail "$name: no '$fn (inlined)' frame: the workload's inlining is not shown"
	done
	grep -q 'scaled.constprop.0' "$f" && fail "$name: the clone scaled.constprop.0 is still shown by its symbol"
	grep -B1 -A1 " scaled\(+0x[0-9a-f]*\)\? (inlined)" "$f" | grep -q " round_step\(+0x[0-9a-f]*\)\? (inlined)" ||
		fail "$name: round_step is not shown inlined beside scaled"
	echo "$name: mix, round_step, scaled, checked shown as inlined frames"
}

# 1. perf's file.
perf record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/perf.data" -- "$wl/inlchain" 0.5 2>/dev/null ||
	fail "perf record --call-graph dwarf"
compare "$tmp/perf.data" "perf record --call-graph dwarf"
inlined_frames "$tmp/ours.txt" "perf record --call-graph dwarf"
compare "$tmp/perf.data" "perf record --call-graph dwarf" --no-inline
grep -q '(inlined)' "$tmp/ours.txt" && fail "--no-inline: inlined frames printed"
compare "$tmp/perf.data" "perf record --call-graph dwarf" --inline -F comm,tid,time,ip,sym
inlined_frames "$tmp/ours.txt" "perf record --call-graph dwarf, -F ip,sym"
# libc's frames by their DWARF names, from libc6-dbg's debug file:
# __libc_start_main (a versioned alias) is __libc_start_main_impl there.
grep -q "^[[:space:]]*[0-9a-f]* __libc_start_main_impl\(+0x[0-9a-f]*\)\? (inlined)\$" "$tmp/perf.txt" ||
	fail "perf shows no __libc_start_main_impl frame (is libc6-dbg installed? scripts/deps.sh)"
# Source lines: every frame's, the sample's alone, without inlines.
srcline=comm,tid,ip,sym,symoff,dso,srcline
compare "$tmp/perf.data" "perf record --call-graph dwarf" -F $srcline
grep -q "^  inlchain.c:[0-9]* (inlined)\$" "$tmp/ours.txt" || fail "-F srcline: no inlined frame's line"
compare "$tmp/perf.data" "perf record --call-graph dwarf" -F $srcline -G
compare "$tmp/perf.data" "perf record --call-graph dwarf" -F $srcline --no-inline

# 2. Ours.
"$cli" record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/ours.data" -- "$wl/inlchain" 0.5 ||
	fail "perfring record --call-graph dwarf"
compare "$tmp/ours.data" "perfring record --call-graph dwarf"
inlined_frames "$tmp/ours.txt" "perfring record --call-graph dwarf"
compare "$tmp/ours.data" "perfring record --call-graph dwarf" -F ip,sym,dso

# 2b. C++: inlined member functions by their demangled linkage names; a
# static function without a linkage name named by its ELF symbol.
perf record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/cxx.data" -- "$wl/inlcxx" 0.5 2>/dev/null ||
	fail "perf record --call-graph dwarf inlcxx"
compare "$tmp/cxx.data" "perf record inlcxx"
grep -q "^[[:space:]]*[0-9a-f]* ns::K<unsigned long>::step+0x[0-9a-f]* (inlined)\$" "$tmp/ours.txt" ||
	fail "inlcxx: no 'ns::K<unsigned long>::step (inlined)' frame"
grep -q " helper+0x[0-9a-f]* (inlined)" "$tmp/perf.txt" &&
	fail "inlcxx: perf names helper(), which addr2line 2.40 names main: the test's premise is gone"
compare "$tmp/cxx.data" "perf record inlcxx" -F $srcline

# 3. Frame-pointer chains: perf 6.1 adds no inlined frames to them.
"$cli" record -q -g -e cpu-clock -F 500 -o "$tmp/fp.data" -- "$wl/inlchain" 0.2 || fail "perfring record -g"
compare "$tmp/fp.data" "perfring record -g"
grep -q 'scaled.constprop.0' "$tmp/ours.txt" || fail "-g: no scaled.constprop.0 frame"
# addr2line 2.40 names a DWARF 5 sequence's first rows by file 0: libc's
# __libc_start_call_main (libc_start_call_main.h) shows as libc-start.c.
compare "$tmp/fp.data" "perfring record -g" -F $srcline
grep -A1 ' __libc_start_call_main+' "$tmp/ours.txt" | grep -q '^  libc-start.c:[0-9]*$' ||
	fail "-g -F srcline: __libc_start_call_main's line is not libc-start.c's"

# 4. perf report on the dwarf files: inlined functions in the graphs and
# as entries (Children), in perf's order (ties between inlined and other
# branches follow perf's tree of match_chain() comparisons).  With
# Children perf 6.1 can keep two entries of one symbol (its entries tree
# compares an inlined function by name and others by address, which is
# not transitive, and an insertion can miss the equal entry); ours walks
# the same tree, so the whole tables are compared.
inlined_entries() { grep -o '\[\.\] [^ ].* (inlined)$' "$1" | sort -u; }
for f in perf.data ours.data cxx.data; do
	report_like_perf "$tmp/$f" --no-children
	grep -q -- '--[0-9.]*%--.* (inlined)$\|^ *|* *[a-zA-Z_:].* (inlined)$' "$tmp/ours.txt" ||
		fail "report $f: no inlined frame in the call graphs"
	report_like_perf "$tmp/$f" --no-children -g caller
	report_like_perf "$tmp/$f" --no-inline
	grep -q '(inlined)' "$tmp/ours.txt" && fail "report $f --no-inline: inlined frames shown"
	report_like_perf "$tmp/$f"
	[ -n "$(inlined_entries "$tmp/ours.txt")" ] || fail "report $f: no inlined entry"
	echo "$f: $(inlined_entries "$tmp/ours.txt" | wc -l) inlined entries, as perf's"
done
# the frame-pointer file: perf 6.1 shows no inlined frames there
report_like_perf "$tmp/fp.data"
grep -q '(inlined)' "$tmp/ours.txt" && fail "report -g file: inlined frames shown"

# 5. C++ special names keep their parameter lists, as libiberty prints
# them inside a special name ("non-virtual thunk to Pair::second(unsigned
# long) const"); the top-level names lose theirs.
perf record -q -g -e cpu-clock -F 2000 -o "$tmp/thunks.data" -- "$wl/thunks" 0.3 2>/dev/null ||
	fail "perf record thunks"
compare "$tmp/thunks.data" "perf record thunks"
grep -q 'non-virtual thunk to Pair::second(unsigned long) const+0x' "$tmp/perf.txt" ||
	fail "thunks: perf shows no sample in the thunk: the test proves nothing"
report_like_perf "$tmp/thunks.data" --no-children --sort sym
grep -q 'non-virtual thunk to Pair::second(unsigned long) const$' "$tmp/ours.txt" ||
	fail "thunks: report shows no thunk entry"

# 6. The ASan build on the dwarf file (libdw's DIEs walked under ASan).
if [ -n "${PERFRING_ASAN_CLI:-}" ]; then
	"$PERFRING_ASAN_CLI" script -i "$tmp/ours.data" >"$tmp/asan.txt" 2>"$tmp/asan.err" ||
		fail "ASan perfring script: $(head -20 "$tmp/asan.err")"
	"$cli" script -i "$tmp/ours.data" | cmp -s - "$tmp/asan.txt" || fail "ASan build prints otherwise"
	"$PERFRING_ASAN_CLI" report -i "$tmp/ours.data" >"$tmp/asan.txt" 2>"$tmp/asan.err" ||
		fail "ASan perfring report: $(head -20 "$tmp/asan.err")"
	"$cli" report -i "$tmp/ours.data" | cmp -s - "$tmp/asan.txt" || fail "ASan report prints otherwise"
	echo "asan: same output"
fi
echo "inline: ok"
