#!/usr/bin/env bash
# test-parallel: yes
# Every OpenCSD test snapshot under test/data/opencsd/snapshots that has a
# golden listing (OpenCSD 1.3.3's trc_pkt_lister -ss_dir DIR [-decode],
# golden-1.3.3/NAME.{decode,pkts}.ppl.gz): the plain perfring decode
# --snapshot DIR [--decode], with no other option, prints on stdout exactly
# the golden's listing, and the installed trc_pkt_lister's when there is
# one; the ASan+UBSan CLI prints the same.  With trc_pkt_lister installed,
# every snapshot there is also listed in the three ways (packets, --decode,
# --elements as -decode_only) and compared with it.
#
# What is compared: our whole stdout against the listing lines of the
# golden ("Idx:" packet and element lines, "ID:" end-of-trace lines).  The
# rest of trc_pkt_lister's log (banner, command line, snapshot paths,
# memory accessors, library error messages) is its own: perfring reports
# errors on stderr.  OpenCSD ends an error message without a newline, so a
# listing line printed after one is cut out of it and compared too.
# test-timeout: 300
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
asan=${PERFRING_ASAN_CLI:-}
data=${CS_DATA:-test/data}
make_tmp
cli=$(realpath "$cli")
[ -n "$asan" ] && asan=$(realpath "$asan")
data=$(realpath "$data")
snaps=$data/opencsd/snapshots
golden=$data/opencsd/golden-1.3.3
lister=$(command -v trc_pkt_lister || true)
[ -n "$lister" ] || echo "note: trc_pkt_lister is not installed: compared with the goldens only"

lines() { sed -E 's/^[^I].*(Idx:[0-9]+; ID:)/\1/' "$@" | grep -aE '^(Idx:|ID:)'; }
differs() {
	diff "$2" "$3" | head -10 >&2
	fail "$1"
}

# The set is fixed: a snapshot or golden gone missing fails the test.
all="Snowball a55-test-tpiu a57_single_step juno_r1_1 stm-issue-27 stm_only stm_only-juno test-file-mem-offsets"
for n in $all; do
	[ -d "$snaps/$n" ] || fail "snapshot $n missing under $snaps"
	[ -s "$golden/$n.decode.ppl.gz" ] || fail "golden $n.decode.ppl.gz missing"
done
checked=0
for g in "$golden"/*.ppl.gz; do
	base=$(basename "$g" .ppl.gz)
	n=${base%.*}
	mode=${base##*.}
	# Goldens of other listings (a55-test-tpiu.dstream: -dstream_format)
	# are cs_framing.sh's.
	[ -d "$snaps/$n" ] || continue
	case $mode in
	decode) ours_opt=--decode lister_opt=-decode ;;
	pkts) ours_opt= lister_opt= ;;
	*) fail "$g: unknown listing '$mode'" ;;
	esac
	zcat "$g" | lines >"$tmp/gold"
	[ -s "$tmp/gold" ] || fail "$base: empty golden listing"
	# The golden is trc_pkt_lister's plain listing of the snapshot.
	zcat "$g" | grep -aq "^trc_pkt_lister   -ss_dir  [^ ]*/$n  ${lister_opt:+$lister_opt  }\(-logfilename .*\)\?$" ||
		fail "$base: not listed by plain trc_pkt_lister -ss_dir DIR $lister_opt"
	"$cli" decode --snapshot "$snaps/$n" $ours_opt >"$tmp/ours" 2>"$tmp/err" ||
		fail "$base: exit $?: $(cat "$tmp/err")"
	cmp -s "$tmp/gold" "$tmp/ours" || differs "$base: differs from trc_pkt_lister 1.3.3's golden" "$tmp/gold" "$tmp/ours"
	what="golden"
	if [ -n "$lister" ]; then
		(cd "$tmp" && "$lister" -ss_dir "$snaps/$n" $lister_opt -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
		cmp -s "$tmp/ref" "$tmp/ours" || differs "$base: differs from the installed trc_pkt_lister" "$tmp/ref" "$tmp/ours"
		what="golden and installed trc_pkt_lister"
	fi
	if [ -n "$asan" ]; then
		"$asan" decode --snapshot "$snaps/$n" $ours_opt >"$tmp/asan" 2>"$tmp/err" ||
			fail "$base (ASan CLI): exit $?: $(tail -20 "$tmp/err")"
		cmp -s "$tmp/ours" "$tmp/asan" || fail "$base: the ASan CLI lists otherwise"
		what="$what; ASan CLI too"
	fi
	checked=$((checked + 1))
	echo "$n ${ours_opt:---pkts}: $(wc -l <"$tmp/ours") lines equal ($what)"
done
[ "$checked" -ge 10 ] || fail "only $checked golden listings checked"

# Every snapshot in every listing (packets, packets and elements, elements
# only) against the installed trc_pkt_lister, goldens or not.
if [ -n "$lister" ]; then
	for d in "$snaps"/*/; do
		n=$(basename "$d")
		for m in "--pkts|" "--decode|-decode" "--elements|-decode_only"; do
			"$cli" decode --snapshot "$d" "${m%|*}" >"$tmp/ours" 2>"$tmp/err" ||
				fail "$n ${m%|*}: exit $?: $(cat "$tmp/err")"
			(cd "$tmp" && "$lister" -ss_dir "$d" ${m#*|} -logstdout -logfilename /dev/null) | lines >"$tmp/ref"
			[ -s "$tmp/ref" ] || fail "$n ${m%|*}: trc_pkt_lister lists nothing"
			cmp -s "$tmp/ref" "$tmp/ours" || differs "$n ${m%|*}: differs from the installed trc_pkt_lister" "$tmp/ref" "$tmp/ours"
		done
		echo "$n: packets, packets and elements, elements as the installed trc_pkt_lister"
	done
fi

# a55-test-tpiu is a DSTREAM capture (format=dstream_coresight) that
# trc_pkt_lister reads, without -dstream_format, as TPIU frames: its first
# block footer breaks the decode, and there it stops.  We do the same, and
# say so: the listing ends at that error, with no end of trace.
"$cli" decode --snapshot "$snaps/a55-test-tpiu" --decode >/dev/null 2>"$tmp/err" || fail "a55: exit $?"
grep -q 'format dstream_coresight read as trc_pkt_lister 1.3.3 reads it.*--framing dstream' "$tmp/err" ||
	fail "a55: no word on the DSTREAM reading: $(cat "$tmp/err")"
grep -q 'trace data error at index 516; decoding stopped' "$tmp/err" || fail "a55: the stop is not reported: $(cat "$tmp/err")"
echo "checked $checked golden listings of $(echo $all | wc -w) snapshots"
exit 0
