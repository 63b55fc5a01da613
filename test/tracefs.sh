#!/usr/bin/env bash
# perfring record --tracefs judged by trace-cmd report (Debian trace-cmd
# 3.1.6) and by the kernel's own counters: sched_switch plus trace_marker
# writes with known content, 4K and 8K sub-buffers, the read() fallback,
# loss in a tiny buffer, SIGINT and SIGHUP (ignored under nohup), bad
# events; the private tracefs instance must be gone after every run, and
# one left by a recorder killed with SIGKILL (or named with a reused pid)
# is removed by the next recorder, which says so, while a live recorder's
# stays.  (A full disk: test/outputs.sh.)  perfring script/stats/dump read the same
# files.  perfring record --switch-output rotates the trace.dat of
# --tracefs-event with its perf.data.  Skips (77) only without tracefs or the mmap interface.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
make_tmp
T=/sys/kernel/tracing
fake=()
cleanup() {
	for i in "${fake[@]}"; do rmdir "$T/instances/$i" 2>/dev/null; done
}
cli=$(realpath "$cli")
need_cmd trace-cmd trace-cmd
need_cmd python3 python3
[ -w $T/instances ] || skip "no writable tracefs at $T (not root?)"

# No instance of ours may be left behind.
no_instance() {
	local left
	left=$(ls $T/instances | grep -E "^perfring-$1(-[0-9]+)?\$" || true)
	[ -z "$left" ] || fail "$2: instance $left left behind"
}

# A writer of N trace_marker lines "tag-PID-i" (python: one write each),
# with a short sleep every 50 writes so the scheduler switches tasks (none
# with a second argument).
marker_py='
import os, sys, time
n = int(sys.argv[1])
nap = len(sys.argv) < 3
# "stall": the recorder (our parent) stopped while the markers are
# written, so a small buffer overflows however fast the machine
stall = len(sys.argv) > 2 and sys.argv[2] == "stall"
fd = os.open("/sys/kernel/tracing/trace_marker", os.O_WRONLY)
if stall:
    import signal
    os.kill(os.getppid(), signal.SIGSTOP)
t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
for i in range(n):
    os.write(fd, b"perfring-mark-%d-%d" % (os.getpid(), i))
    if i == 0:
        t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    if nap and i % 50 == 49:
        time.sleep(0.001)
if stall:
    os.kill(os.getppid(), signal.SIGCONT)
print("first-marker-between %d %d" % (t0, t1))
'

