#!/usr/bin/env bash
# The hostile-program soak: the recorder built with ASan+UBSan
# (build/asan/perfring) records -a sched:sched_switch next to
# test/apps/apphostile soak, in which one thread emits properly for
# SOAK_SECS seconds (default 20; make soak SECS=N runs longer) while one
# hostile thread after another scribbles random words over its control
# page and random bytes over its data, moves data_head backwards, far
# ahead and misaligned, publishes records of size 0, huge and unaligned,
# and truncates its ring (a new thread, a new ring, each time).
# Asserted: the recorder ends by itself in time (exit 0), ASan and UBSan
# report nothing; perf reads the file, sched_switch is in it, every event
# of the healthy thread is there exactly once (seq 0..N-1); the damage is
# counted in the summary (damaged records, truncated rings) and the log
# stays bounded (warnings once per ring and cause, a few per ring).
# Not asserted: the hostile threads' own events (they scribble over them).
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 900
set -u
. "$(dirname "$0")/lib.sh"
asan_cli=${PERFRING_ASAN_CLI:-build/asan/perfring}
apps=${TEST_APPS:-build/apps}
secs=${SOAK_SECS:-20}
make_tmp
need_cmd perf linux-perf
[ -x "$asan_cli" ] || fail "$asan_cli is missing (make check builds it)"
asan_cli=$(realpath "$asan_cli")
hostile=$(realpath "$apps/apphostile")
[ -x "$hostile" ] || fail "$hostile is missing (make check builds it)"
need_perf_events
cd "$tmp" || exit 1

start=${EPOCHREALTIME/./}
# Bounded: the program stops by itself after $secs; generous beyond.
ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	timeout -s KILL $((secs * 3 + 120)) "$asan_cli" record -a -e sched:sched_switch -o soak.data -- \
	"$hostile" soak "$secs" >soak.out 2>soak.err
rc=$?
took=$(((${EPOCHREALTIME/./} - start) / 1000000))
[ $rc = 137 ] && fail "the recorder hung (killed after $((secs * 3 + 120)) s)"
grep -q 'Sanitizer\|runtime error' soak.err && fail "sanitizer report: $(grep -A30 -m1 'Sanitizer\|runtime error' soak.err)"
[ $rc = 0 ] || fail "recorder exit $rc: $(tail -5 soak.err)"

perf report --stats -i soak.data >stats.txt 2>stats.err || fail "perf report --stats: $(tail -3 stats.err)"
grep -q 'sched:sched_switch stats' stats.txt || fail "no sched_switch in perf report --stats"
perf script -F tid,event,trace -i soak.data >script.txt 2>script.err || fail "perf script: $(tail -3 script.err)"
sw=$(grep -c ' sched:sched_switch:' script.txt)
[ "$sw" -gt 0 ] || fail "no sched_switch events"
"$asan_cli" stats -i soak.data >ours.txt 2>ours.err || fail "perfring stats (ASan): $(tail -3 ours.err)"

# The healthy thread (2): seq 0..N-1, each once.
want=$(awk '$1 == "thread" && $2 == 2 { print $4 }' soak.out)
[ -n "$want" ] && [ "$want" -gt 0 ] || fail "the program did not say what thread 2 emitted: $(cat soak.out)"
awk -v want="$want" '$2 == "hostile:tick:" && $4 == "thread=2" {
		split($3, a, "="); s = a[2] + 0
		if (s in seen) { print "seq " s " twice"; exit 1 }
		seen[s] = 1; n++
	}
	END {
		if (n != want) { print n " of thread 2'"'"'s " want " events in the file"; exit 1 }
		for (s = 0; s < want; s++) if (!(s in seen)) { print "seq " s " missing"; exit 1 }
	}' script.txt >healthy.err || fail "healthy thread: $(cat healthy.err)"

# The damage, counted and reported; a bounded log.
read -r _ rings _ truncated _ scribbles _ < <(grep '^soak:' soak.out)
[ "${rings:-0}" -gt 0 ] || fail "the program made no hostile ring: $(cat soak.out)"
summary=$(grep 'application:' soak.err)
damaged=$(echo "$summary" | sed -n 's/.* \([0-9][0-9]*\) damaged.*/\1/p')
[ "${damaged:-0}" -gt 0 ] || fail "no damage counted after $scribbles scribbles: $summary"
dropped=$(sed -n 's/.* \([0-9][0-9]*\) rings dropped after their program truncated them.*/\1/p' soak.err)
if [ "$truncated" -gt 0 ]; then
	[ "${dropped:-0}" = "$truncated" ] || fail "$truncated rings truncated, ${dropped:-0} reported: $(tail -5 soak.err)"
fi
lines=$(grep -ci 'warning' soak.err)
max=$((rings * 8 + 8))
[ "$lines" -le "$max" ] || fail "$lines warning lines for $rings hostile rings (at most $max): $(sort soak.err | uniq -c | sort -rn | head -5)"
echo "soak: ${secs}s (${took}s with the ASan recorder): $rings hostile rings, $scribbles scribbles, $truncated truncated;" \
	"recorder: exit 0, no sanitizer report, $damaged damaged counted, ${dropped:-0} rings dropped as truncated, $lines warning lines;" \
	"$sw sched_switch, healthy thread $want/$want"
