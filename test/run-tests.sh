#!/usr/bin/env bash
# Runs test programs, each under a timeout; prints one line per test and
# "N passed, N failed, N skipped" last.  Exit status 1 if anything failed.
set -u
timeout_s=${TEST_TIMEOUT:-60}
pass=0 fail=0 skip=0
failed=()
for t in "$@"; do
	name=${t#build/}
	log=$(mktemp)
	start=$(date +%s.%N)
	# A script may ask for more ("# test-timeout: SECS", e.g. the kill
	# matrix and the soak, which run for a set number of rounds or time).
	limit=$timeout_s
	case $t in
	*.sh)
		own=$(sed -n 's/^# test-timeout: \([0-9]*\)$/\1/p' "$t" | head -n 1)
		[ -n "$own" ] && ((own > limit)) && limit=$own
		;;
	esac
	timeout -s INT -k 5 "$limit" "$t" >"$log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(grep -m1 'SKIP' "$log")" ;;
	124 | 130 | 137) fail=$((fail + 1)); failed+=("$name"); echo "TIMEOUT $name after ${limit}s"; sed 's/^/    /' "$log" | tail -n 30 ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (exit $rc)"; sed 's/^/    /' "$log" | tail -n 30 ;;
	esac
	rm -f "$log"
done
if ((fail)); then
	echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0))
