#!/usr/bin/env bash
# test-parallel: yes
# AUX area recording judged by perf 6.1 and OpenCSD: perfring record
# --replay-cs plays real CoreSight trace through our AUX areas into a
# perf.data that
#   - perf report --stats and perf report -D / perf script -D open without
#     error, showing AUXTRACE_INFO (cs_etm, the snapshot's registers) and
#     AUXTRACE records;
#   - perf's own decode of it (-D packet listing) equals trc_pkt_lister
#     1.3.3's golden listing of the snapshot, and equals perf's decode of
#     the original perf.data when a perf.data is replayed;
#   - in snapshot mode (-S, SIGUSR2) holds one AUXTRACE per signal of the
#     asked size, flagged as a snapshot;
# and bad requests and inputs fail with a clear message.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
data=${CS_DATA:-test/data}
make_tmp
cli=$(realpath "$cli")
data=$(realpath "$data")
snaps=$data/opencsd/snapshots
golden=$data/opencsd/golden-1.3.3
need_cmd perf linux-perf
cd "$tmp" || exit 1

# 1. A snapshot directory, in one PERF_RECORD_AUX (perf decodes each AUX
#    record's data on its own: one record gives the whole listing).
"$cli" record -q --replay-cs "$snaps/juno_r1_1" --chunk 64K -o juno.data 2>err ||
	fail "record juno: $(cat err)"
perf report --stats -i juno.data >stats 2>err || fail "perf report --stats: $(cat err)"
grep -q 'failed\|Error' err stats && fail "perf report --stats complained: $(cat err)"
grep -Eq 'AUXTRACE_INFO events: +1 ' stats || fail "no AUXTRACE_INFO in --stats"
grep -Eq 'AUXTRACE events: +1 ' stats || fail "no AUXTRACE in --stats"
grep -Eq 'AUX events: +1 ' stats || fail "no PERF_RECORD_AUX in --stats"
perf report -D -i juno.data >dump 2>err || fail "perf report -D: $(cat err)"
grep -q 'failed' err && fail "perf report -D complained: $(cat err)"
grep -q 'PERF_RECORD_AUXTRACE_INFO type: 3' dump || fail "no cs_etm AUXTRACE_INFO in -D"
grep -q 'PERF_RECORD_AUXTRACE size: 0x10000  offset: 0 ' dump || fail "no 64 KiB AUXTRACE in -D"
for id in 10 11 12 13 14 15; do
	grep -Eq "TRCTRACEIDR[[:space:]]+$id\$" dump || fail "trace ID 0x$id missing from the metadata"
done
grep -E '^\s*Idx:' dump | sed 's/^\s*//' >perf.pkts
zcat "$golden/juno_r1_1.pkts.ppl.gz" | grep '^Idx:' >gold.pkts
[ -s gold.pkts ] || fail "empty golden listing"
cmp -s gold.pkts perf.pkts || {
	diff gold.pkts perf.pkts | head -5 >&2
	fail "perf's decode of our recording differs from trc_pkt_lister's listing of the snapshot"
}
echo "juno_r1_1: perf decodes our recording into the $(wc -l <perf.pkts) golden packet lines"
perf script -D -i juno.data >sdump 2>err || fail "perf script -D: $(cat err)"
# The same through perf's pipe format.
"$cli" record -q --replay-cs "$snaps/juno_r1_1" --chunk 64K -o - 2>err |
	perf report -D -i - 2>/dev/null | grep -E '^\s*Idx:' | sed 's/^\s*//' >pipe.pkts
cmp -s gold.pkts pipe.pkts || fail "pipe format: perf's decode differs ($(wc -l <pipe.pkts) lines): $(cat err)"
grep -q 'PERF_RECORD_AUXTRACE size' sdump || fail "perf script -D shows no AUXTRACE"

# 2. Chunks of 4 KiB through a small area: many AUX records and AUXTRACE
#    chunks, nothing lost.
"$cli" record -q --replay-cs "$snaps/juno_r1_1" -m ,16K -o small.data 2>err ||
	fail "record -m ,16K: $(cat err)"
perf report --stats -i small.data >stats 2>err || fail "perf --stats small: $(cat err)"
grep -Eq 'AUX events: +16 ' stats || fail "expected 16 PERF_RECORD_AUX: $(grep AUX stats)"
n=$(grep -Ec 'AUXTRACE events: +([4-9]|[1-9][0-9]+) ' stats)
[ "$n" = 1 ] || fail "expected several AUXTRACE chunks: $(grep AUXTRACE stats)"

# 3. A perf.data (simpleperf's ETM recording) replayed: perf decodes ours
#    exactly as the original, and header version 2 is accepted by us.
"$cli" record -q --replay-cs "$data/simpleperf-etm/perf_etm.data" -o sp.data 2>err ||
	fail "record perf_etm.data: $(cat err)"
