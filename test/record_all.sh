#!/usr/bin/env bash
# One recorder for every source, in one run: kernel perf events
# (sched:sched_switch), ftrace events from the tracefs per-CPU buffers
# (--tracefs-event: sched_process_exec/exit and irq:*) and a traced
# program's application events (test/apps/apptrace), on one clock.
# Judged by the oracles: perf script and perf report --stats read the
# perf.data, trace-cmd report the trace.dat beside it, both without a
# warning; perfring script merges the two files: every line of each
# oracle is in it (same text, same count per event), times never go back
# across sources (to the printed microsecond: perf script truncates, trace-cmd
# report rounds), and the sources are interleaved (the command's exec before
# its first application event, kernel samples between its application
# events, its threads' exits after the last one).  Then the old
# invocations' option meaning: one parser, every mode.  Skips (77) only
# when the kernel refuses perf events or there is no writable tracefs.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
T=/sys/kernel/tracing
make_tmp
cli=$(realpath "$cli")
app=$(realpath "$apps/apptrace")
need_cmd perf linux-perf
need_cmd trace-cmd trace-cmd
[ -w $T/instances ] || skip "no writable tracefs at $T (not root?)"
cd "$tmp"
need_perf_events

threads=2 events=3000
"$cli" record -e sched:sched_switch \
	--tracefs-event sched:sched_process_exec \
	--tracefs-event sched:sched_process_exit --tracefs-event 'irq:*' \
	-o all.data -- "$app" $threads $events --rate 20000 >app.out 2>rec.err ||
	fail "record: $(cat rec.err)"
[ -s all.data ] || fail "no perf.data"
[ -s all.data.trace.dat ] || fail "no trace.dat beside the perf.data: $(cat rec.err)"
grep -q 'ftrace: wrote .* all.data.trace.dat' rec.err || fail "no ftrace summary: $(cat rec.err)"
left=$(ls $T/instances | grep -E "^perfring-" || true)
for i in $left; do
	# another recorder's (running tests) is alive; ours must be gone
	[[ $i == perfring-*-* ]] || continue
	pid=${i#perfring-}
	pid=${pid%%-*}
	kill -0 "$pid" 2>/dev/null || fail "instance $i left behind"
done
emitted=$(sed -n 's/^emitted \([0-9]*\) lost 0 .*/\1/p' app.out)
[ -n "$emitted" ] || fail "the app lost events or did not finish: $(cat app.out)"

# The oracles, with no complaint.
perf script -i all.data >perf.txt 2>perf.err || fail "perf script: $(cat perf.err)"
grep -qi 'warning\|error' perf.err && fail "perf script complained: $(head -3 perf.err)"
trace-cmd report -i all.data.trace.dat >tc.txt 2>tc.err || fail "trace-cmd report: $(cat tc.err)"
grep -qiE 'warning|error|failed' tc.err && fail "trace-cmd report complained: $(head -3 tc.err)"
perf report --stats -i all.data >stats.txt 2>&1 || fail "perf report --stats: $(head -3 stats.txt)"

# Every event of each source present, in the counts the program knows.
ticks=$(grep -c ' apptest:tick: ' perf.txt)
[ "$ticks" = $((threads * events)) ] || fail "perf script shows $ticks ticks, the app emitted $((threads * events))"
app_all=$(grep -cE ' apptest:[a-z_]+: ' perf.txt)
[ "$app_all" = "$emitted" ] || fail "perf script shows $app_all application events, the app emitted $emitted"
switches=$(grep -c ' sched:sched_switch: ' perf.txt)
[ "$switches" -gt 0 ] || fail "no sched_switch in perf.data"
stat_ticks=$(awk '/^apptest:tick stats:/ { getline; print $3 }' stats.txt)
[ "$stat_ticks" = "$ticks" ] || fail "perf report --stats: $stat_ticks ticks, perf script $ticks"
stat_sw=$(awk '/^sched:sched_switch stats:/ { getline; print $3 }' stats.txt)
[ "$stat_sw" = "$switches" ] || fail "perf report --stats: $stat_sw sched_switch, perf script $switches"
# trace-cmd report's event lines (its header lines have no "[CPU]").
grep -E '^ *.+-[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]+: ' tc.txt >tc.events
execs=$(grep -c ' sched_process_exec: .*filename=.*apptrace' tc.events)
[ "$execs" = 1 ] || fail "trace-cmd report shows $execs execs of the app"
exits=$(grep -c ' sched_process_exit: ' tc.events)
[ "$exits" -ge $((threads + 1)) ] || fail "trace-cmd report shows $exits exits, the app has $((threads + 1)) threads"

# The merged listing holds each oracle's lines, as each prints them.
"$cli" script -i all.data >merged.txt 2>merged.err || fail "perfring script: $(cat merged.err)"
[ -s merged.err ] && fail "perfring script complained: $(head -3 merged.err)"
"$cli" script -i all.data --no-trace-dat >perfonly.txt 2>/dev/null || fail "perfring script --no-trace-dat"
cmp -s perf.txt perfonly.txt || { diff perf.txt perfonly.txt | head -5 >&2; fail "perfring script --no-trace-dat differs from perf script"; }
sort perf.txt tc.events >want.sorted
sort merged.txt >got.sorted
cmp -s want.sorted got.sorted || {
	diff want.sorted got.sorted | head -5 >&2
	fail "the merged listing is not perf script's lines plus trace-cmd report's"
}
[ "$(wc -l <merged.txt)" = $(($(wc -l <perf.txt) + $(wc -l <tc.events))) ] ||
	fail "merged line count"

# Times never go back across sources; the three interleave.  Source per
# line: ftrace (comm-pid), application (apptest:), kernel perf (other).
awk '
{
	src = "perf"; t = -1
	for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) + 0; break }
	if (t < 0) { print "no time: " $0; bad = 1; exit }
	if ($0 ~ /^ *[^ ]+-[0-9]+ +\[[0-9]+\] /) src = "ftrace"
	else if ($0 ~ / apptest:[a-z_]+: /) src = "app"
	if (t < last - 0.0000011) { printf "time goes back at line %d: %s after %.6f\n", NR, $0, last; bad = 1; exit }
	if (t > last) last = t
	if (src == "app") { if (!app1) app1 = NR; appN = NR }
	if (src == "ftrace" && $0 ~ /sched_process_exec: .*apptrace/) exec = NR
	if (src == "ftrace" && $0 ~ /sched_process_exit: /) exitN = NR
	if (src == "perf" && app1 && NR > app1) between[NR] = 1
	if (src != prev) switches++
	prev = src
}
END {
	if (bad) exit 1
	inside = 0
	for (n in between) if (n + 0 < appN) inside++
	if (!(exec && exec < app1)) { print "the exec is not before the first application event"; exit 1 }
	if (!(exitN > appN)) { print "no thread exit after the last application event"; exit 1 }
	if (!inside) { print "no kernel sample between the application events"; exit 1 }
	if (switches < 4) { print "sources not interleaved: " switches " changes"; exit 1 }
	printf "interleaved: %d source changes, %d kernel samples among the application events\n", switches, inside
}' merged.txt >order.txt || fail "$(cat order.txt)"
echo "1: one run: $switches sched_switch + $emitted application events in perf.data (perf script, perf report --stats), $(wc -l <tc.events) ftrace events in the trace.dat (trace-cmd report); merged: $(cat order.txt)"

