#!/usr/bin/env bash
# test-parallel: yes
# CoreSight decoding judged by OpenCSD's own listings: perfring decode
# --snapshot on the OpenCSD test snapshots gives the lines of
# trc_pkt_lister 1.3.3 (the golden files, and the installed trc_pkt_lister,
# which the test requires); damaged snapshots give clear errors or resync.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
data=${CS_DATA:-test/data}
for tool in python3 trc_pkt_lister; do
	command -v $tool >/dev/null || fail "$tool is not installed (.ci/run installs python3 libopencsd-bin)"
done
make_tmp
cli=$(realpath "$cli")
data=$(realpath "$data")
snaps=$data/opencsd/snapshots
golden=$data/opencsd/golden-1.3.3

lines() { grep -E '^(Idx:|ID:)' "$@"; }

# Golden listings: packets, and packets + elements.
for n in a57_single_step juno_r1_1; do
	for m in pkts decode; do
		"$cli" decode --snapshot "$snaps/$n" "--$m" >"$tmp/out" 2>"$tmp/err" ||
			fail "$n --$m: exit $?: $(cat "$tmp/err")"
		lines "$tmp/out" >"$tmp/ours"
		zcat "$golden/$n.$m.ppl.gz" | lines >"$tmp/gold"
		[ -s "$tmp/gold" ] || fail "$n: empty golden listing"
		if ! cmp -s "$tmp/gold" "$tmp/ours"; then
			diff "$tmp/gold" "$tmp/ours" | head -10 >&2
			fail "$n --$m: listing differs from trc_pkt_lister 1.3.3"
		fi
		echo "$n --$m: $(wc -l <"$tmp/ours") lines equal to the golden listing"
	done
done

