#!/usr/bin/env bash
# test-parallel: yes
# CoreSight framings and trace source types, each judged by OpenCSD's own
# trc_pkt_lister (1.3.3, the installed libopencsd-bin) on the same input:
# DSTREAM captures (the a55 snapshot, and one built from juno's frames),
# TPIU streams with frame syncs and with halfword syncs (built from juno's
# frames), PTM and ETMv3 sources, STM, and ITM (which OpenCSD 1.3.3 cannot
# decode: a clear refusal).  Plain frames, raw (unframed) trace and ETE are
# in cs.sh; the plain listings of every snapshot against their goldens in
# cs_goldens.sh.
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

# The listing lines of a trc_pkt_lister log or of ours.  OpenCSD's error
# messages end without a newline: a packet line printed after one is cut
# out of it, so that it is compared too.
lines() { sed -E 's/^[^I].*(Idx:[0-9]+; ID:)/\1/' "$@" | grep -aE '^(Idx:|ID:)'; }
el() { grep -o 'OCSD_GEN_TRC_ELEM_.*' "$@"; }
# ref DIR ARGS...: trc_pkt_lister's lines; ours NAME DIR ARGS...: ours.
ref() {
	local dir=$1
	shift
	(cd "$tmp" && trc_pkt_lister -ss_dir "$dir" "$@" -logstdout -logfilename /dev/null) | lines
}
# (--halt-on-error that stopped at a data error exits 1, saying so:
# trc_pkt_lister -halt_err exits 0; the listing is the same)
ours() {
	local what=$1 dir=$2 rc
	shift 2
	"$cli" decode --snapshot "$dir" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = 1 ] && [[ " $* " == *" --halt-on-error "* ]] &&
		grep -q 'stopped at a data error (--halt-on-error)' "$tmp/err"; then
		rc=0
	fi
	[ $rc = 0 ] || fail "$what: exit $rc: $(cat "$tmp/err")"
	lines "$tmp/out"
}
# same WHAT FILE1 FILE2: equal listings.
same() {
	if ! cmp -s "$2" "$3"; then
		diff "$2" "$3" | head -10 >&2
		fail "$1"
	fi
}
writable() { rm -rf "$tmp/$2" && cp -r "$snaps/$1" "$tmp/$2" && chmod -R u+w "$tmp/$2"; }

# DSTREAM (format=dstream_coresight): 512-byte blocks of TPIU trace with an
# 8-byte footer, read with --framing dstream as trc_pkt_lister
# -dstream_format reads them.  The snapshot has no memory image: the code
# is inaccessible, not an error.
a55=$snaps/a55-test-tpiu
ours a55 "$a55" --decode --framing dstream >"$tmp/ours"
zcat "$golden/a55-test-tpiu.dstream.decode.ppl.gz" | lines >"$tmp/gold"
same "a55 (DSTREAM) differs from trc_pkt_lister -dstream_format's golden" "$tmp/gold" "$tmp/ours"
ref "$a55" -decode -dstream_format >"$tmp/ref"
same "a55 (DSTREAM) differs from the installed trc_pkt_lister -dstream_format" "$tmp/ref" "$tmp/ours"
[ "$(grep -c 'OCSD_GEN_TRC_ELEM_INSTR_RANGE\|ADDR_NACC' "$tmp/ours")" -gt 0 ] || fail "a55: no code reached"
grep -q 'warning: .*cannot read memory dump mem_Cortex-A57_0.bin: .*inaccessible' "$tmp/err" || fail "a55: the missing dump: $(cat "$tmp/err")"
grep -q ' 48384 trace bytes' "$tmp/err" || fail "a55: not 96 blocks of 504 trace bytes: $(cat "$tmp/err")"
grep -q 'Idx:46121; ID:1; OCSD_GEN_TRC_ELEM_EO_TRACE' "$tmp/ours" || fail "a55: the trace does not reach its end"
ours "a55 packets" "$a55" --framing dstream >"$tmp/ours"
ref "$a55" -dstream_format >"$tmp/ref"
same "a55 packets differ from trc_pkt_lister -dstream_format" "$tmp/ref" "$tmp/ours"
echo "dstream: a55 $(wc -l <"$tmp/gold") lines equal to trc_pkt_lister -dstream_format (golden and installed)"
# The golden OpenCSD ships was listed without -dstream_format: its
# footers read as TPIU trace, until the first breaks a frame sync and
# trc_pkt_lister stops.  The default (--framing auto) lists the same
# (cs_goldens.sh), and so does --framing tpiu --halt-on-error.
zcat "$golden/a55-test-tpiu.decode.ppl.gz" | lines >"$tmp/gold"
ref "$a55" -decode >"$tmp/ref"
for f in "--framing tpiu --halt-on-error" "--framing auto" ""; do
	ours "a55 $f" "$a55" --decode $f >"$tmp/ours"
	same "a55 ${f:-(default)} differs from the golden" "$tmp/gold" "$tmp/ours"
	same "a55 ${f:-(default)} differs from trc_pkt_lister" "$tmp/ref" "$tmp/ours"
	grep -q 'trace data error at index 516; decoding stopped' "$tmp/err" || fail "a55 $f: the stop is not reported"
