#!/usr/bin/env bash
# perfring sched timehist (plain, -s, -S, -w, -V) and sched latency
# (plain, -p) print what perf sched prints, byte for byte, on a file of
# `perf sched record` and on one of `perfring sched record`, both of the
# same program with known waits (workloads/offcpu.c 200 200 100 20: 200 ms
# asleep, 200 ms blocked on a pipe, the writer thread 200 ms asleep, then
# 20 ms asleep: a switch-out that prints the pipe wait's line even when
# nothing preempts the spin after it);
# timehist shows the main thread's two waits (the sleep; the pipe, which
# lasts from its block until the writer has slept 200 ms) as 150-600 ms of
# wait time (150 ms and more under load).  (The writer's wait ends in its exit, a switch-out that perf
# sched timehist does not print: the sample of a task gone has pid -1.)
# Skips (77) only if the kernel refuses perf_event_open or the sched
# tracepoints.
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
need_cmd perf linux-perf
need_perf_events "$cli"

if ! "$cli" record -q -a -e sched:sched_switch -o "$tmp/probe.data" -- true 2>"$tmp/probe.err"; then
	grep -qi 'permission\|not permitted' "$tmp/probe.err" && skip "kernel refuses the sched tracepoints: $(cat "$tmp/probe.err")"
	fail "record -e sched:sched_switch -- true: $(cat "$tmp/probe.err")"
fi
# The program runs on a CPU whose idle task's switches reach perf (see
# idle_visible_pin in lib.sh): timehist measures a wait until the switch
# that ends it, and a switch from an unseen idle task is never seen.
idle_visible_pin "$cli"
[ ${#pin[@]} = 0 ] || echo "the program runs with ${pin[*]} (its idle task's switches reach perf)"

# like_perf FILE SUBCOMMAND [OPTION...]: perfring sched and perf sched
# print the same lines.
like_perf() {
	local f=$1 what=$2
	shift 2
	perf sched "$what" -i "$f" "$@" >"$tmp/perf.txt" 2>"$tmp/perf.err" ||
		fail "perf sched $what $* on $(basename "$f"): $(head -3 "$tmp/perf.err")"
	"$cli" sched "$what" -i "$f" "$@" >"$tmp/ours.txt" 2>"$tmp/ours.err" ||
		fail "perfring sched $what $* on $(basename "$f"): $(head -3 "$tmp/ours.err")"
	[ "$(wc -l <"$tmp/perf.txt")" -gt 3 ] || fail "perf sched $what $*: nothing printed"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "perfring sched $what $* on $(basename "$f") differs from perf's"
	fi
	echo "$(basename "$f"): sched $what $*: $(wc -l <"$tmp/ours.txt") lines as perf"
}

# known_waits FILE: the timehist lines of the program's main thread
# ("offcpu[PID]") show its two waits (wait time, msec, column 4).
known_waits() {
	"$cli" sched timehist -i "$1" >"$tmp/th.txt" || fail "sched timehist"
	local n
	# (150, not 200: on a loaded machine the program can be switched out
	# on its way into the sleep, and the switch-out timehist measures the
	# wait from then comes a little late)
	n=$(awk '$3 ~ /^offcpu\[[0-9]*\]$/ && $4 >= 150 && $4 <= 600' "$tmp/th.txt" | wc -l)
	[ "$n" = 2 ] || {
		grep ' offcpu\[' "$tmp/th.txt" | sort -k4 -n | tail -5 >&2
		fail "$(basename "$1"): $n timehist lines of offcpu with 150-600 ms wait time, not 2"
	}
	echo "$(basename "$1"): $n switches of offcpu's main thread after a wait of 150-600 ms"
}

check_file() {
	local f=$1
	for o in "" -s -S -w -V; do
		like_perf "$f" timehist $o
	done
	like_perf "$f" latency
	like_perf "$f" latency -p
	known_waits "$f"
}

timeout $((WAIT_S * 2)) perf sched record -o "$tmp/perf.data" -- "${pin[@]}" "$wl/offcpu" 200 200 100 20 \
	>/dev/null 2>"$tmp/rec.err" || fail "perf sched record: $(tail -3 "$tmp/rec.err")"
check_file "$tmp/perf.data"

timeout $((WAIT_S * 2)) "$cli" sched record -o "$tmp/perfring.data" -- "${pin[@]}" "$wl/offcpu" 200 200 100 20 \
	>/dev/null 2>"$tmp/rec.err" || fail "perfring sched record: $(tail -3 "$tmp/rec.err")"
grep -q ' 0 lost samples' "$tmp/rec.err" || echo "note: $(grep 'Captured' "$tmp/rec.err")"
# the sched events perf sched record asks for
perf evlist -i "$tmp/perf.data" 2>/dev/null | grep '^sched:' | sort >"$tmp/perf.ev"
perf evlist -i "$tmp/perfring.data" 2>/dev/null | grep '^sched:' | sort >"$tmp/ours.ev"
cmp -s "$tmp/perf.ev" "$tmp/ours.ev" || fail "sched record's events: $(tr '\n' ' ' <"$tmp/ours.ev"), perf's: $(tr '\n' ' ' <"$tmp/perf.ev")"
check_file "$tmp/perfring.data"
echo "PASS"