perf report -D -i "$data/simpleperf-etm/perf_etm.data" 2>/dev/null | grep -E '^\s*Idx:' >orig.pkts
perf report -D -i sp.data 2>err | grep -E '^\s*Idx:' >ours.pkts
grep -q 'failed' err && fail "perf report -D sp.data: $(cat err)"
[ -s orig.pkts ] && cmp -s orig.pkts ours.pkts ||
	fail "perf decodes the replayed perf_etm.data differently ($(wc -l <ours.pkts) vs $(wc -l <orig.pkts) lines)"
perf report --stats -i sp.data >stats 2>err || fail "perf --stats sp.data: $(cat err)"
grep -Eq 'MMAP2 events: +59 ' stats || fail "side-band MMAP2 records not replayed"
echo "perf_etm.data: replayed, perf decodes the same $(wc -l <ours.pkts) packet lines"

# 3b. Per-thread mode: the same file with its AUXTRACE record turned into a
#     per-thread buffer's (idx 0, tid 17235, cpu -1): one ring pair for the
#     session, AUXTRACE with the thread's tid.
cp "$data/simpleperf-etm/perf_etm.data" pt.data && chmod u+w pt.data
printf '\x00\x00\x00\x00\x53\x43\x00\x00\xff\xff\xff\xff' |
	dd of=pt.data bs=1 seek=$((0x26a8 + 32)) conv=notrunc 2>/dev/null
"$cli" record -q --replay-cs pt.data -o pt2.data 2>err || fail "record per-thread: $(cat err)"
perf report -D -i pt2.data >dump 2>/dev/null || fail "perf report -D per-thread"
grep -q 'PERF_RECORD_AUXTRACE size: 0x180  offset: 0  .* tid: 17235  cpu: -1' dump ||
	fail "per-thread AUXTRACE record: $(grep 'AUXTRACE size' dump)"
grep -E '^\s*Idx:' dump | cmp -s orig.pkts - || fail "per-thread: perf decodes differently"

# 4. Snapshot mode: SIGUSR2 three times, then SIGINT (with =e: one more).
#    Each signal is sent once the recorder has its handler and the previous
#    snapshot is in the file (signals pending together would make one).
"$cli" record -q --replay-cs "$snaps/juno_r1_1" --loops 100000 --rate 4M -m ,64K \
	--snapshot=e16K -o snap.data 2>err &
pid=$!
wait_until "$WAIT_S" catches $pid USR2 || fail "record -S: no SIGUSR2 handler after ${WAIT_S}s: $(cat err)"
wait_until "$WAIT_S" test -s snap.data || fail "record -S: no file after ${WAIT_S}s: $(cat err)"
size=$(file_size snap.data)
for i in 1 2 3; do
	# Part of the test: the replay (4 MB/s) refills the 16 KiB it
	# snapshots in 4 ms; 200 ms leaves a loaded machine 50 times that.
	sleep 0.2
	kill -USR2 $pid
	wait_until "$WAIT_S" grown snap.data $((size + 16384)) ||
		fail "snapshot $i not in the file after ${WAIT_S}s ($(file_size snap.data) bytes): $(cat err)"
	size=$(file_size snap.data)
done
sleep 0.2
kill -INT $pid
wait $pid || fail "record -S: exit $?: $(cat err)"
perf report -D -i snap.data >dump 2>err || fail "perf report -D snap: $(cat err)"
grep -Eq 'Snapshot[[:space:]]+1$' dump || fail "AUXTRACE_INFO does not say snapshot"
n=$(grep -c 'PERF_RECORD_AUXTRACE size: 0x4000 ' dump)
[ "$n" = 4 ] || fail "expected 4 snapshots of 16 KiB, found $n"
grep -q 'PERF_RECORD_AUX offset: .* flags: 0x2 \[O\]\|flags: 0x2' dump ||
	fail "PERF_RECORD_AUX without the OVERWRITE flag"
echo "snapshots: 4 of 16 KiB, perf opens them"

# 5. Clear errors.
if [ ! -e /sys/bus/event_source/devices/cs_etm ]; then
	"$cli" record -e cs_etm// -o x.data 2>err && fail "-e cs_etm// succeeded without the PMU"
	grep -q 'no such PMU' err || fail "-e cs_etm//: unclear message: $(cat err)"
fi
"$cli" record --replay-cs /nonexistent -o x.data 2>err && fail "missing input accepted"
grep -q '/nonexistent' err || fail "missing input: unclear message: $(cat err)"
mkdir bad && cp -r "$snaps/juno_r1_1/." bad/ && chmod -R u+w bad
printf '[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\nfile=../../etc/passwd\n[source_buffers]\nETM_0=ETB_0\n[core_trace_sources]\ncpu_0=ETM_0\n' >bad/trace.ini
"$cli" record --replay-cs bad -o x.data 2>err && fail "a buffer outside the directory was accepted"
grep -q 'not a plain name' err || fail "bad buffer path: unclear message: $(cat err)"
head -c 3000 "$data/simpleperf-etm/perf_etm.data" >cut.data
"$cli" record --replay-cs cut.data -o x.data 2>err && fail "a truncated perf.data was accepted"
[ -s err ] || fail "truncated perf.data: no message"
echo "aux.sh: ok"