done
# --halt-on-error exits 1 after the error; without it the same listing
# exits 0 (a warning).
"$cli" decode --snapshot "$a55" --decode --framing tpiu --halt-on-error >/dev/null 2>"$tmp/err" &&
	fail "a55 --halt-on-error: exit 0 after a data error"
grep -q 'stopped at a data error (--halt-on-error)' "$tmp/err" || fail "a55 --halt-on-error: $(cat "$tmp/err")"
"$cli" decode --snapshot "$a55" --decode >/dev/null 2>"$tmp/err" || fail "a55 without --halt-on-error: exit $?"
"$cli" decode --snapshot "$snaps/juno_r1_1" --halt-on-error >/dev/null 2>"$tmp/err" ||
	fail "juno_r1_1 --halt-on-error (no data error): exit $?: $(cat "$tmp/err")"
echo "--halt-on-error: exit 1 after a data error, 0 without one"
# Without halting, decoding resyncs past each footer and goes on.
ours "a55 as TPIU" "$a55" --decode --framing tpiu >"$tmp/ours"
[ "$(wc -l <"$tmp/ours")" -gt $((2 * $(wc -l <"$tmp/gold"))) ] || fail "a55 as TPIU: no resync past the footer"
echo "dstream: a55 golden (read as TPIU, halting at the first footer) equal: $(wc -l <"$tmp/gold") lines"

# TPIU streams built from juno's frames (16-byte frames, 6 ETMv4 sources):
# an FSYNC before every 4th frame; and as well an HSYNC halfword in the
# middle of every 3rd frame.  A DSTREAM capture: the FSYNC stream in
# blocks of 504 bytes, each followed by an 8-byte footer.
for v in tpiu tpiu-hsync dstream; do writable juno_r1_1 $v; done
python3 - "$snaps/juno_r1_1/cstrace.bin" "$tmp" <<'PY' || fail "building the TPIU streams"
import sys
d = open(sys.argv[1], 'rb').read()
fsync, hsync = b'\xff\xff\xff\x7f', b'\xff\x7f'
fs, hs = bytearray(), bytearray()
for n, i in enumerate(range(0, len(d) - len(d) % 16, 16)):
    frame = d[i:i + 16]
    if n % 4 == 0:
        fs += fsync
        hs += fsync
    fs += frame
    hs += frame[:8] + hsync + frame[8:] if n % 3 == 1 else frame
ds = bytearray()
for n, i in enumerate(range(0, len(fs), 504)):
    ds += fs[i:i + 504].ljust(504, b'\0') if i + 504 <= len(fs) else fs[i:]
    ds += bytes([0, 0, 0, 0, 0x7e, n & 0xff, 0xfe, 0x0f])
for name, b in (('tpiu', fs), ('tpiu-hsync', hs), ('dstream', ds)):
    open(sys.argv[2] + '/' + name + '/cstrace.bin', 'wb').write(b)
PY
sed -i 's/^format=coresight/format=dstream_coresight/' "$tmp/dstream/trace.ini"
"$cli" decode --snapshot "$snaps/juno_r1_1" --decode -q | el >"$tmp/frames_el"
[ "$(wc -l <"$tmp/frames_el")" -gt 10000 ] || fail "juno: too few elements"
for v in "tpiu --framing=tpiu -tpiu" "tpiu-hsync --framing=tpiu-hsync -tpiu_hsync" "dstream --framing=dstream -dstream_format"; do
	set -- $v
	ours "$1" "$tmp/$1" --decode "$2" >"$tmp/ours"
	ref "$tmp/$1" -decode "$3" >"$tmp/ref"
	same "$1: differs from trc_pkt_lister $3" "$tmp/ref" "$tmp/ours"
	el "$tmp/ours" | cmp -s "$tmp/frames_el" - || fail "$1: elements differ from those of the frames"
	grep -q ' 0 resyncs, 0 errors' "$tmp/err" || fail "$1: errors: $(cat "$tmp/err")"
	ours "$1 packets" "$tmp/$1" "$2" >"$tmp/ours"
	ref "$tmp/$1" "$3" >"$tmp/ref"
	same "$1 packets: differ from trc_pkt_lister $3" "$tmp/ref" "$tmp/ours"
	echo "$1: $(wc -l <"$tmp/ref") packet lines as trc_pkt_lister $3; elements as the frames'"
done
# The syncs matter: HSYNCs read as trace, or footers, break the decode.
"$cli" decode --snapshot "$tmp/tpiu-hsync" --decode --framing tpiu -q 2>/dev/null | el | cmp -s "$tmp/frames_el" - &&
	fail "tpiu-hsync read without HSYNCs: elements still as the frames'"
