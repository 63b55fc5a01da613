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
#   PERFRING_TEST_JOBS           1: one test at a time; 2 (the default on two
#                                or more CPUs): two lanes, see run_lane
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

# Two lanes (PERFRING_TEST_JOBS=2, the default on two or more CPUs): the
# test programs and the scripts that say "# test-parallel: yes" (they
# record only their own commands and read only their own files: no
# system-wide recording, application session, tracefs instance, probe or
# well-known path another test looks at) run one after another beside the
# other scripts, which run one after another in the given order.  Each
# test thus has at most one other test beside it, less than the two busy
# processes every test must pass beside.  PERFRING_TEST_JOBS=1: one lane.
jobs=${PERFRING_TEST_JOBS:-$( (($(nproc 2>/dev/null || echo 1) >= 2)) && echo 2 || echo 1)}
case $jobs in 1 | 2) ;; *)
	echo "run-tests: PERFRING_TEST_JOBS=$jobs: 1 or 2" >&2
	exit 2
	;;
esac

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

parallel_ok() {
	case $1 in
	*.sh) grep -q '^# test-parallel: yes$' "$1" ;;
	*) true ;;
	esac
}

# run_lane FILE TEST...: runs the tests in turn; each one's lines are
# printed whole (a lock keeps the lanes' lines apart) and "RC SECS NAME"
# goes to FILE.
run_lane() {
	local out=$1 t name limit log start rc secs
	shift
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
		{
			flock 9
			case $rc in
			0) echo "PASS $name (${secs}s)" ;;
			77) echo "SKIP $name (${secs}s): $(grep -m1 'SKIP' "$log")" ;;
			124 | 137) echo "TIMEOUT $name after ${secs}s (limit ${limit}s)"; sed 's/^/    /' "$log" | tail -n 30 ;;
			*) echo "FAIL $name (exit $rc, ${secs}s)"; sed 's/^/    /' "$log" | tail -n 30 ;;
			esac
		} 9>>"$results/lock"
		echo "$rc $secs $name" >>"$out"
		rm -f "$log"
	done
}

if ((jobs == 2)); then
	lane_a=() lane_b=()
	for t in "$@"; do
		if parallel_ok "$t"; then lane_a+=("$t"); else lane_b+=("$t"); fi
	done
	run_lane "$results/a" "${lane_a[@]}" &
	run_lane "$results/b" "${lane_b[@]}"
	wait
else
	run_lane "$results/a" "$@"
fi

pass=0 fail=0 skip=0
failed=()
times=()
while read -r rc secs name; do
	times+=("$secs $name")
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed+=("$name") ;;
	esac
done < <(cat "$results"/a "$results"/b 2>/dev/null)
if ((${#times[@]})); then
	echo "slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')"
fi
if ((fail)); then
	echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0))
