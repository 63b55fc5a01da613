#!/usr/bin/env bash
# fork() and exec() in traced programs, end to end: a parent that emits
# while it forks 50 children that emit (some from two threads, some
# declaring an event of their own, some exec'ing a new image of the same
# pid), recorded with the kernel's sched_switch beside it.  perf script is
# the oracle: every event sits under the pid and tid of the process and
# thread that emitted it (they are also in its payload), each thread's
# sequence numbers strictly increase, and per process the events in the file
# plus the losses the file counts for it equal what it emitted -- exactly.
# Runs per-thread rings, the shared ring (block mode), overwrite rings, and
# small rings that drop.  Skips (77) only if the kernel refuses
# perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
forker=$(realpath "$apps/forker")
[ -x "$forker" ] || fail "$forker is missing (make check builds it)"
need_perf_events
cd "$tmp" || exit 1

CHILDREN=50
EVENTS=500

# run NAME DROPS(yes|no) [VAR=value...]: record the forker, check.
run() {
	local name=$1 drops=$2 t0 rc
	shift 2
	t0=$(date +%s.%N)
	# The recorder's exit status is the forker's: checked last, so that a
	# failure shows what went where first.
	# About a second on an idle machine: 40 s means it hung.
	env "$@" timeout -k 5 40 "$cli" record -a -e sched:sched_switch -o "$name.data" -- \
		"$forker" $CHILDREN $EVENTS --exec-every 10 >"$name.out" 2>"$name.err"
	rc=$?
	[ $rc = 124 ] && fail "$name: the recording did not end in 40 s: $(grep -v '^\[' "$name.err" | head -5)"
	[ -s "$name.data" ] || fail "$name: perfring record failed ($rc): $(cat "$name.err")"
	perf script --show-lost-events -F pid,tid,event,trace -i "$name.data" >"$name.all" 2>"$name.perf.err" ||
		fail "$name: perf script: $(grep -v 'not valid for' "$name.perf.err")"
	# perf may say that records came later than its rounds (a LOST record
	# for drops after a producer's last event, overwrite rings read at the
	# end, a thread preempted between its clock read and its commit under
	# load): it still shows them in time order; anything else fails.
	grep -v 'not valid for' "$name.perf.err" |
		grep -Ev '^Warning:$|^[0-9]+ out of order events recorded\.$|^$' >"$name.complaints"
	[ -s "$name.complaints" ] && fail "$name: perf script complained: $(head -3 "$name.complaints")"
	grep 'PERF_RECORD_LOST' "$name.all" >"$name.lost"
	grep -v 'PERF_RECORD_LOST' "$name.all" >"$name.perf"
	"$cli" script -F pid,tid,event,trace -i "$name.data" >"$name.ours" 2>"$name.ours.err" ||
		fail "$name: perfring script: $(cat "$name.ours.err")"
	cmp -s "$name.perf" "$name.ours" ||
		{ diff "$name.perf" "$name.ours" | head -5 >&2; fail "$name: perfring script differs from perf script"; }
	grep -c 'sched:sched_switch:' "$name.perf" >"$name.kernel"
	[ "$(cat "$name.kernel")" -gt 0 ] || fail "$name: no sched_switch in the file"

	# One awk over the program's own account and perf's view of the file.
	awk -v name="$name" -v drops="$drops" -v children=$CHILDREN '
	function bad(msg) { print name ": " msg; failed = 1; exit 1 }
	FILENAME ~ /\.out$/ && $1 == "proc" {
		pid = $2; procs[pid] = 1
		att[pid] += $6; wr[pid] += $8; lo[pid] += $10; rings += $12
		total_wr += $8; total_lo += $10
		next
	}
	FILENAME ~ /\.out$/ && $1 == "thread" {
		key = $2 "/" $3; nticks[key] += $5
		if (!(key in first) || $7 < first[key]) first[key] = $7
		next
	}
	FILENAME ~ /\.lost$/ {
		split($1, pt, "/"); flost[pt[1]] += $4
		next
	}
	FILENAME ~ /\.perf$/ && $2 ~ /^forktest:/ {
		split($1, pt, "/"); pid = pt[1]; tid = pt[2]
		delete f
		for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["pid"] != pid) bad("event of pid " f["pid"] " under pid " pid ": " $0)
		fev[pid]++
		if ($2 == "forktest:tick:") {
			if (f["tid"] != tid) bad("event of tid " f["tid"] " under tid " tid ": " $0)
			key = pid "/" tid
			if ((key in last) && f["seq"] <= last[key]) bad("thread " key ": seq " f["seq"] " after " last[key])
			if (!(key in last)) lowest[key] = f["seq"]
			last[key] = f["seq"]; seen[key]++
		}
	}
	END {
		if (failed) exit 1
		n = 0
		for (pid in procs) {
			n++
			if (fev[pid] + 0 != wr[pid]) bad("pid " pid ": " fev[pid] + 0 " events in the file, it wrote " wr[pid])
			if (flost[pid] + 0 != lo[pid]) bad("pid " pid ": the file counts " flost[pid] + 0 " lost, it dropped " lo[pid])
			if (fev[pid] + flost[pid] != att[pid]) bad("pid " pid ": " fev[pid] + 0 " in the file + " flost[pid] + 0 " lost != " att[pid] " emitted")
			if (drops == "no" && lo[pid]) bad("pid " pid " dropped " lo[pid] " where nothing can drop")
		}
		for (pid in fev) if (!(pid in procs)) bad("events under pid " pid ", which no process of the forker had")
		for (pid in flost) if (!(pid in procs)) bad("losses under pid " pid ", which no process of the forker had")
		if (n != children + 1) bad(n " processes reported, not " children + 1)
		for (key in nticks) {
			if (drops == "no" && (seen[key] != nticks[key] || lowest[key] != first[key] || last[key] != first[key] + nticks[key] - 1))
				bad("thread " key ": " seen[key] + 0 " ticks " lowest[key] ".." last[key] ", it emitted " nticks[key] " from " first[key])
			if (seen[key] > nticks[key]) bad("thread " key ": " seen[key] " ticks, it emitted " nticks[key])
		}
		for (key in seen) if (!(key in nticks)) bad("ticks under thread " key ", which no thread of the forker had")
		if (drops == "yes" && !total_lo) bad("no drops with small rings: the case is not tested")
		printf "%d %d %d %d\n", total_wr, total_lo, rings, n
	}' "$name.out" "$name.lost" "$name.perf" >"$name.sum" || fail "$(cat "$name.sum")"
	[ $rc = 0 ] || fail "$name: perfring record or the forker failed ($rc): $(grep -v '^\[' "$name.err" | head -5)"
	read -r written lost rings procs <"$name.sum"
	grep -q "application: $written events of [0-9]* types from $rings rings, $lost lost" "$name.err" ||
		fail "$name: the program says $written written, $lost lost, $rings rings; the recorder: $(grep application: "$name.err")"
	echo "$name: $procs processes, $written events ($lost lost) from $rings rings, each under its own pid and tid; $(cat "$name.kernel") sched_switch, $(grep -o '^[0-9]* out of order' "$name.perf.err" | cut -d' ' -f1 | grep . || echo 0) out of order ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
}

run per-thread no
run shared-block no PERFRING_MODE=shared,block
run overwrite no PERFRING_MODE=overwrite
run small-rings yes PERFRING_MODE=drop PERFRING_RING_SIZE=8K
run shared-small yes PERFRING_MODE=shared PERFRING_RING_SIZE=8K
echo "app_fork: ok"
