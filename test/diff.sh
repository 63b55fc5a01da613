#!/usr/bin/env bash
# test-parallel: yes
# perfring diff judged by perf diff (6.1) on the same two files: recorded
# by perf record and by perfring record (with -g and without), each pair
# a run that spends most of its time in hot_loop and one that spends it in
# libc's memset/memcpy.  The rows of 1% or more (baseline or delta) must be
# perf diff's, in its order and format, for -c delta-abs (perf 6.1's
# default), delta, ratio and wdiff and the sort keys dso,sym, sym, dso and
# comm,pid; the defaults perf.data.old and perf.data; --percent-limit.
# Skips (77) only if the kernel refuses perf_event_open.
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
for w in hot memloop; do
	[ -x "$wl/$w" ] || fail "$wl/$w is missing (make build/workloads/$w)"
done
if ! perf record -q -e dummy -o "$tmp/probe.data" -- true 2>"$tmp/probe.err"; then
	skip "kernel refuses perf_event_open: $(cat "$tmp/probe.err")"
fi

# The header lines and the rows of 1% or more: the Baseline column (its
# first 10 characters) or, for the deltas, the value after it.
big_rows() {
	awk -v delta="$1" '/^#/ || $0 == "" { print; next }
		{ b = substr($0, 1, 10) + 0; v = substr($0, 11); sub(/^ */, "", v); v = v + 0
		  if (v < 0) v = -v
		  if (b >= 1 || (delta && v >= 1)) print }'
}

# compare OLD NEW [OPTION...]
compare() {
	local old=$1 new=$2 delta=0
	shift 2
	case "$*" in *ratio* | *wdiff*) ;; *) delta=1 ;; esac
	perf diff "$@" "$old" "$new" 2>/dev/null | big_rows $delta >"$tmp/perf.txt"
	"$cli" diff "$@" "$old" "$new" 2>"$tmp/ours.err" | big_rows $delta >"$tmp/ours.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || fail "perfring diff $*: $(cat "$tmp/ours.err")"
	grep -q '%' "$tmp/perf.txt" || fail "perf diff $* $(basename "$old") $(basename "$new"): no rows"
	# the rows as a set: entries whose values tie to the last digit
	# are ordered by floating-point noise in perf
	if ! cmp -s <(sort "$tmp/perf.txt") <(sort "$tmp/ours.txt"); then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "diff $* $(basename "$old") $(basename "$new"): rows of 1% or more differ from perf diff's"
	fi
	cmp -s "$tmp/perf.txt" "$tmp/ours.txt" || echo "(order of tied rows differs from perf's)"
	echo "diff $* $(basename "$old") $(basename "$new"): $(grep -vc '^#' "$tmp/ours.txt") rows of 1% or more as perf diff"
}

# pairs: perf record, perfring record -g; every -c and -s
# on the first, the default and -c ratio on the others
for pair in perf: cli:-g; do
	rec=${pair%%:*} g=${pair#*:}
	for run in a b; do
		if [ $run = a ]; then args="$wl/hot 0.25; $wl/memloop 0.1"; else args="$wl/hot 0.1; $wl/memloop 0.25"; fi
		out="$tmp/$rec$g-$run.data"
		if [ $rec = perf ]; then
			perf record -q $g -e cpu-clock -F 1000 -o "$out" -- sh -c "$args" 2>/dev/null || fail "perf record $g"
		else
			"$cli" record -q $g -e cpu-clock -F 1000 -o "$out" -- sh -c "$args" || fail "perfring record $g"
		fi
	done
	a="$tmp/$rec$g-a.data" b="$tmp/$rec$g-b.data"
	compare "$a" "$b"
	compare "$a" "$b" -c ratio
	[ "$rec$g" = perf ] || continue
	compare "$b" "$a" -c delta
	compare "$a" "$b" -c wdiff:1,2
	compare "$a" "$b" -s sym
	compare "$a" "$b" -s dso
	compare "$a" "$b" -s comm,pid
done

# the defaults: perf.data.old and perf.data in the current directory
cp "$tmp/perf-a.data" "$tmp/perf.data.old"
cp "$tmp/perf-b.data" "$tmp/perf.data"
(cd "$tmp" && "$cli" diff >"$tmp/defaults.txt") || fail "diff without arguments"
(cd "$tmp" && perf diff 2>/dev/null | big_rows 1) >"$tmp/perf.txt"
big_rows 1 <"$tmp/defaults.txt" | cmp -s - "$tmp/perf.txt" || fail "diff without arguments: not perf diff's rows"
# --percent-limit: no row under it
"$cli" diff --percent-limit 5 "$tmp/perf-a.data" "$tmp/perf-b.data" >"$tmp/limit.txt" || fail "--percent-limit"
grep -v '^#' "$tmp/limit.txt" | grep -q '%' || fail "--percent-limit 5 left no row"
# (a row under it in both files is gone: neither share reaches 5%)
"$cli" diff "$tmp/perf-a.data" "$tmp/perf-b.data" | grep -v '^#' | grep -c '%' >"$tmp/all.n"
[ "$(grep -v '^#' "$tmp/limit.txt" | grep -c '%')" -lt "$(cat "$tmp/all.n")" ] ||
	fail "--percent-limit 5 hid no row"
# the differential flame graph: b spends less in hot_loop than a, more in
# memset/memcpy: hot_loop's frame blue (shrank), a libc mem* frame red
"$cli" export -f svg --diff "$tmp/perf-a.data" "$tmp/perf-b.data" -o "$tmp/diff.svg" || fail "export -f svg --diff"
if command -v xmllint >/dev/null; then xmllint --noout "$tmp/diff.svg" || fail "diff.svg is not XML"; fi
frame() { grep -o "<title>$1 ([^<]*</title><rect [^>]*fill=\"rgb([0-9,]*)\"" "$tmp/diff.svg" | head -n 1; }
frame hot_loop | grep -q 'points).*rgb([0-9]*,[0-9]*,255)' && ! frame hot_loop | grep -q 'rgb(255,' ||
	fail "hot_loop shrank but its frame is not blue: $(frame hot_loop)"
frame '__mem[a-z0-9_]*' | grep -q 'rgb(255,' || fail "libc's mem* grew but its frame is not red: $(frame '__mem[a-z0-9_]*')"
echo "export -f svg --diff: hot_loop blue, $(frame '__mem[a-z0-9_]*' | sed 's/<title>\([^ ]*\).*/\1/') red"
# a bad -c and a missing file: errors, exit 1
if "$cli" diff -c bogus "$tmp/perf-a.data" "$tmp/perf-b.data" >/dev/null 2>&1; then fail "-c bogus accepted"; fi
if "$cli" diff "$tmp/missing.data" "$tmp/perf-b.data" >/dev/null 2>&1; then fail "a missing file accepted"; fi
echo "diff: ok"
