#!/usr/bin/env bash
# test-parallel: yes
# perfring annotate --stdio judged by perf annotate --stdio (6.1) on the
# same files: recorded by perf record and by perfring record, with frame
# pointers (-g) and DWARF call graphs (--call-graph dwarf), a program's own
# function (hot_loop, chain_inner) and a shared library's (libc's memset
# and memcpy: libc is stripped, its symbols come from libc6-dbg's debug
# file found by build-id).  For each, the hottest instruction must be the
# same with a share within 0.5 points, and every instruction with samples
# must have perf's share (the same samples, the same instruction starts);
# for the program's own function the instruction text must be objdump's
# too.  Then the errors: a symbol without samples, a file without
# samples.  Skips (77) only if the kernel refuses perf_event_open.
set -u
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
fail() { echo "FAILED: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || fail "perf is not installed"
cli=$(realpath "$cli")
wl=$(realpath "$wl")
. "$(dirname "$0")/lib.sh"
for w in hot nofp memloop; do
	[ -x "$wl/$w" ] || fail "$wl/$w is missing (make build/workloads/$w)"
done
if ! perf record -q -e dummy -o "$tmp/probe.data" -- true 2>"$tmp/probe.err"; then
	skip "kernel refuses perf_event_open: $(cat "$tmp/probe.err")"
fi

# "PERCENT ADDRESS" of every instruction line with samples.
shares() { awk '$2 == ":" && $3 ~ /^[0-9a-f]+:$/ && $1 + 0 > 0 { print $1, $3 }'; }
# The instruction lines' text without the percentages.
insns() { awk '$2 == ":" && $3 ~ /^[0-9a-f]+:$/' | sed 's/^ *[0-9.]* ://'; }

# compare FILE SYMBOL [text]: ours against perf's.
compare() {
	local f=$1 sym=$2 what
	what="$(basename "$f") $sym"
	perf annotate --stdio -i "$f" "$sym" >"$tmp/perf.txt" 2>/dev/null ||
		fail "$what: perf annotate failed"
	"$cli" annotate --stdio -i "$f" "$sym" >"$tmp/ours.txt" 2>"$tmp/ours.err" ||
		fail "$what: perfring annotate failed: $(cat "$tmp/ours.err")"
	shares <"$tmp/perf.txt" >"$tmp/perf.shares"
	shares <"$tmp/ours.txt" >"$tmp/ours.shares"
	[ -s "$tmp/perf.shares" ] || fail "$what: perf annotate shows no samples"
	read -r pp pa < <(sort -k1,1gr "$tmp/perf.shares" | head -n 1)
	read -r op oa < <(sort -k1,1gr "$tmp/ours.shares" | head -n 1)
	[ "$pa" = "$oa" ] || fail "$what: hottest instruction $oa ($op%), perf: $pa ($pp%)"
	awk -v a="$pp" -v b="$op" 'BEGIN { d = a - b; exit !(d <= 0.5 && d >= -0.5) }' ||
		fail "$what: hottest share $op%, perf $pp%"
	if ! cmp -s "$tmp/perf.shares" "$tmp/ours.shares"; then
		diff "$tmp/perf.shares" "$tmp/ours.shares" | head -10 >&2
		fail "$what: the instructions' shares differ from perf annotate's"
	fi
	if [ "${3:-}" = text ]; then
		insns <"$tmp/perf.txt" >"$tmp/perf.insns"
		insns <"$tmp/ours.txt" >"$tmp/ours.insns"
		if ! cmp -s "$tmp/perf.insns" "$tmp/ours.insns"; then
			diff "$tmp/perf.insns" "$tmp/ours.insns" | head -10 >&2
			fail "$what: the instruction text differs from perf annotate's (objdump's)"
		fi
	fi
	# the header names the object, the event and the samples as perf
	[ "$(head -n 1 "$tmp/ours.txt")" = "$(head -n 1 "$tmp/perf.txt")" ] ||
		fail "$what: header '$(head -n 1 "$tmp/ours.txt")', perf: '$(head -n 1 "$tmp/perf.txt")'"
	echo "$what: hottest $oa $op% as perf, $(wc -l <"$tmp/ours.shares") sampled instructions as perf"
}

perf record -q -g -e cpu-clock -F 2000 -o "$tmp/perf-fp.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record -g"
compare "$tmp/perf-fp.data" hot_loop text
"$cli" record -q -g -e cpu-clock -F 2000 -o "$tmp/ours-fp.data" -- "$wl/hot" 0.3 || fail "perfring record -g"
compare "$tmp/ours-fp.data" hot_loop text
perf record -q --call-graph dwarf -e cpu-clock -F 1000 -o "$tmp/perf-dw.data" -- "$wl/nofp" 0.3 2>/dev/null ||
	fail "perf record --call-graph dwarf"
compare "$tmp/perf-dw.data" chain_inner text
"$cli" record -q --call-graph dwarf -e cpu-clock -F 1000 -o "$tmp/ours-dw.data" -- "$wl/nofp" 0.3 ||
	fail "perfring record --call-graph dwarf"
compare "$tmp/ours-dw.data" chain_inner text

# libc: the two hottest symbols of each recording (their names differ by
# CPU: __memset_avx2_unaligned_erms, __memset_evex_unaligned_erms, ...)
perf record -q -g -e cpu-clock -F 2000 -o "$tmp/perf-libc.data" -- "$wl/memloop" 0.3 2>/dev/null || fail "perf record memloop"
"$cli" record -q -g -e cpu-clock -F 2000 -o "$tmp/ours-libc.data" -- "$wl/memloop" 0.3 || fail "perfring record memloop"
for f in "$tmp/perf-libc.data" "$tmp/ours-libc.data"; do
	syms=$(perf report --stdio -q --no-children -g none -i "$f" --dsos libc.so.6 2>/dev/null |
		awk '$1 + 0 >= 5 { print $NF }' | head -n 2)
	[ -n "$syms" ] || fail "$(basename "$f"): perf report shows no libc symbol of 5% or more"
	for s in $syms; do
		compare "$f" "$s"
	done
done

# every symbol of a file at once: perf's blocks, hottest first
"$cli" annotate --stdio -i "$tmp/perf-fp.data" >"$tmp/all.txt" || fail "annotate without a symbol"
head -n 1 "$tmp/all.txt" | grep -q 'Disassembly of hot for cpu-clock' ||
	fail "annotate without a symbol: the first block is not hot's: $(head -n 1 "$tmp/all.txt")"

# a symbol without samples: an error naming it; no samples at all: 0
if "$cli" annotate --stdio -i "$tmp/perf-fp.data" no_such_symbol >"$tmp/none.txt" 2>"$tmp/none.err"; then
	fail "annotate of a symbol without samples succeeded"
fi
grep -q no_such_symbol "$tmp/none.err" || fail "annotate of a symbol without samples: $(cat "$tmp/none.err")"
perf record -q -e dummy -o "$tmp/empty.data" -- true 2>/dev/null || fail "perf record -e dummy"
"$cli" annotate --stdio -i "$tmp/empty.data" >"$tmp/empty.txt" 2>&1 || fail "annotate of a file without samples failed"
# under ASan+UBSan too, on the same files
if [ -n "${PERFRING_ASAN_CLI:-}" ] && [ -x "$PERFRING_ASAN_CLI" ]; then
	"$PERFRING_ASAN_CLI" annotate --stdio -i "$tmp/ours-dw.data" >"$tmp/asan.txt" 2>"$tmp/asan.err" ||
		fail "ASan annotate: $(tail -5 "$tmp/asan.err")"
	cmp -s "$tmp/asan.txt" <("$cli" annotate --stdio -i "$tmp/ours-dw.data" 2>/dev/null) ||
		fail "ASan annotate prints another text"
fi
echo "annotate: ok"
