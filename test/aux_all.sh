#!/usr/bin/env bash
# AUX trace in the same run as every other source: one perfring record
# with --replay-cs (CoreSight trace of OpenCSD's juno_r1_1 snapshot played
# through our AUX areas: this machine has no AUX PMU), kernel perf events
# (sched:sched_switch), ftrace events (--tracefs-event) and a traced
# program's application events (test/apps/apptrace), on one clock, the
# AUX trace through the perf.data writer of the others.  Judged by the
# oracles:
#   - perf script and perf report --stats read the perf.data without a
#     warning and show every sched_switch and exactly the application
#     events the program emitted;
#   - perf report -D shows the cs_etm AUXTRACE_INFO and the AUXTRACE data,
#     and perf's own decode of it equals trc_pkt_lister 1.3.3's golden
#     packet listing of the snapshot; the AUX records' times lie among
#     the samples' (one clock);
#   - perfring dump --aux gives the golden packet lines, and --decode the
#     lines trc_pkt_lister -decode gives on the snapshot without its
#     memory image (the perf.data holds no kernel image);
#   - trace-cmd report reads the trace.dat beside it; perfring script
#     merges both files as before.
# Then: the old AUX-only invocation records the trace alone; a perf.data
# (simpleperf's ETM recording) replayed beside a traced program decodes as
# the original; what cannot go beside other sources is refused; a recorder
# killed with SIGKILL leaves a file perf decodes.  Skips (77) only when the
# kernel refuses perf events or there is no writable tracefs.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
data=${CS_DATA:-test/data}
T=/sys/kernel/tracing
make_tmp
cli=$(realpath "$cli")
app=$(realpath "$apps/apptrace")
data=$(realpath "$data")
snaps=$data/opencsd/snapshots
golden=$data/opencsd/golden-1.3.3
need_cmd perf linux-perf
need_cmd trace-cmd trace-cmd
[ -w $T/instances ] || skip "no writable tracefs at $T (not root?)"
cd "$tmp" || exit 1
need_perf_events
zcat "$golden/juno_r1_1.pkts.ppl.gz" | grep '^Idx:' >gold.pkts
[ -s gold.pkts ] || fail "empty golden listing"

# One run, every source.  --chunk 64K: the snapshot's trace in one
# PERF_RECORD_AUX (perf decodes each AUX record's data on its own).
threads=2 events=3000
"$cli" record --replay-cs "$snaps/juno_r1_1" --chunk 64K \
	-e sched:sched_switch --tracefs-event sched:sched_process_exec \
	--tracefs-event sched:sched_process_exit --tracefs-event 'irq:*' \
	-o all.data -- "$app" $threads $events --rate 20000 >app.out 2>rec.err ||
	fail "record: $(cat rec.err)"
[ -s all.data ] || fail "no perf.data"
[ -s all.data.trace.dat ] || fail "no trace.dat beside the perf.data: $(cat rec.err)"
grep -q 'AUX: 0.066 MB trace in 1 AUXTRACE chunks, 1 PERF_RECORD_AUX, 0 truncated, 0 bytes lost' rec.err ||
	fail "no AUX summary (the snapshot's 64 KiB in one chunk): $(cat rec.err)"
emitted=$(sed -n 's/^emitted \([0-9]*\) lost 0 .*/\1/p' app.out)
[ -n "$emitted" ] || fail "the app lost events or did not finish: $(cat app.out)"

# perf: the samples of both sources, nothing to complain about.
perf script -i all.data >perf.txt 2>perf.err || fail "perf script: $(cat perf.err)"
grep -qi 'warning\|error\|failed' perf.err && fail "perf script complained: $(head -3 perf.err)"
ticks=$(grep -c ' apptest:tick: ' perf.txt)
[ "$ticks" = $((threads * events)) ] || fail "perf script shows $ticks ticks, the app emitted $((threads * events))"
app_all=$(grep -cE ' apptest:[a-z_]+: ' perf.txt)
[ "$app_all" = "$emitted" ] || fail "perf script shows $app_all application events, the app emitted $emitted"
switches=$(grep -c ' sched:sched_switch: ' perf.txt)
[ "$switches" -gt 0 ] || fail "no sched_switch in perf.data"
perf report --stats -i all.data >stats.txt 2>&1 || fail "perf report --stats: $(head -3 stats.txt)"
grep -qi 'warning\|failed' stats.txt && fail "perf report --stats complained: $(head -3 stats.txt)"
stat_ticks=$(awk '/^apptest:tick stats:/ { getline; print $3 }' stats.txt)
[ "$stat_ticks" = "$ticks" ] || fail "perf report --stats: $stat_ticks ticks, perf script $ticks"
stat_sw=$(awk '/^sched:sched_switch stats:/ { getline; print $3 }' stats.txt)
[ "$stat_sw" = "$switches" ] || fail "perf report --stats: $stat_sw sched_switch, perf script $switches"
for t in AUXTRACE_INFO AUXTRACE AUX ITRACE_START; do
	grep -Eq "^ *$t events: +1 " stats.txt || fail "perf report --stats: not one $t record: $(grep " $t " stats.txt)"
