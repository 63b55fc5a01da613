#!/usr/bin/env bash
# Runs test programs, each under a time limit; prints one line per test
# with its time, the slowest ten, and "N passed, N failed, N skipped" last.
# Exit status 1 if anything failed.
#
# The limit is a safety net against a hung test, not a budget: a test that
# passes takes a small part of it, also on a slow machine under load.
#   PERFRING_TEST_TIMEOUT        seconds per test (default 300)
#   PERFRING_TEST_TIMEOUT_SCALE  multiplies every limit (default 1; e.g. 3
#                                for a slow emulated or heavily shared machine)
# A script that needs more has its own base limit (see limit_for).
set -u
base=${PERFRING_TEST_TIMEOUT:-${TEST_TIMEOUT:-300}}
scale=${PERFRING_TEST_TIMEOUT_SCALE:-1}
awk -v b="$base" -v s="$scale" 'BEGIN { exit !(b + 0 > 0 && s + 0 > 0) }' || {
	echo "run-tests: PERFRING_TEST_TIMEOUT=$base and PERFRING_TEST_TIMEOUT_SCALE=$scale must be positive numbers" >&2
	exit 2
}

# A script that needs more than the default says so in a line
# "# test-timeout: SECS" (e.g. the kill matrix and the soak, which run for
# a set number of rounds or time): its base limit, scaled like the others.
limit_for() {
	local t=$1 b=$base own
	case $t in
	*.sh)
		own=$(sed -n 's/^# test-timeout: \([0-9]*\)$/\1/p' "$t" | head -n 1)
		[ -n "$own" ] && awk -v o="$own" -v b="$b" 'BEGIN { exit !(o > b) }' && b=$own
		;;
	esac
	awk -v b="$b" -v s="$scale" 'BEGIN { v = b * s; printf "%d", v < 1 ? 1 : v + 0.5 }'
}

pass=0 fail=0 skip=0
failed=()
times=()
for t in "$@"; do
	name=${t#build/}
	limit=$(limit_for "$t")
	log=$(mktemp)
	start=$(date +%s.%N)
	# timeout puts the test in its own process group and signals all of
	# it: no child of a hung test is left running.
	timeout -s INT -k 10 "$limit" "$t" >"$log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	times+=("$secs $name")
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name (${secs}s): $(grep -m1 'SKIP' "$log")" ;;
	124 | 137) fail=$((fail + 1)); failed+=("$name"); echo "TIMEOUT $name after ${secs}s (limit ${limit}s)"; sed 's/^/    /' "$log" | tail -n 30 ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (exit $rc, ${secs}s)"; sed 's/^/    /' "$log" | tail -n 30 ;;
	esac
	rm -f "$log"
done
if ((${#times[@]})); then
	echo "slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')"
fi
if ((fail)); then
	echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0))