# wait_instance PID: waits until recorder PID has made its instance
# (perfring-PID-<start time>) and turned tracing on; prints its name.
wait_instance() {
	local inst
	for _ in $(seq 400); do
		inst=$(ls $T/instances | grep -E "^perfring-$1-[0-9]+\$" || true)
		if [ -n "$inst" ] && [ "$(cat "$T/instances/$inst/tracing_on" 2>/dev/null)" = 1 ]; then
			echo "$inst"
			return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# summary FIELD: a key=value of the record summary line.
summary() { sed -n "s/.*[[ ]$1=\([0-9]*\).*/\1/p" "$tmp/rec.err" | tail -1; }

record() {
	local name=$1
	shift
	"$cli" record --tracefs "$@" 2>"$tmp/rec.err" >"$tmp/rec.out" &
	local pid=$!
	wait $pid
	local rc=$?
	no_instance $pid "$name"
	if [ $rc -ne 0 ]; then
		cat "$tmp/rec.err" >&2
		fail "$name: record exited $rc"
	fi
	grep -q 'instance perfring-' "$tmp/rec.err" || fail "$name: no summary: $(cat "$tmp/rec.err")"
}

# check NAME FILE MARKS: trace-cmd report prints every event, perfring
# script prints the same text, counts agree with the kernel's.
check() {
	local name=$1 f=$2 marks=$3 sched=${4:-sched}
	trace-cmd report -i "$f" >"$tmp/tc.txt" 2>"$tmp/tc.err" || fail "$name: trace-cmd report failed: $(head -3 "$tmp/tc.err")"
	grep -q '^cpus=' "$tmp/tc.txt" || fail "$name: trace-cmd report printed no header"
	grep -v -e '^cpus=' -e 'EVENTS DROPPED\]$' "$tmp/tc.txt" >"$tmp/tc.ev"
	local ev tc ent kread lost
	ev=$(summary events)
	ent=$(summary kernel_entries)
	kread=$(summary kernel_read)
	lost=$(summary lost)
	tc=$(wc -l <"$tmp/tc.ev")
	[ "$ev" -gt 0 ] || fail "$name: no events recorded"
	[ "$tc" = "$ev" ] || fail "$name: trace-cmd report prints $tc events, perfring recorded $ev"
	[ "$kread" = "$ev" ] || fail "$name: the kernel says $kread events were read, we wrote $ev"
	[ $((ev + lost)) = "$ent" ] || fail "$name: $ev events + $lost lost != $ent kernel entries"
	# Every marker, in order, with its task name and pid.
	if [ "$marks" -gt 0 ]; then
		local mpid got
		mpid=$(grep -o 'perfring-mark-[0-9]*-0$' "$tmp/tc.ev" | head -1 | cut -d- -f3)
		[ -n "$mpid" ] || fail "$name: first marker not in trace-cmd report"
		# A task name, not "<...>" (which trace-cmd prints for an
		# unknown pid); which name (python3, or the name before the
		# exec of a wrapper) is saved_cmdlines' choice.
		got=$(grep -c "^ *[^ <]*-$mpid .* print: .*tracing_mark_write: perfring-mark-$mpid-[0-9]*\$" "$tmp/tc.ev")
		[ "$got" = "$marks" ] || fail "$name: trace-cmd report shows $got of $marks markers with a task name for pid $mpid: $(grep -m1 "perfring-mark-$mpid-" "$tmp/tc.ev")"
		grep -o "perfring-mark-$mpid-[0-9]*\$" "$tmp/tc.ev" | sed 's/.*-//' >"$tmp/seq"
		seq 0 $((marks - 1)) | cmp -s - "$tmp/seq" || fail "$name: markers out of order or missing"
	fi
	# sched_switch fields as the kernel wrote them (prev/next comm:pid).
	if [ "$sched" = sched ]; then
		grep -q 'sched_switch: .*:[0-9]* \[[0-9]*\] [A-Z+]* ==> .*:[0-9]* \[[0-9]*\]' "$tmp/tc.ev" || fail "$name: no decoded sched_switch"
	fi
	# perfring script prints what trace-cmd report prints.
	"$cli" script -i "$f" >"$tmp/ours.txt" 2>"$tmp/ours.err" || fail "$name: perfring script failed: $(cat "$tmp/ours.err")"
	tail -n +2 "$tmp/tc.txt" | diff - "$tmp/ours.txt" >"$tmp/diff" || {
		head -10 "$tmp/diff" >&2
		fail "$name: perfring script differs from trace-cmd report"
	}
	"$cli" stats -i "$f" >"$tmp/stats.txt" || fail "$name: perfring stats failed"
	grep -q "^total: $ev events" "$tmp/stats.txt" || fail "$name: perfring stats: $(grep total "$tmp/stats.txt")"
	"$cli" dump -i "$f" >"$tmp/dump.txt" || fail "$name: perfring dump failed"
	[ "$(grep -c ' ts [0-9]* size ' "$tmp/dump.txt")" = "$ev" ] || fail "$name: perfring dump lists another event count"
	echo "$name: $ev events ($lost lost, kernel entries $ent), trace-cmd report and perfring script agree"
}

# 1. sched_switch + 400 markers, 4K sub-buffers, mmap consumer.
record basic -e sched:sched_switch -e ftrace:print -a -o "$tmp/a.dat" -- python3 -c "$marker_py" 400
grep -q 'mmap consumer' "$tmp/rec.err" || skip "the kernel has no memory-mapped trace_pipe_raw: $(head -2 "$tmp/rec.err")"
[ "$(summary lost)" = 0 ] || fail "basic: lost events in a default-sized buffer"
check basic "$tmp/a.dat" 400
[ "$(summary zero_copy_pages)" -gt 0 ] || fail "basic: no page written straight from the mapping"
grep -q 'clock mono' "$tmp/stats.txt" || fail "basic: not recorded with the mono clock"
# The first marker's time lies between the writer's CLOCK_MONOTONIC
# readings around it (trace-cmd prints microseconds, rounded).
read -r _ t0 t1 < <(grep first-marker-between "$tmp/rec.out")
ts=$(grep -m1 'perfring-mark-[0-9]*-0$' "$tmp/tc.ev" | sed 's/.*\] *\([0-9]*\)\.\([0-9]*\):.*/\1\2/')
[ -n "$ts" ] && [ -n "$t0" ] || fail "basic: no time to compare"
[ $((ts * 1000 + 500)) -ge "$t0" ] && [ $((ts * 1000 - 500)) -le "$t1" ] ||
	fail "basic: first marker at ${ts}us, not within CLOCK_MONOTONIC [$t0, $t1] ns"
echo "basic: timestamps are CLOCK_MONOTONIC (${ts}us in [$t0, $t1] ns)"

# 1a. The same file as version 7 (trace-cmd convert: zstd, and none):
# perfring script still prints what trace-cmd report prints.
for comp in any none; do
	trace-cmd convert --compression $comp -i "$tmp/a.dat" -o "$tmp/a7.dat" >/dev/null 2>&1 || fail "trace-cmd convert --compression $comp failed"
	trace-cmd report -i "$tmp/a7.dat" 2>/dev/null | tail -n +2 >"$tmp/tc7.txt"
	"$cli" script -i "$tmp/a7.dat" >"$tmp/ours7.txt" || fail "v7 ($comp): perfring script failed"
	[ -s "$tmp/tc7.txt" ] && cmp -s "$tmp/tc7.txt" "$tmp/ours7.txt" || fail "v7 ($comp): perfring script differs from trace-cmd report"
	grep -q '^trace.dat version 7' <("$cli" stats -i "$tmp/a7.dat") || fail "v7 ($comp): stats"
done
echo "v7: zstd and uncompressed conversions read as trace-cmd reads them"

# 1b. Without -a only the command's tasks (set_event_pid + event-fork in
# the instance): every sched_switch has on one side a task that did not
# exist before the recording (the command or a child of it).
ls /proc | grep -E '^[0-9]+$' | sort >"$tmp/before"
record cmdonly -e sched:sched_switch -e ftrace:print -o "$tmp/a2.dat" -- python3 -c "$marker_py" 200
check cmdonly "$tmp/a2.dat" 200
grep 'sched_switch:' "$tmp/tc.ev" | sed 's/.*sched_switch: *//; s/.*:\([0-9]*\) \[[0-9]*\] [A-Z+]* ==> .*:\([0-9]*\) \[.*/\1 \2/' >"$tmp/pairs"
other=$(awk 'NR == FNR { old[$1] = 1; next } ($1 in old || $1 == 0) && ($2 in old || $2 == 0)' "$tmp/before" "$tmp/pairs" | wc -l)
[ "$other" = 0 ] || fail "cmdonly: $other sched_switch events between tasks that are not the command's"
[ "$(cat $T/set_event_pid)" = "" ] || fail "cmdonly: the top-level set_event_pid was changed"

# 1c. -C 1: only CPU 1 (the instance's tracing_cpumask).
record cpu1 -e sched:sched_switch -e ftrace:print -a -C 1 -o "$tmp/a3.dat" -- taskset -c 1 python3 -c "$marker_py" 200
check cpu1 "$tmp/a3.dat" 0
[ "$(grep -vc '\[001\]' "$tmp/tc.ev")" = 0 ] || fail "cpu1: events of other CPUs: $(grep -v '\[001\]' "$tmp/tc.ev" | head -2)"
# With ftrace:print, a marker written on a CPU not recorded is not refused
# (the kernel fails it for everyone if the copying instance masks that CPU).
"$cli" record --tracefs -e ftrace:print -C 1 -o "$tmp/a4.dat" -- taskset -c 0 \
	sh -c 'echo perfring-cpu0 > /sys/kernel/tracing/trace_marker' 2>"$tmp/rec.err" ||
	fail "cpu1: a trace_marker write on CPU 0 was refused while recording -C 1: $(tail -3 "$tmp/rec.err")"
"$cli" record --tracefs -e sched:sched_switch -C 99 -o "$tmp/bad.dat" -- true 2>/dev/null && fail "-C 99 accepted"

# 1d. Size: kallsyms (megabytes) goes in only for events that print
# kernel symbols (ftrace's own: a marker's ip); a few exec events make a
# file of a few pages that trace-cmd reads whole.
"$cli" record --tracefs -e sched:sched_process_exec -o "$tmp/small.dat" -- \
	sh -c 'for i in 1 2 3 4 5; do /bin/true; done' 2>"$tmp/rec.err" || fail "small: $(cat "$tmp/rec.err")"
size=$(stat -c %s "$tmp/small.dat")
[ "$size" -lt 131072 ] || fail "small: $size bytes for 5 exec events"
[ "$(trace-cmd report -i "$tmp/small.dat" 2>/dev/null | grep -c 'sched_process_exec:.*filename=/bin/true')" = 5 ] ||
	fail "small: trace-cmd report does not show the 5 execs"
trace-cmd dump --summary -i "$tmp/small.dat" 2>&1 | grep -q '\[Kallsyms, 0 bytes\]' || fail "small: kallsyms in the file"
trace-cmd dump --summary -i "$tmp/a2.dat" 2>&1 | grep -Eq '\[Kallsyms, [1-9][0-9]* bytes\]' ||
	fail "ftrace:print: no kallsyms for the markers' ip"
echo "size: 5 execs in $size bytes (no kallsyms); with ftrace:print kallsyms is there"

# 2. 8K sub-buffers: the file's page size follows.
record subbuf8k -e sched:sched_switch -e ftrace:print -a --subbuf-size 8 -o "$tmp/b.dat" -- python3 -c "$marker_py" 300
grep -q '8192-byte sub-buffers' "$tmp/rec.err" || fail "subbuf8k: $(head -1 "$tmp/rec.err")"
check subbuf8k "$tmp/b.dat" 300
grep -q 'page size 8192' "$tmp/dump.txt" || fail "subbuf8k: file page size is not 8192"

# 3. read() fallback.
record read -e sched:sched_switch -e ftrace:print -a --no-mmap -o "$tmp/c.dat" -- python3 -c "$marker_py" 300
grep -q 'read() consumer' "$tmp/rec.err" || fail "read: $(head -1 "$tmp/rec.err")"
check read "$tmp/c.dat" 300

# 4. Loss: an 8K buffer per CPU, woken only when full, 20000 markers
# written while the recorder is stopped (a quiet machine's recorder kept up
# with python writing as fast as it can).
record loss -e ftrace:print -a -m 8K --buffer-percent 100 -o "$tmp/d.dat" -- python3 -c "$marker_py" 20000 stall
lost=$(summary lost)
[ "$lost" -gt 0 ] || fail "loss: no loss reported with an 8K buffer"
grep -q 'Warning: the kernel dropped' "$tmp/rec.err" || fail "loss: no warning"
check loss "$tmp/d.dat" 0 nosched
drops=$(grep -c 'EVENTS DROPPED\]$' "$tmp/tc.txt")
[ "$drops" -gt 0 ] || fail "loss: trace-cmd report shows no dropped events"
counted=$(sed -n 's/^CPU:[0-9]* \[\([0-9]*\) EVENTS DROPPED\]$/\1/p' "$tmp/tc.txt" | awk '{ s += $1 } END { print s + 0 }')
[ "$counted" -le "$lost" ] || fail "loss: pages say $counted dropped, the summary $lost"
echo "loss: $lost lost, $drops dropped marks ($counted counted in pages)"

# 5. SIGINT, and SIGHUP (a closed terminal), end a recording without a
# command; the file is complete.  Under nohup (SIGHUP ignored) SIGHUP
# does not stop it.
for sig in INT HUP; do
	env --default-signal=HUP "$cli" record --tracefs -e sched:sched_switch -o "$tmp/e.dat" 2>"$tmp/rec.err" &
	pid=$!
	wait_instance $pid >/dev/null || fail "sig$sig: instance perfring-$pid-* not made: $(cat "$tmp/rec.err")"
	kill -$sig $pid
	wait $pid || fail "sig$sig: exit status $? after SIG$sig: $(cat "$tmp/rec.err")"
	no_instance $pid sig$sig
	check sig$sig "$tmp/e.dat" 0
done
env --ignore-signal=HUP "$cli" record --tracefs -e sched:sched_switch -o "$tmp/e.dat" 2>"$tmp/rec.err" &
pid=$!
wait_instance $pid >/dev/null || fail "nohup: instance not made: $(cat "$tmp/rec.err")"
ign=$(awk '/^SigIgn:/ { print $2 }' /proc/$pid/status)
((0x$ign & 1)) || fail "nohup: the recorder does not ignore SIGHUP (SigIgn $ign)"
# Ignored, SIGHUP changes nothing: SIGINT then ends it cleanly (a SIGHUP
# with its default action would have ended it with status 129).
kill -HUP $pid
kill -INT $pid
wait $pid || fail "nohup: exit status $? after SIGHUP and SIGINT"
no_instance $pid nohup

# 5b. A recorder killed with SIGKILL leaves its instance; the next one
# removes it and says so.  The pid and the process's start time are in
# the name: an instance whose pid lives but started at another time (a
# reused pid) is stale too; one whose process lives (a recorder running
# beside) is left alone, and so are names that are not ours.
"$cli" record --tracefs -e sched:sched_switch -o "$tmp/k.dat" 2>/dev/null &
pid=$!
killed=$(wait_instance $pid) || fail "sigkill: instance not made"
kill -KILL $pid
wait $pid 2>/dev/null
[ -d "$T/instances/$killed" ] || fail "sigkill: no instance left to clean (test broken)"
"$cli" record --tracefs -e sched:sched_switch -o "$tmp/live.dat" 2>"$tmp/live.err" &
live=$!
live_inst=$(wait_instance $live) || fail "live recorder: instance not made: $(cat "$tmp/live.err")"
grep -q "removed tracefs instance $killed left by a recorder that was killed (pid $pid)" "$tmp/live.err" ||
	fail "sigkill: the next recorder did not say it removed $killed: $(cat "$tmp/live.err")"
[ -d "$T/instances/$killed" ] && fail "sigkill: $killed still there"
me_start=$(sed 's/.*) //' /proc/$$/stat | awk '{ print $20 }')
fake=("perfring-$$-1" "perfring-$$-$me_start" "perfring-x$$")
for i in "${fake[@]}"; do mkdir "$T/instances/$i" || fail "cannot make instance $i"; done
record afterkill -e sched:sched_switch -o "$tmp/k2.dat" -- true
grep -q "removed tracefs instance perfring-$$-1 left by a recorder that was killed (pid $$)" "$tmp/rec.err" ||
	fail "reused pid: perfring-$$-1 (pid $$ lives, started at $me_start) not removed: $(cat "$tmp/rec.err")"
[ -d "$T/instances/perfring-$$-1" ] && fail "reused pid: perfring-$$-1 still there"
for i in "$live_inst" "perfring-$$-$me_start" "perfring-x$$"; do
	[ -d "$T/instances/$i" ] || fail "a live or foreign instance $i was removed"
done
grep "removed tracefs instance" "$tmp/rec.err" | grep -v "perfring-$$-1 " && fail "afterkill removed more than the stale instance"
kill -INT $live
wait $live || fail "live recorder: exit status $? after a second recorder ran: $(cat "$tmp/live.err")"
no_instance $live live
cp "$tmp/live.err" "$tmp/rec.err"
check live "$tmp/live.dat" 0
echo "sigkill: the next recording removed $killed and a reused-pid instance, left a live recorder's and foreign ones"

# 5c. Other programs' writes to the top-level trace_marker are never
# refused because of us: the kernel fails them (EBADF) while an instance
# that copies them has tracing off, so a recorder copies markers only
# while it records.  A bystander writes markers all along while
# recorders start and stop.
# It writes from before the first recorder starts until after the last one
# ended (told by files, not timed: a loaded machine only makes it longer).
python3 - "$tmp/by.count" "$tmp/by.started" "$tmp/by.stop" <<'PY' &
import os, sys, time
fd = os.open("/sys/kernel/tracing/trace_marker", os.O_WRONLY)
ok = bad = 0
end = time.time() + 600
while time.time() < end and not os.path.exists(sys.argv[3]):
    try:
        os.write(fd, b"perfring-bystander")
        ok += 1
    except OSError:
        bad += 1
    if ok + bad == 1:
        open(sys.argv[2], "w").close()
    if (ok + bad) % 100 == 0:
        time.sleep(0.0005)
open(sys.argv[1], "w").write("%d %d\n" % (ok, bad))
PY
wpid=$!
wait_until "$WAIT_S" test -e "$tmp/by.started" || fail "bystander: no trace_marker write in ${WAIT_S}s"
for i in 1 2 3 4 5 6; do
	"$cli" record --tracefs -e ftrace:print -e sched:sched_switch -a \
		-o "$tmp/by.dat" -- sleep 0.2 2>"$tmp/rec.err" ||
		fail "bystander: recording $i failed: $(cat "$tmp/rec.err")"
done
touch "$tmp/by.stop"
wait $wpid
read -r ok bad <"$tmp/by.count"
[ "$bad" = 0 ] || fail "bystander: $bad of $((ok + bad)) trace_marker writes refused while recorders started and stopped"
echo "bystander: $ok trace_marker writes while 6 recorders started and stopped, none refused"

# 7. perfring record --switch-output with --tracefs-event: the trace.dat
# rotates with its perf.data (<name>.trace.dat beside each).  Markers are
# written in three phases, a SIGUSR2 after each of the first two: phase
# k's markers, all of them and only them, in order, are in file k (the
# switch drains every CPU's pages, the partly filled one too, first), as
# trace-cmd report and perfring script (which merges the pair) show.
phase_py='
import os, sys, time
d = sys.argv[1]
fd = os.open("/sys/kernel/tracing/trace_marker", os.O_WRONLY)
for p in range(3):
    for i in range(200):
        os.write(fd, b"perfring-phase-%d-%d" % (p, i))
    open(d + "/wrote-%d" % p, "w").close()
    if p < 2:
        while not os.path.exists(d + "/go-%d" % p):
            time.sleep(0.01)
'
switched_files() { [ "$(ls "$tmp/sw"/perf.data.*.trace.dat 2>/dev/null | wc -l)" -ge "$1" ]; }
mkdir "$tmp/sw"
"$cli" record -q -a --switch-output -e cpu-clock --tracefs-event ftrace:print -o "$tmp/sw/perf.data" \
	-- python3 -c "$phase_py" "$tmp/sw" 2>"$tmp/sw.err" &
rp=$!
wait_until 60 catches $rp USR2 || fail "switch: the recorder never handled SIGUSR2: $(cat "$tmp/sw.err")"
for p in 0 1; do
	wait_until 120 test -e "$tmp/sw/wrote-$p" || fail "switch: phase $p never written"
	kill -USR2 $rp
	wait_until 120 switched_files $((p + 1)) || fail "switch: no trace.dat after SIGUSR2 $((p + 1)): $(ls "$tmp/sw")"
	touch "$tmp/sw/go-$p"
done
wait $rp || fail "switch: record exited $?: $(cat "$tmp/sw.err")"
no_instance $rp switch
[ -e "$tmp/sw/perf.data" ] || [ -e "$tmp/sw/perf.data.trace.dat" ] && fail "switch: an unrenamed file is left: $(ls "$tmp/sw")"
mapfile -t files < <(ls "$tmp/sw"/perf.data.* | grep -v '\.trace\.dat$' | sort)
[ "${#files[@]}" = 3 ] || fail "switch: two SIGUSR2 and the end make 3 files, not: ${files[*]}"
k=0
for f in "${files[@]}"; do
	[ -s "$f.trace.dat" ] || fail "switch: $f has no trace.dat beside it"
	trace-cmd report -i "$f.trace.dat" 2>/dev/null | grep -o 'perfring-phase-[0-9]*-[0-9]*$' >"$tmp/sw.tc" ||
		fail "switch: trace-cmd report shows no marker in $f.trace.dat"
	seq 0 199 | sed "s/^/perfring-phase-$k-/" | cmp -s - "$tmp/sw.tc" ||
		fail "switch: $f.trace.dat does not hold exactly phase $k's markers in order: $(sort -u "$tmp/sw.tc" | sed 's/-[0-9]*$//' | uniq -c | tr '\n' ' ')"
	"$cli" script -i "$f" 2>/dev/null | grep -o 'perfring-phase-[0-9]*-[0-9]*$' | cmp -s - "$tmp/sw.tc" ||
		fail "switch: perfring script of $f does not merge its trace.dat's markers"
	k=$((k + 1))
done
echo "switch-output: 3 perf.data files, each with its trace.dat; every marker once, in its phase's file"

# 6. Errors: an unknown event, an ftrace event other than print.
for bad in nosuch:event ftrace:function; do
	"$cli" record --tracefs -e $bad -o "$tmp/f.dat" -- true 2>"$tmp/rec.err" &
	pid=$!
	wait $pid && fail "$bad: accepted"
	no_instance $pid "$bad"
	[ -e "$tmp/f.dat" ] && fail "$bad: left a file"
	grep -q "$bad" "$tmp/rec.err" || fail "$bad: error does not name it: $(cat "$tmp/rec.err")"
done
echo "errors: refused, instance removed"
exit 0