done

# perf report -D: the AUXTRACE data, decoded by perf into the golden.
perf report -D -i all.data >dump.txt 2>dump.err || fail "perf report -D: $(cat dump.err)"
grep -qi 'warning\|failed' dump.err && fail "perf report -D complained: $(head -3 dump.err)"
grep -q 'PERF_RECORD_AUXTRACE_INFO type: 3' dump.txt || fail "no cs_etm AUXTRACE_INFO in -D"
grep -q 'PERF_RECORD_AUXTRACE size: 0x10000  offset: 0 ' dump.txt || fail "no 64 KiB AUXTRACE in -D"
grep -E '^\s*Idx:' dump.txt | sed 's/^\s*//' >perf.pkts
cmp -s gold.pkts perf.pkts || {
	diff gold.pkts perf.pkts | head -5 >&2
	fail "perf's decode of the AUX trace differs from trc_pkt_lister's golden listing ($(wc -l <perf.pkts) lines)"
}
# One clock: the AUX record's time among the samples' (perf -D: "cpu time
# offset [size]: PERF_RECORD_...").
awk '$5 ~ /^PERF_RECORD_SAMPLE/ { if (!lo || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
	$5 == "PERF_RECORD_AUX" { aux = $2 }
	END { if (!aux || !lo || aux < lo - 2e9 || aux > hi + 2e9) { printf "AUX at %d, samples %d..%d\n", aux, lo, hi; exit 1 }
	      printf "AUX at %.6f s, samples %.6f..%.6f s\n", aux / 1e9, lo / 1e9, hi / 1e9 }' dump.txt >clock.txt ||
	fail "the AUX record is not on the samples' clock: $(cat clock.txt)"

# perfring dump --aux: the golden packets; --decode: OpenCSD's decode of
# the same trace with no memory image.
"$cli" dump --aux -i all.data >aux.txt 2>aux.err || fail "dump --aux: $(cat aux.err)"
grep -q ' 0 resyncs, 0 errors' aux.err || fail "dump --aux: errors: $(cat aux.err)"
grep '^Idx:' aux.txt | cmp -s gold.pkts - || fail "dump --aux: the packets differ from the golden listing"
"$cli" dump --aux --decode -i all.data >auxd.txt 2>auxd.err || fail "dump --aux --decode: $(cat auxd.err)"
grep -q ' 0 resyncs, 0 errors' auxd.err || fail "dump --aux --decode: errors: $(cat auxd.err)"
mkdir nomem && cp -r "$snaps/juno_r1_1/." nomem/ && chmod -R u+w nomem && rm nomem/kernel_dump.bin
for f in nomem/cpu_*.ini; do
	awk '/^\[dump/ { skip = 1; next } /^\[/ { skip = 0 } !skip' "$f" >"$f.new" && mv "$f.new" "$f"
done
if command -v trc_pkt_lister >/dev/null; then
	trc_pkt_lister -ss_dir nomem -decode -logstdout -logfilename /dev/null | grep -E '^(Idx:|ID:)' >ref.dec
	who=trc_pkt_lister
else
	"$cli" decode --snapshot nomem --decode -q | grep -E '^(Idx:|ID:)' >ref.dec
	who="decode --snapshot"
fi
[ "$(grep -c '^Idx:' ref.dec)" -gt 31054 ] || fail "$who: no decode listing of the snapshot"
grep -E '^(Idx:|ID:)' auxd.txt | cmp -s ref.dec - || {
	grep -E '^(Idx:|ID:)' auxd.txt | diff ref.dec - | head -5 >&2
	fail "dump --aux --decode differs from $who -decode on the snapshot"
}

