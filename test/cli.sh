#!/usr/bin/env bash
# The perfring CLI from a user's point of view: the two-process demo, with
# and without drops, ring-stat, and clear errors on bad input.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
make_tmp

out=$("$cli" demo -n 2000000) || fail "demo exited $?: $out"
echo "$out"
grep -q '^demo: 2000000 records, .* 0 lost, 0 corrupt, 0 unaccounted gaps' <<<"$out" || fail "demo lost or damaged records"
grep -q 'demo: ok' <<<"$out" || fail "demo did not say ok"

# A tiny ring and big records: the producer drops; every drop is reported.
out=$("$cli" demo -n 300000 -s 512 -m 16K --drop) || fail "drop demo exited $?: $out"
echo "$out"
lost=$(sed -n 's/^demo: \([0-9]*\) records, [0-9]* bytes, \([0-9]*\) lost.*/\2/p' <<<"$out")
recs=$(sed -n 's/^demo: \([0-9]*\) records, .*/\1/p' <<<"$out")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "expected drops with a 16 KiB ring, got '$lost'"
[ $((recs + lost)) -eq 300000 ] || fail "records $recs + lost $lost != 300000"

# ring-stat on something that is not a ring: clear error naming it.
echo "not a ring" >"$tmp/junk"
err=$("$cli" ring-stat "$tmp/junk" 2>&1) && fail "ring-stat accepted junk"
grep -q "$tmp/junk" <<<"$err" || fail "error does not name the file: $err"
grep -qi 'too small\|not a perfring' <<<"$err" || fail "error does not say what is wrong: $err"
err=$("$cli" ring-stat "$tmp/missing" 2>&1) && fail "ring-stat accepted a missing file"
grep -q 'No such file' <<<"$err" || fail "missing file error unclear: $err"
"$cli" demo -s 12 >/dev/null 2>&1 && fail "demo accepted a 12-byte record"
"$cli" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$cli" version | grep -q '^perfring [0-9]' || fail "version"

# Help as a newcomer reads it: record --help names every option record
# takes (its table in tools/record-options.c, listed by --list-opts),
# perfring --help every export format, inject --help inject's own usage.
"$cli" record --help >"$tmp/help" || fail "record --help: exit $?"
n=0
for o in $("$cli" record --list-opts | sed -n 's/^--//p'); do
	grep -q -- "--$o\b" "$tmp/help" || fail "record --help does not name --$o"
	n=$((n + 1))
done
[ "$n" -gt 50 ] || fail "only $n long options listed by record --list-opts"
"$cli" --help | grep -q 'export .*pprof' || fail "perfring --help lists no pprof export"
"$cli" inject --help | head -1 | grep -q '^usage: perfring inject ' || fail "inject --help: $("$cli" inject --help | head -1)"
echo "help: record --help names all $n options; export formats; inject's usage"

# Messages that blame the right thing.
if [ "$(nproc --all)" -lt 64 ] && perf_ok=$("$cli" record -q -e cs -o "$tmp/c.data" -- true 2>&1); then
	"$cli" record -q -C 0,63 -e cs -o "$tmp/c.data" -- true 2>"$tmp/err" ||
		fail "-C 0,63: a CPU the machine lacks failed the recording: $(cat "$tmp/err")"
	grep -q 'warning: -C 0,63: CPU 63 is not online on this machine (CPUs 0' "$tmp/err" || fail "-C 0,63: $(cat "$tmp/err")"
	"$cli" record -q -C 63 -e cs -o "$tmp/c.data" -- true 2>"$tmp/err" && fail "-C 63: recorded on no CPU"
	grep -q 'error: -C 63: no CPU of the list is online' "$tmp/err" || fail "-C 63: $(cat "$tmp/err")"
	# a breakpoint at a link-time address in a PIE program: 0 samples, and why
	"$cli" record -e mem:0x601040/8:w -o "$tmp/m.data" -- /bin/true 2>"$tmp/err" || fail "mem: record: $(cat "$tmp/err")"
	if grep -q '(0 samples' "$tmp/err"; then
		grep -q 'breakpoint mem:0x601040/8:w was never hit (0 samples): /bin/true is a position-independent executable' "$tmp/err" ||
			fail "mem: on a PIE program with 0 samples: $(cat "$tmp/err")"
	fi
	echo "messages: -C names the CPU missing; an unhit breakpoint in a PIE program says why"
else
	echo "messages: -C and mem: not checked (perf_event_open refused: $perf_ok)"
fi
"$cli" report --symfs "$tmp/no-such-root" -i "$tmp/nothing.data" >/dev/null 2>"$tmp/err"
grep -q "warning: --symfs $tmp/no-such-root: No such file or directory" "$tmp/err" || fail "--symfs missing: $(cat "$tmp/err")"
echo "messages: a missing --symfs directory is a warning"
echo "cli: ok"