"$cli" decode --snapshot "$tmp/dstream" --decode --framing tpiu -q 2>/dev/null | el | cmp -s "$tmp/frames_el" - &&
	fail "dstream read with its footers: elements still as the frames'"
echo "tpiu, dstream: the wrong framing does not decode"
# The DSTREAM capture by default: as trc_pkt_lister without
# -dstream_format (TPIU frames), stopping where the first footer breaks it.
ours "dstream (default)" "$tmp/dstream" --decode >"$tmp/ours"
ref "$tmp/dstream" -decode >"$tmp/ref"
same "dstream (default) differs from trc_pkt_lister" "$tmp/ref" "$tmp/ours"
grep -q 'format dstream_coresight read as trc_pkt_lister 1.3.3 reads it' "$tmp/err" || fail "dstream (default): not said"
[ "$(wc -l <"$tmp/ours")" -lt "$(wc -l <"$tmp/frames_el")" ] || fail "dstream (default): not stopped at the first footer"
echo "dstream (default): $(wc -l <"$tmp/ref") lines as trc_pkt_lister without -dstream_format"

# Source types.  PTM: the Snowball snapshot (Cortex-A9, two PTMs; its
# kernel image left out: code inaccessible).  ETMv3: the same registers
# declared ETM3 (OpenCSD's ETMv3 decoder on PTM trace: the listing is what
# the decoder makes of it, up to the data error where trc_pkt_lister
# stops: --halt-on-error).
writable Snowball-nodump etm3
sed -i 's/^type=PTM1.0/type=ETM3.3/' "$tmp/etm3/device_2.ini" "$tmp/etm3/device_3.ini"
for v in "ptm $snaps/Snowball-nodump" "etm3 $tmp/etm3 --halt-on-error"; do
	set -- $v
	for m in "" --decode; do
		ours "$1 $m" "$2" $m ${3:-} >"$tmp/ours"
		ref "$2" ${m:+-decode} >"$tmp/ref"
		[ "$(wc -l <"$tmp/ref")" -gt 100 ] || fail "$1: trc_pkt_lister lists too little"
		same "$1 $m: differs from trc_pkt_lister" "$tmp/ref" "$tmp/ours"
	done
	echo "$1: $(wc -l <"$tmp/ref") lines as trc_pkt_lister"
done
# STM: the stm_only-juno snapshot; its trace ends in a data error, where
# OpenCSD stops: no reset and no end of trace after it.
ours stm "$snaps/stm_only-juno" --decode >"$tmp/ours"
zcat "$golden/stm_only-juno.decode.ppl.gz" | lines >"$tmp/gold"
same "stm_only-juno differs from the golden" "$tmp/gold" "$tmp/ours"
ref "$snaps/stm_only-juno" -decode >"$tmp/ref"
same "stm_only-juno differs from trc_pkt_lister" "$tmp/ref" "$tmp/ours"
grep -q 'trace data error at index 1984' "$tmp/err" || fail "stm: the error at the end is not reported"
echo "stm: stm_only-juno $(wc -l <"$tmp/gold") lines equal to the golden and trc_pkt_lister"
# ITM: OpenCSD 1.3.3 has no ITM decoder (trc_pkt_lister fails to create
# one and lists nothing): refused with a message, not a crash.
writable stm_only-juno itm
sed -i 's/^type=STM/type=ITM/; s/^STMTCSR/ITMTCR/' "$tmp/itm/device_0.ini"
(cd "$tmp" && trc_pkt_lister -ss_dir "$tmp/itm" -decode -logstdout -logfilename /dev/null) >"$tmp/ref"
grep -q 'Failed to create decoder for none core source STM_0' "$tmp/ref" || fail "itm: trc_pkt_lister decodes ITM now: $(cat "$tmp/ref")"
[ "$(lines "$tmp/ref" | wc -l)" = 0 ] || fail "itm: trc_pkt_lister lists ITM trace"
"$cli" decode --snapshot "$tmp/itm" --decode >"$tmp/out" 2>"$tmp/err" && fail "itm: exit 0"
[ $? -lt 128 ] || fail "itm: crashed"
grep -q 'ITM trace source STM_0 is not decoded: OpenCSD 1.3.3 has no ITM decoder' "$tmp/err" || fail "itm: message: $(cat "$tmp/err")"
echo "itm: refused: $(head -1 "$tmp/err")"

# Option errors.
"$cli" decode --snapshot "$a55" --framing bogus >/dev/null 2>"$tmp/err" && fail "--framing bogus: exit 0"
grep -q 'unknown framing' "$tmp/err" || fail "--framing bogus: $(cat "$tmp/err")"
"$cli" dump --aux -i "$data/simpleperf-etm/perf_etm.data" --framing tpiu >/dev/null 2>"$tmp/err" && fail "dump --aux --framing: exit 0"
grep -q 'go with decode --snapshot' "$tmp/err" || fail "dump --aux --framing: $(cat "$tmp/err")"
echo "options: an unknown framing, or framing without a snapshot, refused"