# ftrace: trace-cmd report; the merged listing holds both oracles' lines.
trace-cmd report -i all.data.trace.dat >tc.txt 2>tc.err || fail "trace-cmd report: $(cat tc.err)"
grep -qiE 'warning|error|failed' tc.err && fail "trace-cmd report complained: $(head -3 tc.err)"
grep -E '^ *.+-[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]+: ' tc.txt >tc.events
execs=$(grep -c ' sched_process_exec: .*filename=.*apptrace' tc.events)
[ "$execs" = 1 ] || fail "trace-cmd report shows $execs execs of the app"
exits=$(grep -c ' sched_process_exit: ' tc.events)
[ "$exits" -ge $((threads + 1)) ] || fail "trace-cmd report shows $exits exits, the app has $((threads + 1)) threads"
"$cli" script -i all.data >merged.txt 2>merged.err || fail "perfring script: $(cat merged.err)"
[ -s merged.err ] && fail "perfring script complained: $(head -3 merged.err)"
"$cli" script -i all.data --no-trace-dat >perfonly.txt 2>/dev/null || fail "perfring script --no-trace-dat"
cmp -s perf.txt perfonly.txt || { diff perf.txt perfonly.txt | head -5 >&2; fail "perfring script --no-trace-dat differs from perf script"; }
sort perf.txt tc.events >want.sorted
sort merged.txt >got.sorted
cmp -s want.sorted got.sorted || fail "the merged listing is not perf script's lines plus trace-cmd report's"
echo "1: one run: $switches sched_switch + $emitted application events (perf script, --stats), $(wc -l <tc.events) ftrace events (trace-cmd report), AUX trace: $(wc -l <perf.pkts) golden packet lines (perf -D, dump --aux), $(grep -c '^Idx:' ref.dec) decode lines equal to $who; $(cat clock.txt)"

# 2. The old invocation: the AUX trace alone, as before.
"$cli" record -q --replay-cs "$snaps/juno_r1_1" --chunk 64K -o solo.data 2>err || fail "record alone: $(cat err)"
perf report --stats -i solo.data >stats.txt 2>&1 || fail "perf report --stats alone: $(head -3 stats.txt)"
grep -Eq '^ *SAMPLE events: ' stats.txt && fail "a recording of the trace alone has samples"
grep -Eq '^ *AUXTRACE events: +1 ' stats.txt || fail "alone: no AUXTRACE"
perf report -D -i solo.data 2>/dev/null | grep -E '^\s*Idx:' | sed 's/^\s*//' | cmp -s gold.pkts - ||
	fail "alone: perf's decode differs from the golden listing"

echo "2: --replay-cs alone records the trace alone, as before"

# 3. A perf.data replayed beside other sources (simpleperf's ETM
#    recording): its side-band records (59 MMAP2...) and AUX records keep
#    their order, their ids move out of the kernel's way and get
#    PERF_SAMPLE_IDENTIFIER; perf decodes the trace as the original's and
#    dump --aux --decode gives the original's instruction ranges.
etm=$data/simpleperf-etm
"$cli" record --replay-cs "$etm/perf_etm.data" -e sched:sched_switch \
	-o pdb.data -- "$app" 1 500 >app.out 2>rec.err || fail "record a perf.data beside: $(cat rec.err)"
emitted=$(sed -n 's/^emitted \([0-9]*\) lost 0 .*/\1/p' app.out)
[ -n "$emitted" ] || fail "perf.data beside: the app lost events or did not finish: $(cat app.out)"
perf report --stats -i pdb.data >stats.txt 2>&1 || fail "perf report --stats pdb.data: $(head -3 stats.txt)"
grep -qi 'warning\|failed' stats.txt && fail "perf report --stats pdb.data complained: $(head -3 stats.txt)"
mmap2=$(awk '/^ *MMAP2 events:/ { print $3 }' stats.txt)
[ "${mmap2:-0}" -ge 59 ] || fail "perf.data beside: the input's 59 MMAP2 records not replayed ($mmap2)"
perf script -i pdb.data >perf.txt 2>perf.err || fail "perf script pdb.data: $(cat perf.err)"
# perf decodes the trace and misses the traced binary (not on this
# machine): that warning, and no other.
grep -v 'CS ETM Trace: Missing DSO\|CONFIG_PROC_KCORE\|^Warning:$' perf.err | grep -qi 'warning\|error\|failed' &&
	fail "perf script pdb.data complained: $(head -3 perf.err)"
