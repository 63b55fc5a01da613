#!/usr/bin/env bash
# perfring script's options judged by perf script (6.1) with the same
# options on the same files, recorded by perf record and by perfring
# record: --pid --tid --comm --cpu/-C --time -S --reltime --deltatime
# --show-task-events --show-mmap-events -F srcline.  Skips (77) only if the kernel
# refuses perf_event_open.
# test-timeout: 900
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")

need_perf_events

# perfring script and perf script with the same options on file $1: the
# same lines, byte for byte (system-wide files hold other programs too,
# C++ clones and thunks among them).  Unless $min is 0, at least that
# many lines.
compare() {
	local f=$1 min=$2
	shift 2
	local delta=
	case " $* " in *" --deltatime "*) delta=--deltatime ;; esac
	# (perf shows perfring's checkpoint task, we do not: lib.sh)
	perf script -i "$f" "$@" >"$tmp/perf.raw" 2>/dev/null || fail "$f $*: perf script failed"
	sans_ckpt_task $delta <"$tmp/perf.raw" >"$tmp/perf.sans"
	mask_times_at <"$tmp/perf.sans" >"$tmp/perf.txt"
	"$cli" script -i "$f" "$@" >"$tmp/ours.raw" 2>"$tmp/ours.err" ||
		fail "$f $*: perfring script failed: $(cat "$tmp/ours.err")"
	mask_times_at <"$tmp/ours.raw" >"$tmp/ours.txt"
	local o p d
	o=$(wc -l <"$tmp/ours.txt")
	p=$(wc -l <"$tmp/perf.txt")
	[ "$o" -ge "$min" ] || fail "$(basename "$f") $*: $o lines, expected at least $min"
	[ "$o" = "$p" ] || fail "$(basename "$f") $*: perfring script has $o lines, perf script $p"
	d=$(diff "$tmp/perf.txt" "$tmp/ours.txt" | grep -c '^<')
	if [ "$d" -gt 0 ]; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "$(basename "$f") $*: $d of $p lines differ from perf script"
	fi
	echo "$(basename "$f") $*: $o lines as perf script"
}

perf record -q -g -o "$tmp/perf-g.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record -g"
"$cli" record -q -g -o "$tmp/ours-g.data" -- "$wl/hot" 0.3 || fail "perfring record -g"
perf record -q -a -e cpu-clock -e sched:sched_switch -o "$tmp/perf-a.data" -- "$wl/pingpong" 2000 2>/dev/null ||
	fail "perf record -a"
"$cli" record -q -a -e cpu-clock -e sched:sched_switch -o "$tmp/ours-a.data" -- "$wl/pingpong" 2000 ||
	fail "perfring record -a"

for f in "$tmp/perf-g.data" "$tmp/ours-g.data" "$tmp/perf-a.data" "$tmp/ours-a.data"; do
	# Real values out of the file itself: the workload's pid, a busy
	# symbol, a time window in the middle.
	pid=$(perf script -i "$f" --comm hot,pingpong -F pid 2>/dev/null | sort | uniq -c | sort -rn | awk 'NR==1 { print $2 }')
	sym=$(perf script -i "$f" -G -F ip,sym 2>/dev/null | awk '$2 != "[unknown]" { print $2 }' | sort | uniq -c | sort -rn | awk 'NR==1 { print $2 }')
	n=$(perf script -i "$f" -G -F time 2>/dev/null | wc -l)
	t0=$(perf script -i "$f" -G -F time 2>/dev/null | sed -n "$((n / 4))p" | tr -d ' :')
	t1=$(perf script -i "$f" -G -F time 2>/dev/null | sed -n "$((n / 2))p" | tr -d ' :')
	[ -n "$pid" ] && [ -n "$sym" ] && [ -n "$t0" ] || fail "$f: no samples of the workload"
	compare "$f" 1 --show-task-events
	compare "$f" 1 --show-mmap-events
	compare "$f" 1 --show-task-events --show-mmap-events -G
	compare "$f" 1 --reltime
	compare "$f" 1 --deltatime --show-task-events
	compare "$f" 1 --comm hot,pingpong
	compare "$f" 1 --pid "$pid"
	compare "$f" 1 --tid "$pid"
	compare "$f" 0 --tid 1
	compare "$f" 1 -S "$sym"
	compare "$f" 2 --time "$t0,$t1"
	compare "$f" 2 --time ",$t1"
	compare "$f" 2 --time "$t0,"
	# the same window counted from the first sample (--reltime): out of
	# the file too, as the workload's span depends on the machine's load
	first=$(perf script -i "$f" -G -F time 2>/dev/null | sed -n 1p | tr -d ' :')
	r0=$(awk -v a="$t0" -v f="$first" 'BEGIN { printf "%.6f", a - f }')
	r1=$(awk -v a="$t1" -v f="$first" 'BEGIN { printf "%.6f", a - f }')
	compare "$f" 2 --time "$r0,$r1" --reltime
	case $f in
	*-g.data)
		# Source lines (libdw) of the workload's own code
		compare "$f" 1 -S hot_loop -F ip,sym,srcline -G
		compare "$f" 1 -S hot_loop -F comm,tid,ip,sym,dso,srcline -G
		grep -q 'hot\.c:[0-9]' "$tmp/ours.txt" || fail "srcline: no hot.c:N line"
		;;
	*-a.data)
		compare "$f" 1 --cpu 0
		compare "$f" 0 -C 1 --show-task-events
		;;
	esac
done
# perfring dump --hex: perf report -D's raw blocks ("0x108@file [0x50]:
# event: 69" and the bytes), every one as perf prints it.  perf lists a few
# of them (FINISHED_ROUND) elsewhere than in file order: compared as a set.
blocks() {
	awk '/^0x[0-9a-f]+@/ { if (b) print b; b = $0; next } /^\./ { b = b "|" $0; next } END { if (b) print b }' | sort
}
for f in "$tmp/perf-g.data" "$tmp/ours-a.data"; do
	(cd "$(dirname "$f")" && perf report -D -i "$(basename "$f")" 2>/dev/null) | blocks >"$tmp/perf.txt"
	(cd "$(dirname "$f")" && "$cli" dump --hex -i "$(basename "$f")") | blocks >"$tmp/ours.txt" ||
		fail "dump --hex $f failed"
	[ -s "$tmp/ours.txt" ] || fail "dump --hex: no blocks"
	cmp -s "$tmp/perf.txt" "$tmp/ours.txt" || fail "dump --hex $(basename "$f"): raw blocks differ from perf report -D"
	echo "dump --hex $(basename "$f"): $(wc -l <"$tmp/ours.txt") raw blocks as perf report -D"
done
# What perf refuses, perfring refuses.
"$cli" script -i "$tmp/perf-g.data" --time 5,1 >/dev/null 2>&1 && fail "--time 5,1 accepted"
"$cli" script -i "$tmp/perf-g.data" --cpu 0 >/dev/null 2>&1 && fail "--cpu on a file without CPUs accepted"
echo "bad --time and --cpu without CPU samples refused, as perf"
exit 0
