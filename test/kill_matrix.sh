#!/usr/bin/env bash
# The kill matrix: SIGKILL of the traced program, of the recorder, or of
# both, at random moments, while test/apps/apptrace emits from several
# threads and perfring record also records the kernel's sched_switch
# (-a).  KILL_ROUNDS rounds (default 36), each a few seconds at most; the
# seed is printed (KILL_SEED=N replays a run).  Rounds take turns:
#
#  P  the program is SIGKILLed: the recorder ends by itself, exit 0.
#  R  the recorder is SIGKILLed, the program goes on (its threads end at
#     different times) and a second recorder, record -p PID, takes the
#     session over, then ends with SIGTERM once the program is done.
#  B  both are SIGKILLed, in either order.
#
# Per-thread rings (small ones in some rounds, so drops happen) in every
# kind; the process's shared multi-producer ring in some P rounds.
#
# Every file opens in the real perf report --stats, perf script and
# perfring stats (perf may say the file was not properly terminated,
# nothing else).  apptrace's n-th emit call of a thread is the same event
# in every run, so each recorded event names its n; --counts publishes
# after each call how many calls every thread has made, so a program
# killed with SIGKILL made exactly that many, or one more still in flight.
# A LOST record sits in front of the record that follows the drops
# (perf's time order keeps it there: it carries the time of the record
# before it), or at the end when a thread's last events were dropped.
# What is asserted, per thread (per-thread rings):
#  - its events' n strictly increase in each file;
#  - every gap before a recorded event is exactly the LOST count in
#    front of it (in every file it appears in);
#  - P: recorded + lost = calls, or calls + 1 (the call in flight);
#    R: the union of both files (deduplicated by thread and n: the rounds
#    written but not yet released when the first recorder died are in
#    both, at-least-once) plus the LOST counts (deduplicated the same
#    way, by the record they stand in front of) = calls, exactly;
#  - B: the file holds a gap-accounted prefix: the gaps are exact and no
#    event beyond the calls made (+1 in flight).
# Shared ring (P): per thread increasing n; all threads' recorded + lost =
# all calls, up to one more per thread in flight (its LOST records are
# the ring's, not a thread's, so the gaps cannot be placed per thread).
# What cannot be asserted: in B, what the ring held unread when both died
# is lost without a count (nobody is left to read it; the files stay in
# the session directory); and two windows of a few instructions remain
# that no round is likely to hit: a producer killed after taking its
# pending drop count into a LOST record but before publishing it (the
# count goes with it), and a shared-ring producer killed holding a
# reservation with a LOST record in it (skipped as 1 lost).
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 900
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
rounds=${KILL_ROUNDS:-36}
seed=${KILL_SEED:-$RANDOM}
only=${KILL_KINDS:-PRB} # replaying or chasing one kind: KILL_KINDS=R
fail() {
	echo "FAILED (round $round $kind, seed $seed; replay with KILL_SEED=$seed): $*" >&2
	exit 1
}
make_tmp
round=0 turn=0 kind=-
pids=()
sessions=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	for d in "${sessions[@]}"; do rm -rf "$d"; done
}
need_cmd perf linux-perf
cli=$(realpath "$cli")
app=$(realpath "$apps/apptrace")
[ -x "$app" ] || fail "$app is missing (make check builds it)"
need_perf_events
cd "$tmp" || exit 1
RANDOM=$seed
echo "kill_matrix: $rounds rounds, seed $seed"