[ "$(grep -cE ' apptest:[a-z_]+: ' perf.txt)" = "$emitted" ] || fail "perf.data beside: application events differ from the $emitted emitted"
grep -q ' sched:sched_switch: ' perf.txt || fail "perf.data beside: no sched_switch"
perf report -D -i "$etm/perf_etm.data" 2>/dev/null | grep -E '^\s*Idx:' >orig.pkts
perf report -D -i pdb.data 2>dump.err | grep -E '^\s*Idx:' >ours.pkts
grep -qi 'failed' dump.err && fail "perf report -D pdb.data: $(cat dump.err)"
[ -s orig.pkts ] && cmp -s orig.pkts ours.pkts ||
	fail "perf decodes the perf.data replayed beside differently ($(wc -l <ours.pkts) vs $(wc -l <orig.pkts) lines)"
"$cli" dump --aux --decode -i "$etm/perf_etm.data" --symdir "$etm" 2>/dev/null | grep -E '^(Idx:|ID:)' >orig.dec
"$cli" dump --aux --decode -i pdb.data --symdir "$etm" 2>err | grep -E '^(Idx:|ID:)' >ours.dec
grep -q ' 0 errors' err || fail "dump --aux --decode pdb.data: $(cat err)"
[ "$(grep -c INSTR_RANGE ours.dec)" -gt 0 ] && cmp -s orig.dec ours.dec ||
	fail "dump --aux --decode of the perf.data replayed beside differs from the original's"
echo "3: perf.data beside: $mmap2 MMAP2, $emitted application events, perf decodes $(wc -l <ours.pkts) packet lines as the original's, $(grep -c INSTR_RANGE ours.dec) ranges as the original's"

# What cannot go beside other sources is refused.
"$cli" record --replay-cs "$snaps/juno_r1_1" -S -o x.data -- true 2>/dev/null
[ $? = 2 ] || fail "-S beside a command accepted"
"$cli" record --replay-cs "$snaps/juno_r1_1" -e cs_etm// -e cpu-clock -o x.data -- true 2>/dev/null
[ $? = 2 ] || fail "-e cs_etm// beside other events accepted"
"$cli" record -e cpu-clock --rate 1M -o x.data -- true 2>/dev/null
[ $? = 2 ] || fail "--rate without --replay-cs accepted"
echo "   -S, cs_etm// beside other sources, --rate without --replay-cs refused"

# 4. A recorder killed (SIGKILL) while the trace plays, beside kernel
#    events: the file it leaves holds its complete rounds, AUXTRACE data
#    among them, and perf reads and decodes it (no index: perf queues the
#    AUXTRACE records as it meets them).
"$cli" record -q --replay-cs "$snaps/juno_r1_1" --loops 100000 --rate 2M \
	-e sched:sched_switch -a -o kill.data 2>kill.err &
pid=$!
# Killed once two AUXTRACE chunks are in complete rounds (what a file
# checkpointed so far holds, as our reader sees it).
chunks_in() { "$cli" stats -i "$1" 2>/dev/null | grep -Eq '^ *AUXTRACE events: +([2-9]|[1-9][0-9]+) '; }
wait_until "$WAIT_S" chunks_in kill.data ||
	{ kill $pid; fail "record -a --replay-cs: no AUXTRACE in the file after ${WAIT_S}s: $(cat kill.err)"; }
kill -KILL $pid
wait $pid 2>/dev/null
perf report --stats -i kill.data >stats.txt 2>&1 || fail "perf report --stats of a killed recording: $(head -3 stats.txt)"
grep -qi 'failed\|error' stats.txt && fail "perf report --stats of a killed recording complained: $(head -3 stats.txt)"
grep -Eq '^ *AUXTRACE events: +([2-9]|[1-9][0-9]+) ' stats.txt || fail "killed: not the 2 AUXTRACE chunks seen: $(grep AUX stats.txt)"
grep -Eq '^ *sched:sched_switch stats:' stats.txt || fail "killed: no sched_switch samples"
perf report -D -i kill.data >dump.txt 2>dump.err || fail "perf report -D of a killed recording: $(cat dump.err)"
grep -qi 'failed\|error' dump.err && fail "perf report -D of a killed recording complained: $(head -3 dump.err)"
killed_pkts=$(grep -cE '^\s*Idx:' dump.txt)
[ "$killed_pkts" -gt 0 ] || fail "killed: perf decodes no packet"
echo "4: killed with SIGKILL: $(awk '/^ *AUXTRACE events:/ { print $3 }' stats.txt) AUXTRACE chunks, $killed_pkts packet lines decoded by perf"
echo "PASS"
