#!/usr/bin/env bash
# test-parallel: yes
# --call-graph dwarf judged by perf: a workload whose calls only DWARF CFI
# can follow (built -O1 -fomit-frame-pointer), recorded by perf record and
# by perfring record with --call-graph dwarf; perf script must show the
# known chain in our file, and perfring script must print what perf script
# prints on both files, with and without --no-inline (the inlined frames
# themselves: test/inline.sh).  Skips (77) only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")
[ -x "$wl/nofp" ] || fail "$wl/nofp is missing (make build/workloads/nofp)"

need_perf_events

# The chain every sample in chain_inner() has, callee first.
chain='chain_inner chain_middle chain_outer main'

# Samples of file $1 (perf script output on stdin) whose frames start
# with $chain: their count.
chains() {
	awk -v want="$chain" '
		BEGIN { n = split(want, w, " ") }
		/^[^ \t]/ { k = 0; ok = 1; next }
		/^$/ { next }
		{
			if (k < n && ok) {
				sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym)
				if (sym != w[k + 1]) ok = 0
				k++
				if (k == n && ok) found++
			}
		}
		END { print found + 0 }'
}

# perfring script vs perf script on file $1, by default and --no-inline:
# byte-identical.
compare() {
	local f=$1 name=$2 opt
	for opt in --inline --no-inline; do
		"$cli" script $opt -i "$f" >"$tmp/ours.txt" 2>"$tmp/ours.err" || fail "$name: perfring script $opt failed: $(cat "$tmp/ours.err")"
		perf script $opt -i "$f" >"$tmp/perf.txt" 2>/dev/null || fail "$name: perf script $opt failed"
		[ -s "$tmp/perf.txt" ] || fail "$name: perf script $opt printed nothing"
		if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
			diff "$tmp/perf.txt" "$tmp/ours.txt" | head -20 >&2
			fail "$name: perfring script $opt differs from perf script $opt"
		fi
		[ -s "$tmp/ours.err" ] && fail "$name: perfring script complained: $(head -3 "$tmp/ours.err")"
		echo "$name: $(wc -l <"$tmp/ours.txt") lines, identical to perf script $opt"
	done
}

# The frame pointers cannot follow it: perf's own -g shows no full chain.
perf record -q -g -e cpu-clock -F 500 -o "$tmp/fp.data" -- "$wl/nofp" 0.3 2>/dev/null || fail "perf record -g"
n=$(perf script -i "$tmp/fp.data" 2>/dev/null | chains)
[ "$n" = 0 ] || fail "frame pointers unwound the -fomit-frame-pointer chain ($n samples): the test proves nothing"

# 1. perf's file.
perf record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/perf.data" -- "$wl/nofp" 0.3 2>/dev/null ||
	fail "perf record --call-graph dwarf"
compare "$tmp/perf.data" "perf record --call-graph dwarf"
n=$("$cli" script -i "$tmp/perf.data" | chains)
[ "$n" -gt 10 ] || fail "perfring script shows the chain in only $n samples of perf's file"

# 2. Ours, both spellings of the option.
"$cli" record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/ours.data" -- "$wl/nofp" 0.3 ||
	fail "perfring record --call-graph dwarf"
perf evlist -v -i "$tmp/ours.data" 2>/dev/null | grep -q 'sample_regs_user: 0xff0fff, sample_stack_user: 8192' ||
	fail "perfring record --call-graph dwarf: not perf's registers and stack size: $(perf evlist -v -i "$tmp/ours.data" 2>&1)"
n=$(perf script -i "$tmp/ours.data" 2>/dev/null | chains)
[ "$n" -gt 10 ] || fail "perf script shows the chain in only $n samples of our file"
compare "$tmp/ours.data" "perfring record --call-graph dwarf"

"$cli" record -q --call-graph=dwarf,4096 -e cpu-clock -F 500 -o "$tmp/ours4k.data" -- "$wl/nofp" 0.2 ||
	fail "perfring record --call-graph=dwarf,4096"
perf evlist -v -i "$tmp/ours4k.data" 2>/dev/null | grep -q 'sample_stack_user: 4096' ||
	fail "--call-graph=dwarf,4096: not a 4096-byte stack"
compare "$tmp/ours4k.data" "perfring record --call-graph=dwarf,4096"

# --call-graph fp is -g (and no longer taken for the command).
"$cli" record -q --call-graph fp -e cpu-clock -o "$tmp/fp2.data" -- "$wl/nofp" 0.1 || fail "perfring record --call-graph fp"
perf evlist -v -i "$tmp/fp2.data" 2>/dev/null | grep 'sample_type' | grep -q CALLCHAIN || fail "--call-graph fp: no callchain"
perf evlist -v -i "$tmp/fp2.data" 2>/dev/null | grep -q STACK_USER && fail "--call-graph fp: a user stack"
# perf's refusals
"$cli" record -q --call-graph dwarf,0 -o "$tmp/x.data" -- true 2>/dev/null && fail "--call-graph dwarf,0 accepted"
"$cli" record -q --call-graph dwarf,70000 -o "$tmp/x.data" -- true 2>/dev/null && fail "--call-graph dwarf,70000 accepted"
"$cli" record -q --call-graph bogus -o "$tmp/x.data" -- true 2>/dev/null && fail "--call-graph bogus accepted"
# --user-regs as perf: named registers, sampled
"$cli" record -q --user-regs=ax,sp -e cpu-clock -o "$tmp/regs.data" -- "$wl/nofp" 0.1 || fail "--user-regs=ax,sp"
perf evlist -v -i "$tmp/regs.data" 2>/dev/null | grep -q 'sample_regs_user: 0x81' || fail "--user-regs=ax,sp: not perf's mask 0x81"

# 3. report -g: the chain under main, in caller order.
"$cli" report -i "$tmp/ours.data" >"$tmp/report.txt" 2>&1 || fail "perfring report"
tr -d ' |-' <"$tmp/report.txt" | grep -v '^$' | grep -A3 -x 'main' | tr '\n' ' ' |
	grep -q 'main chain_outer chain_middle chain_inner' || fail "perfring report shows no main -> chain_inner chain: $(head -30 "$tmp/report.txt")"
echo "report: main -> chain_outer -> chain_middle -> chain_inner"

# 4. export: the folded stacks hold the unwound chain.
"$cli" export -f folded -i "$tmp/ours.data" -o "$tmp/folded.txt" || fail "perfring export -f folded"
grep -q ';main;chain_outer;chain_middle;chain_inner [0-9]*$' "$tmp/folded.txt" ||
	fail "export -f folded: no main;chain_outer;chain_middle;chain_inner stack: $(head -5 "$tmp/folded.txt")"
echo "export: folded stacks hold main;chain_outer;chain_middle;chain_inner"
echo "dwarf: ok"