# One parser: each mode's options, and options that do not apply refused.
"$cli" record --tracefs -e sched:sched_process_exec -o tr.dat -- true 2>tr.err || fail "record --tracefs: $(cat tr.err)"
trace-cmd report -i tr.dat 2>/dev/null | grep -q 'sched_process_exec:' || fail "record --tracefs -e: no exec in the trace.dat"
"$cli" record --tracefs -e sched:sched_switch -p 1 -o x.dat -- true 2>/dev/null
[ $? = 2 ] || fail "record --tracefs took -p"
"$cli" record -e cpu-clock --subbuf-size 8K -o x.data -- true 2>/dev/null
[ $? = 2 ] || fail "--subbuf-size without --tracefs-event accepted"
"$cli" record -e cpu-clock --rate 1M -o x.data -- true 2>/dev/null
[ $? = 2 ] || fail "--rate (AUX replay) accepted in a perf recording"
"$cli" record -e sched:sched_switch --tracefs-event sched:sched_switch -o - -- true >/dev/null 2>pipe.err &&
	fail "ftrace events with -o - and no --tracefs-output accepted"
grep -q 'trace.dat a file name' pipe.err || fail "-o - with --tracefs-event: $(cat pipe.err)"
"$cli" record -e sched:sched_switch --tracefs-event sched:sched_process_exec --tracefs-output own.dat \
	-o own.data -- true 2>own.err || fail "--tracefs-output: $(cat own.err)"
trace-cmd report -i own.dat 2>/dev/null | grep -q 'sched_process_exec:' || fail "--tracefs-output: no exec in own.dat"
[ -e own.data.trace.dat ] && fail "--tracefs-output also wrote the default name"
echo "2: one parser: --tracefs -e, --tracefs-output; -p with --tracefs, --subbuf-size alone, --rate in perf mode refused"
echo "PASS"