# The same against the installed trc_pkt_lister (libopencsd-bin).
for n in a57_single_step juno_r1_1; do
	(cd "$tmp" && trc_pkt_lister -ss_dir "$snaps/$n" -decode -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
	"$cli" decode --snapshot "$snaps/$n" --decode -q | lines >"$tmp/ours"
	cmp -s "$tmp/ref" "$tmp/ours" || fail "$n: differs from the installed trc_pkt_lister"
	echo "$n: equal to the installed trc_pkt_lister ($(wc -l <"$tmp/ref") lines)"
done

# STM: juno's second buffer (--buffer ETB_1, the STM source).  OpenCSD's
# STM packet processor fails on the buffer's last (empty) block: there
# trc_pkt_lister stops, and so do we (nothing is left to resync on): the
# same lines, no reset and no end of trace after the error.
"$cli" decode --snapshot "$snaps/juno_r1_1" --buffer ETB_1 --decode >"$tmp/out" 2>"$tmp/err" || fail "stm: exit $?: $(cat "$tmp/err")"
lines "$tmp/out" >"$tmp/ours"
[ "$(grep -c 'OCSD_GEN_TRC_ELEM_SWTRACE' "$tmp/ours")" -ge 30 ] || fail "stm: too few software trace elements"
grep -q 'D32M:32 bit data + marker; Data=0xbaadf00d$' "$tmp/ours" || fail "stm: the 0xbaadf00d marker is missing"
grep -q 'trace data error at index 1984' "$tmp/err" || fail "stm: the error at the end is not reported"
(cd "$tmp" && trc_pkt_lister -ss_dir "$snaps/juno_r1_1" -src_name ETB_1 -decode -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
cmp -s "$tmp/ref" "$tmp/ours" || fail "stm: differs from trc_pkt_lister"
echo "stm (--buffer ETB_1): $(grep -c '^Idx' "$tmp/ours") lines, as trc_pkt_lister up to its fatal end"

# Raw (unformatted, TRBE-like) trace: the ID 0x10 stream taken out of the
# a57 frames (the bytes of its packets), as a "source_data" buffer.  Its
# elements are those of the framed decode; with trc_pkt_lister, the lines
# are equal.
cp -r "$snaps/a57_single_step" "$tmp/raw" && chmod -R u+w "$tmp/raw"
hex=$("$cli" decode --snapshot "$snaps/a57_single_step" --decode -q |
	sed -n 's/^Idx:[0-9]*; ID:10; \[\(.*\) \];.*/\1/p' | tr ' ' '\n' | sed 's/^0x/\\x/' | tr -d '\n')
printf "$hex" >"$tmp/raw/raw.bin"
[ "$(stat -c %s "$tmp/raw/raw.bin")" -gt 50 ] || fail "raw: could not extract the ID 0x10 stream"
sed -i 's/^file=CSTMC_TRACE_FIFO.bin/file=raw.bin/; s/^format=coresight/format=source_data/' "$tmp/raw/trace.ini"
"$cli" decode --snapshot "$tmp/raw" --decode >"$tmp/out" 2>"$tmp/err" || fail "raw: exit $?: $(cat "$tmp/err")"
el() { grep -o 'OCSD_GEN_TRC_ELEM_.*' "$@"; }
el "$tmp/out" >"$tmp/raw_el"
zcat "$golden/a57_single_step.decode.ppl.gz" | el >"$tmp/frm_el"
cmp -s "$tmp/frm_el" "$tmp/raw_el" || fail "raw: elements differ from the framed decode"
if command -v trc_pkt_lister >/dev/null; then
	(cd "$tmp" && trc_pkt_lister -ss_dir "$tmp/raw" -decode -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
	lines "$tmp/out" | cmp -s "$tmp/ref" - || fail "raw: differs from trc_pkt_lister"
fi
echo "raw trace: $(wc -l <"$tmp/raw_el") elements as from the frames"
# The raw stream recorded into a perf.data, its PERF_RECORD_AUX flagged
# CORESIGHT_FORMAT_RAW (0x100) as TRBE drivers do: dump --aux decodes it
# unformatted (the packets of the raw snapshot, then the padding byte).
"$cli" record -q --replay-cs "$tmp/raw" -o "$tmp/raw.data" >/dev/null 2>&1 || fail "record --replay-cs of the raw snapshot"
off=$("$cli" dump -i "$tmp/raw.data" 2>/dev/null | awk '/PERF_RECORD_AUX offset/ { print $3; exit }')
[ -n "$off" ] || fail "raw: no PERF_RECORD_AUX in the recording"
python3 - "$tmp/raw.data" "$off" <<'PY' || fail "flagging the AUX record CORESIGHT_FORMAT_RAW"
import struct, sys
p, off = sys.argv[1], int(sys.argv[2], 16)
d = bytearray(open(p, 'rb').read())
assert struct.unpack_from('<I', d, off)[0] == 11  # PERF_RECORD_AUX
struct.pack_into('<Q', d, off + 24, struct.unpack_from('<Q', d, off + 24)[0] | 0x100)
open(p, 'wb').write(d)
PY
"$cli" dump --aux -i "$tmp/raw.data" >"$tmp/out" 2>"$tmp/err" || fail "dump --aux of raw AUX data: $(cat "$tmp/err")"
grep -q 'CoreSight raw trace data' "$tmp/out" || fail "raw AUX data not decoded as raw"
"$cli" decode --snapshot "$tmp/raw" -q | grep '^Idx' >"$tmp/ref"
grep '^Idx' "$tmp/out" | head -n "$(wc -l <"$tmp/ref")" | cmp -s "$tmp/ref" - || fail "raw AUX data: packets differ from the raw snapshot's"
echo "raw AUX data (FORMAT_RAW flag): packets as the raw snapshot's"

# ETE decoder (the a57 source declared as ETE: its ETMv4 trace decodes the
# same); OpenCSD's C API has no ETE packet callback, its printer is used.
cp -r "$snaps/a57_single_step" "$tmp/ete" && chmod -R u+w "$tmp/ete"
sed -i 's/^type=ETM4.1/type=ETE/' "$tmp/ete/device2.ini"
"$cli" decode --snapshot "$tmp/ete" --decode >"$tmp/out" 2>"$tmp/err" || fail "ete: exit $?: $(cat "$tmp/err")"
el "$tmp/out" >"$tmp/ete_el"
cmp -s "$tmp/frm_el" "$tmp/ete_el" || fail "ete: elements differ from the ETMv4 decode"
[ "$(grep -c '^Idx:[0-9]*; ID:10; \[' "$tmp/out")" = 9 ] || fail "ete: the 9 packets are not listed"
if command -v trc_pkt_lister >/dev/null; then
	(cd "$tmp" && trc_pkt_lister -ss_dir "$tmp/ete" -decode -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
	lines "$tmp/out" | cmp -s "$tmp/ref" - || fail "ete: differs from trc_pkt_lister"
fi
echo "ete: packets and elements listed"

# Damaged trace data: decoding goes on (resync), exit 0, every ID reaches
# its end of trace, and after the damage the lines are those of the
# undamaged trace (at least 90% of them: the damaged stretch can hide a
# sync point).  The garbage is fixed (seeded), the test deterministic.
cp -r "$snaps/juno_r1_1" "$tmp/bad" && chmod -R u+w "$tmp/bad"
awk 'BEGIN { srand(7); for (i = 0; i < 300; i++) printf "%c", int(rand() * 256) }' LC_ALL=C </dev/null >"$tmp/garbage"
[ "$(stat -c %s "$tmp/garbage")" = 300 ] || fail "garbage generator"
dd if="$tmp/garbage" of="$tmp/bad/cstrace.bin" bs=1 seek=40000 conv=notrunc status=none
head -c 64 /dev/zero | tr '\0' '\377' | dd of="$tmp/bad/cstrace.bin" bs=1 seek=20000 conv=notrunc status=none
"$cli" decode --snapshot "$tmp/bad" --decode >"$tmp/out" 2>"$tmp/err" ||
	fail "damaged trace: exit $?: $(cat "$tmp/err")"
after() { awk -F'[:;]' '$1 == "Idx" && $2 > 41000' | sort; }
lines "$tmp/out" | after >"$tmp/after_bad"
zcat "$golden/juno_r1_1.decode.ppl.gz" | lines | after >"$tmp/after_good"
good=$(wc -l <"$tmp/after_good")
same=$(comm -12 "$tmp/after_good" "$tmp/after_bad" | wc -l)
[ "$good" -gt 1000 ] || fail "too few golden lines past the damage"
[ $((same * 10)) -ge $((good * 9)) ] || fail "damaged trace: only $same of $good lines past the damage as undamaged"
for id in 10 11 12 13 14 15; do
	grep -q "ID:$id; OCSD_GEN_TRC_ELEM_EO_TRACE" "$tmp/out" || fail "damaged trace: ID $id never reached its end"
done
grep -q 'trace bytes' "$tmp/err" || fail "damaged trace: no summary"
echo "damaged trace: resynced; $same of $good lines past the damage as undamaged"

# Damaged metadata: clear errors naming the file, non-zero exit.
bad_meta() {
	local what=$1 expect=$2
	"$cli" decode --snapshot "$tmp/m" >"$tmp/out" 2>"$tmp/err" && fail "$what: exit 0"
	[ $? -lt 128 ] || fail "$what: crashed"
	grep -q "$expect" "$tmp/err" || fail "$what: message lacks '$expect': $(cat "$tmp/err")"
	echo "$what: refused: $(grep -m1 error "$tmp/err")"
}
fresh() { rm -rf "$tmp/m" && cp -r "$snaps/a57_single_step" "$tmp/m" && chmod -R u+w "$tmp/m"; }
fresh; sed -i 's/^TRCIDR0(id:0x78)=.*/TRCIDR0(id:0x78)=0xZZ/' "$tmp/m/device2.ini"
bad_meta "bad register value" "device2.ini:[0-9]*: TRCIDR0"
fresh; sed -i '/^TRCTRACEIDR/d' "$tmp/m/device2.ini"
bad_meta "missing trace ID register" "TRCTRACEIDR missing"
fresh; sed -i 's/^file=CSTMC_TRACE_FIFO.bin/file=..\/..\/etc\/passwd/' "$tmp/m/trace.ini"
bad_meta "file name outside the snapshot" "unsafe file name"
fresh; rm "$tmp/m/CSTMC_TRACE_FIFO.bin"
bad_meta "missing trace buffer file" "CSTMC_TRACE_FIFO.bin"
fresh; printf '[snapshot\nversion=1.0\n' >"$tmp/m/snapshot.ini"
bad_meta "broken section line" "snapshot.ini:1"
fresh; sed -i 's/^type=Cortex-A57/type=Mystery-Core/' "$tmp/m/device1.ini"
bad_meta "unknown core type" "Mystery-Core"
fresh; sed -i 's/^address=.*/address=0xFFFFFFFFFFFFFFF0/' "$tmp/m/device1.ini"
"$cli" decode --snapshot "$tmp/m" --decode >"$tmp/out" 2>"$tmp/err" || fail "dump past the address space: exit $?"
grep -q 'does not fit' "$tmp/err" || fail "dump past the address space: not reported"
echo "dump past the address space: reported, decoded without it"

# A real perf.data with cs_etm AUX trace (simpleperf, ETMv4 over ETR,
# AUXTRACE_INFO version 1) and the binary it ran.
etm=$data/simpleperf-etm
"$cli" dump --aux -i "$etm/perf_etm.data" >"$tmp/aux" 2>"$tmp/err" || fail "dump --aux: exit $?: $(cat "$tmp/err")"
grep -q '^Idx:0; ID:1e;.I_ASYNC' "$tmp/aux" || fail "dump --aux: no I_ASYNC of trace ID 0x1e first"
[ "$(grep -c '^Idx:' "$tmp/aux")" -ge 25 ] || fail "dump --aux: too few packets"
grep -q ' 0 resyncs, 0 errors' "$tmp/err" || fail "dump --aux: errors: $(cat "$tmp/err")"
"$cli" dump --aux --decode -i "$etm/perf_etm.data" --symdir "$etm" >"$tmp/auxd" 2>"$tmp/err" || fail "dump --aux --decode: exit $?"
grep -q 'OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x582b2b1000:\[0x582b2b1008\]' "$tmp/auxd" ||
	fail "dump --aux --decode: the first range of etm_test_loop is missing"
echo "dump --aux: $(grep -c '^Idx:' "$tmp/aux") packet lines, $(grep -c INSTR_RANGE "$tmp/auxd") ranges decoded"

# The same trace as an OpenCSD snapshot built from the metadata lines of
# dump --aux (registers per CPU), the AUXTRACE payload (cut out of the file
# with dd) and the binary at its mapped address: trc_pkt_lister -decode on
# it gives the lines dump --aux --decode gives on the perf.data.
gen=$tmp/gen
mkdir -p "$gen"
awk -v dir="$gen" '
/^# cpu / {
	cpu = $3; n++
	dev = dir "/device_" cpu ".ini"; core = dir "/cpu_" cpu ".ini"
	print "[device]\nname=ETM_" cpu "\nclass=trace_source\ntype=ETM4\n\n[regs]" > dev
	for (i = 8; i <= NF; i++) print $i > dev
	print "[device]\nname=cpu_" cpu "\nclass=core\ntype=Cortex-A53\n\n[dump1]\nfile=etm_test_loop\naddress=0x582b2b0000" > core
	devs = devs "device" (2 * n) "=cpu_" cpu ".ini\ndevice" (2 * n + 1) "=device_" cpu ".ini\n"
	srcs = srcs "ETM_" cpu "=ETR\n"; cores = cores "cpu_" cpu "=ETM_" cpu "\n"
}
END {
	print "[snapshot]\nversion=1.0\n\n[device_list]\n" devs "\n[trace]\nmetadata=trace.ini" > (dir "/snapshot.ini")
	print "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETR\nfile=aux.bin\nformat=coresight\n\n[source_buffers]\n" srcs "\n[core_trace_sources]\n" cores > (dir "/trace.ini")
}' "$tmp/aux"
[ -s "$gen/device_7.ini" ] || fail "dump --aux: no metadata line for CPU 7"
hdr=$(grep -m1 '^\. \.\.\. CoreSight formatted trace data' "$tmp/aux")
size=$(echo "$hdr" | sed 's/.*size \(0x[0-9a-f]*\).*/\1/')
foff=$(echo "$hdr" | sed 's/.*file offset \(0x[0-9a-f]*\)).*/\1/')
dd if="$etm/perf_etm.data" of="$gen/aux.bin" bs=1 skip=$((foff + 48)) count=$((size)) status=none
cp "$etm/etm_test_loop" "$gen/"
lines "$tmp/auxd" >"$tmp/ours"
if command -v trc_pkt_lister >/dev/null; then
	(cd "$tmp" && trc_pkt_lister -ss_dir "$gen" -decode -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
	who="trc_pkt_lister"
else
	"$cli" decode --snapshot "$gen" --decode -q | lines >"$tmp/ref"
	who="decode --snapshot"
fi
if ! cmp -s "$tmp/ref" "$tmp/ours"; then
	diff "$tmp/ref" "$tmp/ours" | head >&2
	fail "dump --aux --decode differs from $who on the same trace as a snapshot"
fi
echo "dump --aux --decode: $(wc -l <"$tmp/ours") lines equal to $who on the trace as a snapshot"

# AutoFDO counts: exactly simpleperf's perf_inject.data.
"$cli" inject -i "$etm/perf_etm.data" --symdir "$etm" -o "$tmp/inject" 2>"$tmp/err" || fail "inject: exit $?: $(cat "$tmp/err")"
if ! cmp -s "$etm/perf_inject.data" "$tmp/inject"; then
	diff "$etm/perf_inject.data" "$tmp/inject" | head >&2
	fail "inject: counts differ from simpleperf's perf_inject.data"
fi
echo "inject: branch and range counts equal to simpleperf's"
# Without the binary the code is unknown: said so, and nothing decoded
# (an empty file) is a warning and exit 1, not a silent success.
"$cli" inject -i "$etm/perf_etm.data" --symdir "$tmp/m" -o "$tmp/inject2" 2>"$tmp/err" &&
	fail "inject without the binary: exit 0 with nothing decoded"
grep -q 'etm_test_loop not found' "$tmp/err" || fail "inject without the binary: not reported"
grep -q 'warning: .*perf_etm.data: no instruction was decoded from 384 trace bytes: the traced code is not there; give the binaries with --symdir' "$tmp/err" ||
	fail "inject without the binary: the empty result is not explained: $(cat "$tmp/err")"
# A binary with another build-id is refused.
mkdir -p "$tmp/wrong" && cp /bin/true "$tmp/wrong/etm_test_loop"
"$cli" inject -i "$etm/perf_etm.data" --symdir "$tmp/wrong" -o "$tmp/inject3" 2>"$tmp/err" &&
	fail "inject with a wrong binary: exit 0 with nothing decoded"
grep -q 'etm_test_loop not found' "$tmp/err" || fail "inject with a wrong binary: not refused"
grep -q 'no instruction was decoded' "$tmp/err" || fail "inject with a wrong binary: the empty result is not said"
cmp -s "$etm/perf_inject.data" "$tmp/inject3" && fail "inject with a wrong binary: counts still equal"
echo "inject: a missing or mismatched binary is reported, nothing decoded is exit 1"
# script and report --itrace alike: nothing decoded, a warning and exit 1.
for c in script report; do
	"$cli" $c --itrace -i "$etm/perf_etm.data" --symdir "$tmp/m" >/dev/null 2>"$tmp/err" &&
		fail "$c --itrace without the binary: exit 0 with nothing decoded"
	grep -q 'no instruction was decoded' "$tmp/err" || fail "$c --itrace without the binary: $(cat "$tmp/err")"
done
echo "script/report --itrace: nothing decoded is a warning and exit 1"
# Found by build-id: the id as the file name, or perf's .build-id/ layout.
mkdir -p "$tmp/bid/.build-id/0c"
cp "$etm/etm_test_loop" "$tmp/bid/.build-id/0c/9a20bf9c009d0e4e8bbf9fad0300ae"
"$cli" inject -i "$etm/perf_etm.data" --symdir "$tmp/bid" -o "$tmp/inject4" 2>"$tmp/err" || fail "inject by build-id: exit $?"
cmp -s "$etm/perf_inject.data" "$tmp/inject4" || fail "inject: the binary named by its build-id was not used"
mkdir -p "$tmp/bid2" && cp "$etm/etm_test_loop" "$tmp/bid2/0c9a20bf9c009d0e4e8bbf9fad0300ae"
"$cli" inject -i "$etm/perf_etm.data" --symdir "$tmp/bid2" -o - >"$tmp/inject5" 2>"$tmp/err" || fail "inject by build-id: exit $?"
cmp -s "$etm/perf_inject.data" "$tmp/inject5" || fail "inject: the binary named by its build-id was not used"
echo "inject: binaries found by build-id"

# A later mapping of another process at the same addresses (the linker's
# MMAP2 rewritten as pid 9999 over etm_test_loop's text) must not hide the
# traced process's code: maps are chosen by the trace's context ID (pid).
python3 - "$etm/perf_etm.data" "$tmp/otherpid.data" <<'PY' || fail "rewriting the linker's MMAP2 as pid 9999"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
assert struct.unpack_from('<I', d, 0x938)[0] == 10  # PERF_RECORD_MMAP2
struct.pack_into('<IIQQQ', d, 0x938 + 8, 9999, 9999, 0x582b2b1000, 0x1000, 0)
open(sys.argv[2], 'wb').write(d)
PY
"$cli" inject -q -i "$tmp/otherpid.data" --symdir "$etm" -o "$tmp/inject7" || fail "inject (other pid): exit $?"
cmp -s "$etm/perf_inject.data" "$tmp/inject7" || fail "inject: another process's mapping hid the traced code"
echo "inject: maps chosen by the traced pid (context ID)"

# script --itrace: a line per range (as many as decoded), disassembled.
"$cli" script --itrace -i "$etm/perf_etm.data" --symdir "$etm" >"$tmp/script" 2>"$tmp/err" || fail "script --itrace: exit $?"
ranges=$(grep -c INSTR_RANGE "$tmp/auxd")
[ "$(grep -c '^FILE: /data/local/tmp/etm_test_loop CPU: 7 ' "$tmp/script")" = "$ranges" ] ||
	fail "script --itrace: not one line per range ($ranges)"
grep -q '582b2b1050:   94000024        bl	#0x582b2b10e0' "$tmp/script" || fail "script --itrace: disassembly missing"
echo "script --itrace: $ranges ranges with their instructions"
"$cli" report --itrace -i "$etm/perf_etm.data" --symdir "$etm" >"$tmp/report" 2>"$tmp/err" || fail "report --itrace: exit $?"
head -6 "$tmp/report" | grep -q '500       100  etm_test_loop' || fail "report --itrace: the hot loop is not first: $(head -7 "$tmp/report")"
echo "report --itrace: hot spot first: $(sed -n 6p "$tmp/report")"

# Round trip: real trace replayed through our AUX areas and recorded
# (record --replay-cs), then decoded: the juno packets are the golden
# listing, and the simpleperf recording gives simpleperf's AutoFDO counts.
"$cli" record -q --replay-cs "$snaps/juno_r1_1" -o "$tmp/rt.data" >/dev/null 2>"$tmp/err" || fail "record --replay-cs juno: $(cat "$tmp/err")"
"$cli" dump --aux -i "$tmp/rt.data" -q | lines >"$tmp/ours" || fail "dump --aux of the replayed juno"
zcat "$golden/juno_r1_1.pkts.ppl.gz" | lines | cmp -s - "$tmp/ours" || fail "round trip: juno packets differ from the golden listing"
"$cli" record -q --replay-cs "$etm/perf_etm.data" -o "$tmp/rt2.data" >/dev/null 2>"$tmp/err" || fail "record --replay-cs perf_etm.data: $(cat "$tmp/err")"
"$cli" inject -q -i "$tmp/rt2.data" --symdir "$etm" -o "$tmp/inject6" || fail "inject of the replayed perf_etm.data"
cmp -s "$etm/perf_inject.data" "$tmp/inject6" || fail "round trip: inject differs from perf_inject.data"
echo "round trip (replay, record, decode): juno packets golden, AutoFDO counts as simpleperf's"

# Snapshot mode: a small free-running AUX area, three SIGUSR2 snapshots and
# one at exit.  Each snapshot decodes cleanly after its first sync (one
# NO_SYNC each, no resync, no error) and its instruction ranges are a
# contiguous run of the full decode (the replay loops perf_etm.data's trace).
# Each signal is sent once the recorder has its handler and the previous
# snapshot is in the file (signals pending together would make one).
"$cli" record -q --replay-cs "$etm/perf_etm.data" --loops 100000 --rate 4M -m ,64K \
	--snapshot=e4K -o "$tmp/snap.data" 2>"$tmp/err" &
pid=$!
wait_until "$WAIT_S" catches $pid USR2 || fail "record --snapshot: no SIGUSR2 handler after ${WAIT_S}s: $(cat "$tmp/err")"
wait_until "$WAIT_S" test -s "$tmp/snap.data" || fail "record --snapshot: no file after ${WAIT_S}s: $(cat "$tmp/err")"
size=$(file_size "$tmp/snap.data")
for i in 1 2 3; do
	# Part of the test: the replay (4 MB/s) refills the 4 KiB it
	# snapshots in 1 ms; 200 ms leaves a loaded machine 200 times that.
	sleep 0.2
	kill -USR2 $pid
	wait_until "$WAIT_S" grown "$tmp/snap.data" $((size + 4096)) ||
		fail "snapshot $i not in the file after ${WAIT_S}s: $(cat "$tmp/err")"
	size=$(file_size "$tmp/snap.data")
done
sleep 0.2
kill -INT $pid
wait $pid || fail "record --snapshot: exit $?: $(cat "$tmp/err")"
"$cli" script --itrace --no-disasm -i "$etm/perf_etm.data" --symdir "$etm" -q >"$tmp/full.txt" || fail "script --itrace (full)"
"$cli" script --itrace --no-disasm -i "$tmp/snap.data" --symdir "$etm" >"$tmp/snaps.txt" 2>"$tmp/err" || fail "script --itrace (snapshots): $(cat "$tmp/err")"
nsnap=$(grep -c '^# AUXTRACE chunk' "$tmp/snaps.txt")
[ "$nsnap" = 4 ] || fail "snapshots: $nsnap in the file (4 taken)"
grep -q " $nsnap no-sync, 0 resyncs, 0 errors" "$tmp/err" || fail "snapshots: not clean after the first sync: $(cat "$tmp/err")"
python3 - "$tmp/full.txt" "$tmp/snaps.txt" "$nsnap" <<'PY' || fail "snapshots: ranges are not runs of the full decode"
import re, sys
def chunks(path):
    out = []
    for l in open(path):
        if l.startswith('# AUXTRACE chunk'):
            out.append([])
        elif l.startswith('FILE: '):
            out[-1].append(re.search(r' range (\S+)-(\S+) insns (\d+)', l).groups())
    return out
full, = chunks(sys.argv[1])
snaps = chunks(sys.argv[2])
assert len(snaps) == int(sys.argv[3]), "%d snapshots" % len(snaps)
for i, s in enumerate(snaps):
    assert len(s) >= len(full), "snapshot %d: %d ranges" % (i, len(s))
    rep = full * (len(s) // len(full) + 2)
    assert any(rep[k:k + len(s)] == s for k in range(len(full))), "snapshot %d" % i
print("snapshots: %s ranges, each a contiguous run of the full decode" % [len(s) for s in snaps])
PY

# Symbols: the same binary with function symbols added (same build-id).
"$cli" report --itrace -i "$etm/perf_etm.data" --symdir "$data/simpleperf-etm-syms" -q >"$tmp/report" ||
	fail "report --itrace with symbols: exit $?"
sed -n 6p "$tmp/report" | grep -q '903       202  etm_test_loop  \[\.\] hot_loop$' ||
	fail "report --itrace: hot_loop is not first: $(sed -n 6,8p "$tmp/report")"
"$cli" script --itrace --no-disasm -i "$etm/perf_etm.data" --symdir "$data/simpleperf-etm-syms" -q |
	grep -q 'range 0x582b2b108c-0x582b2b10a4 insns 6 <other+0x0>$' || fail "script --itrace: no symbol+offset"
"$cli" inject -q -i "$etm/perf_etm.data" --symdir "$data/simpleperf-etm-syms" -o "$tmp/inject8" &&
	cmp -s "$etm/perf_inject.data" "$tmp/inject8" || fail "inject with the symbol-bearing binary differs"
echo "symbols: report and script name hot_loop/other"

# Damaged perf.data: clear error, no crash.
head -c 9000 "$etm/perf_etm.data" >"$tmp/trunc.data"
"$cli" dump --aux -i "$tmp/trunc.data" >/dev/null 2>"$tmp/err" && fail "truncated perf.data: exit 0"
[ $? -lt 128 ] || fail "truncated perf.data: crashed"
echo "truncated perf.data: refused: $(grep -m1 error "$tmp/err")"
exit 0