# The counts file's words into the array w (one fork: forks are what
# costs most here).
read_counts() { w=($(od -An -v -t u8 -N 640 counts 2>/dev/null)); }
# lost_pending of ring $1 (struct perfring_ext at 128, its line 4)
pending_of() { od -An -t u8 -j 320 -N 8 "$1" 2>/dev/null; }
# thread 1's drops taken by the recorder (or its ring released: gone)
pending_taken() {
	local p
	p=$(pending_of "$ring1")
	[ -z "$p" ] || [ "$p" -eq 0 ]
}
# waits (bounded) until "$@" succeeds
wait_for() {
	local what=$1
	shift
	for _ in $(seq 1200); do "$@" && return 0; sleep 0.01; done
	fail "timed out waiting for $what"
}
# a child of ours that ended (a zombie) or is gone
ended() {
	local st
	read -r st 2>/dev/null <"/proc/$1/stat" || return 0
	st=${st##*) }
	[ "${st:0:1}" = Z ]
}
# waits (bounded) for our child $1 to end; its exit status in rc
reap() {
	wait_for "$2 to end" ended "$1"
	wait "$1" 2>/dev/null
	rc=$?
}
emitting() { [ -s counts ] && read_counts && [ "${w[8]:-0}" -gt 0 ]; }
thread1_done() { read_counts && [ "${w[9]}" = "$half_calls" ]; }
all_done() { read_counts && [ "${w[1]}" = 1 ]; }
# sleeps a random 0..$1 ms
nap() {
	local ms=$((RANDOM % ($1 + 1)))
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
}

# A file cut by SIGKILL must open in perf and in perfring.
opens() {
	local f=$1
	perf report --stats -i "$f" >"$f.stats" 2>"$f.stats.err" ||
		fail "$f: perf report --stats failed: $(tail -3 "$f.stats.err")"
	grep -v -e 'not properly terminated' -e 'out of order events' -e '^ *$' -e 'Check IO/CPU overload' "$f.stats.err" |
		grep -qi 'warning\|error\|incompatible\|fail' &&
		fail "$f: perf report --stats complained: $(head -5 "$f.stats.err")"
	"$cli" stats -i "$f" >"$f.ours" 2>"$f.ours.err" || fail "$f: perfring stats failed: $(tail -3 "$f.ours.err")"
	perf script -F tid,event,trace --show-lost-events -i "$f" >"$f.txt" 2>"$f.script.err" ||
		fail "$f: perf script failed: $(tail -3 "$f.script.err")"
}

# The checker: mode (P, R, B, shared), the calls per thread ("t:c ..."),
# then perf script listings (one per file).  Prints a summary line.
check() {
	local mode=$1 calls=$2
	shift 2
	awk -v mode="$mode" -v calls="$calls" '
	function base(s) { return s + int((s + 99) / 100) + int((s + 999) / 1000) + int(s / 1000) }
	function bad(msg) { print "FAILED: " msg; failed = 1; exit 1 }
	BEGIN {
		nt = split(calls, cl, " ")
		for (i = 1; i <= nt; i++) { split(cl[i], kv, ":"); c[kv[1]] = kv[2]; threads[kv[1]] = 1 }
	}
	FNR == 1 { f++ }
	$2 == "PERF_RECORD_LOST" {
		lostsum += $4
		if (mode != "shared") { pend[f, $1] += $4; tids[$1] = 1 }
		next
	}
	$2 ~ /^apptest:/ {
		tid = $1; s = -1
		if ($2 == "apptest:tick:") {
			split($3, a, "="); s = a[2] + 0; split($4, b, "="); th = b[2] + 0
			if ((tid in thr) && thr[tid] != th) bad("tid " tid " emits ticks of threads " thr[tid] " and " th)
			thr[tid] = th; n = base(s) + (s % 1000 == 0)
		} else if ($2 == "apptest:msg:") {
			split($3, a, "="); s = a[2] + 0; n = base(s) + (s % 1000 == 0) + 1
		} else if ($2 == "apptest:work_begin:") {
			split($3, a, "="); s = a[2] * 1000; n = base(s)
		} else if ($2 == "apptest:work_end:") {
			split($3, a, "="); s = a[2] * 1000 + 999; n = base(s) + 1 + (s % 100 == 0)
		} else bad("unknown event: " $0)
		tids[tid] = 1
		if (((f, tid) in last) && n <= last[f, tid]) bad("file " f " tid " tid ": event " n " after " last[f, tid])
		last[f, tid] = n
		if ((tid, n) in rec) dup++; else { rec[tid, n] = 1; nrec[tid]++ }
		if (n > maxn[tid] || !(tid in maxn)) maxn[tid] = n
		if ((f, tid) in pend) {
			if (((tid, n) in lostat) && lostat[tid, n] != pend[f, tid])
				bad("tid " tid ": LOST " pend[f, tid] " before event " n " in file " f ", " lostat[tid, n] " in another")
			if (!((tid, n) in lostat)) { lostat[tid, n] = pend[f, tid]; gaps[tid] += pend[f, tid] }
			delete pend[f, tid]
		}
		next
	}
	END {
		if (failed) exit 1
		# LOST records after the last event of a file: the drops at
		# the end of a thread (never in two files: see the header)
		# A file has them only if the thread was gone (the recorder
		# took the pending count); in two files (R) they are the same
		# LOST, written but not released when the first recorder died.
		for (k in pend) {
			split(k, fk, SUBSEP)
			if ((fk[2] in endlost) && endlost[fk[2]] != pend[k])
				bad("tid " fk[2] ": LOST " pend[k] " at the end of file " fk[1] ", " endlost[fk[2]] " in another")
			endlost[fk[2]] = pend[k]
		}
		allc = 0; allrec = 0
		for (t in threads) allc += c[t]
		for (tid in tids) {
			if (!(tid in thr)) bad("tid " tid " has no tick to name its thread")
			t = thr[tid]
			if (!(t in c)) bad("tid " tid ": thread " t " unknown")
			seen[t]++
			allrec += nrec[tid]
			if (mode == "shared") {
				if (maxn[tid] > c[t]) bad("thread " t ": event " maxn[tid] " recorded, " c[t] " calls made")
				continue
			}
			prev = -1
			for (n = 0; n <= maxn[tid]; n++) {
				if (!((tid, n) in rec)) continue
				g = n - prev - 1; l = ((tid, n) in lostat) ? lostat[tid, n] : 0
				if (g != l) bad("thread " t " (tid " tid "): " g " events missing before event " n ", LOST says " l)
				prev = n
			}
			tail = c[t] - (maxn[tid] + 1); el = endlost[tid] + 0
			if (maxn[tid] > c[t]) bad("thread " t ": event " maxn[tid] " recorded, only " c[t] " calls made")
			if (mode == "R" && el != tail)
				bad("thread " t ": " tail " events missing after event " maxn[tid] " (" c[t] " calls), LOST says " el)
			if (mode == "P" && el != tail && el != tail + 1)
				bad("thread " t ": " tail " events missing after event " maxn[tid] " (" c[t] " calls, one more may be in flight), LOST says " el)
			if (mode == "B" && el > tail + 1)
				bad("thread " t ": LOST says " el " at the end, " tail " events after event " maxn[tid])
			lost[t] = gaps[tid] + el
			totrec += nrec[tid]; totlost += lost[t]
		}
		if (mode == "R" || mode == "P")
			for (t in threads) if (c[t] > 0 && !seen[t]) bad("thread " t ": " c[t] " calls, nothing recorded or counted")
		if (mode == "shared") {
			d = allrec + lostsum - allc
			if (d < 0 || d > nt) bad(allrec " recorded + " lostsum " lost, " allc " calls made by " nt " threads")
			printf "%d recorded, %d lost, %d calls\n", allrec, lostsum, allc
		} else
			printf "%d recorded (%d in two files), %d lost, %d calls\n", totrec, dup + 0, totlost, allc
	}' "$@"
}

# "thread:calls ..." from the counts file
calls_of() {
	local out=""
	read_counts
	for ((t = 0; t < w[2]; t++)); do out+="$t:${w[8 + t]} "; done
	calls=$out
}

# recorder -a sched_switch around apptrace, in the background: sets
# rec_pid; $@ are apptrace's arguments.
start() {
	rm -f counts
	env PERFRING_RING_SIZE="$ring_size" PERFRING_MODE="$mode" \
		"$cli" record -a -e sched:sched_switch -o r1.data -- \
		"$app" "$@" --counts counts >app.out 2>r1.err &
	rec_pid=$!
	pids+=("$rec_pid")
	wait_for "the program to emit" emitting
	app_pid=${w[0]}
	pids+=("$app_pid")
	sess=$(tr '\0' '\n' <"/proc/$app_pid/environ" | sed -n 's/^PERFRING_SESSION=//p')
	[ -n "$sess" ] && sessions+=("$sess")
}

# seconds since $1 (microseconds since the epoch)
since() {
	local d=$((${EPOCHREALTIME/./} - $1))
	echo "$((d / 1000000)).$((d / 100000 % 10))"
}
start_all=${EPOCHREALTIME/./}
declare -A kinds
while ((round < rounds)); do
	round=$((round + 1))
	rm -f ./*.data* ./*.err ./*.out counts
	threads=$((2 + RANDOM % 3))
	case $((RANDOM % 4)) in
	0 | 1) ring_size=8K ;;
	2) ring_size=64K ;;
	*) ring_size=1M ;;
	esac
	mode=""
	turn=$((turn + 1))
	case $((turn % 3)) in
	1) kind=P ;;
	2) kind=R ;;
	0) kind=B ;;
	esac
	[ $kind = P ] && ((RANDOM % 3 == 0)) && mode=shared && kind=P-shared
	[[ $only == *${kind:0:1}* ]] || { round=$((round - 1)); continue; }
	kinds[$kind]=$((${kinds[$kind]:-0} + 1))
	rate=$((5000 + RANDOM % 40000))
	t0=${EPOCHREALTIME/./}
	case $kind in
	P | P-shared)
		start "$threads" 1 --forever --rate "$rate"
		nap 800
		kill -9 "$app_pid"
		reap "$rec_pid" "the recorder"
		[ $rc = 0 ] || fail "the recorder exited $rc after the program was killed: $(tail -3 r1.err)"
		opens r1.data
		grep -q 'sched:sched_switch stats' r1.data.stats || fail "no sched_switch in perf report --stats"
		grep -q ' sched:sched_switch:' r1.data.txt || fail "no sched_switch event in perf script"
		calls_of
		res=$(check "$([ $kind = P ] && echo P || echo shared)" "$calls" r1.data.txt) || fail "$res"
		;;
	R)
		# Odd threads end halfway: their rings are released (drops
		# still pending taken by the recorder) while it may be dying.
		events=$((rate * (300 + RANDOM % 600) / 1000))
		start "$threads" "$events" --rate "$rate" --exit-early --hold
		if ((RANDOM % 2)); then
			nap 1200
		else
			# just after thread 1 ended: its ring is being
			# released, its pending drops taken
			half=$((events / 2))
			half_calls=$((half + (half + 99) / 100 + (half + 999) / 1000 + half / 1000))
			wait_for "thread 1 to end" thread1_done
			ring1="$sess/$app_pid-${w[73]}.ring"
			wait_for "the recorder to take thread 1's drops" pending_taken
			nap 50
		fi
		{ kill -9 "$rec_pid" && wait "$rec_pid"; } 2>/dev/null
		"$cli" record -p "$app_pid" -o r2.data >r2.out 2>r2.err &
		rec2=$!
		pids+=("$rec2")
		wait_for "the second recorder to take the session" grep -qx "$rec2" "$sess/recorder.pid"
		wait_for "the program's threads to finish" all_done
		kill -TERM "$rec2"
		reap "$rec2" "the second recorder"
		[ $rc = 0 ] || fail "the second recorder exited $rc: $(tail -3 r2.err)"
		calls_of
		kill -TERM "$app_pid"
		opens r1.data
		opens r2.data
		res=$(check R "$calls" r1.data.txt r2.data.txt) || fail "$res"
		;;
	B)
		start "$threads" 1 --forever --rate "$rate"
		first=$app_pid second=$rec_pid
		((RANDOM % 2)) && first=$rec_pid second=$app_pid
		nap 800
		{
			kill -9 "$first"
			nap 200
			kill -9 "$second"
			wait "$rec_pid"
		} 2>/dev/null
		calls_of
		opens r1.data
		res=$(check B "$calls" r1.data.txt) || fail "$res"
		;;
	esac
	echo "round $round $kind ($(since "$t0")s): $threads threads, ring $ring_size, $rate/s each: $res"
	[ -n "${sess:-}" ] && rm -rf "$sess"
	sess=""
done
echo "kill_matrix: ok, $rounds rounds (P ${kinds[P]:-0}, P-shared ${kinds[P-shared]:-0}, R ${kinds[R]:-0}, B ${kinds[B]:-0}) in $(since "$start_all")s, seed $seed"
