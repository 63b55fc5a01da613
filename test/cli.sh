#!/usr/bin/env bash
# The perfring CLI from a user's point of view: the two-process demo, with
# and without drops, ring-stat, and clear errors on bad input.
set -u
cli=${PERFRING_CLI:-build/perfring}
fail() { echo "FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
echo "cli: ok"
