#!/usr/bin/env bash
# The fleet soak: perfring record -a -F 99 -g -o /dev/null --push into our
# own ClickHouse and a Pyroscope receiver, every second, for SOAK_SECS
# (default 20 in make check; make soak-fleet runs 600), while short
# processes come and go (about 10 a second).  The recorder's resident
# memory is read every few seconds: past the first quarter (start-up,
# kallsyms, the first symbol tables) its peak in the second half may
# exceed the peak before it by at most 10% + 4 MiB (the collector's
# tables are rebuilt as processes exit, the queues are bounded).  Printed:
# the memory over time, the intervals, and the bytes each sink got per
# interval.  Asserted too: the recorder ends by itself, exit 0, every
# interval delivered to both.  Skips (77) only if the kernel refuses
# perf_event_open; clickhouse-server missing is a failure.
# test-timeout: 1500
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
secs=${SOAK_SECS:-20}
make_tmp
. test/fleet_lib.sh
churn_pid=
cleanup() {
	[ -n "$churn_pid" ] && kill "$churn_pid" 2>/dev/null
	stop_receiver
	stop_clickhouse
}
need_perf_events "$cli"
start_clickhouse
start_receiver "$tmp/pyro"

# Processes coming and going until the end (bounded by secs).
(
	end=$((SECONDS + secs + 5))
	while ((SECONDS < end)); do
		"$wl/hot" 0.02 &
		"$wl/hot" 0.02 &
		sh -c true
		wait
		sleep 0.1
	done
) &
churn_pid=$!

"$cli" record -a -F 99 -g -o /dev/null --push "clickhouse=$CH_URL" --push "pyroscope=$RECV_URL" \
	--push-every 1 --label host=soak --duration "$secs" 2>"$tmp/rec.err" &
rec=$!
step=$((secs / 40))
((step < 1)) && step=1
: >"$tmp/rss"
t0=$SECONDS
while kill -0 "$rec" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$rec/status" 2>/dev/null)
	[ -n "$rss" ] && echo "$((SECONDS - t0)) $rss" >>"$tmp/rss"
	sleep "$step"
	((SECONDS - t0 < secs * 3 + 120)) || { kill -9 "$rec"; fail "the recorder did not end in time"; }
done
wait "$rec" || fail "record -a --push: exit $?: $(tail -5 "$tmp/rec.err")"
kill "$churn_pid" 2>/dev/null
wait "$churn_pid" 2>/dev/null
churn_pid=
stop_receiver
python3 - "$tmp/rss" "$secs" <<'PY' || exit 1
import sys
pts = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
secs = int(sys.argv[2])
if len(pts) < 4:
    print(f"FAILED: {len(pts)} memory readings", file=sys.stderr)
    sys.exit(1)
early = [r for t, r in pts if secs / 4 <= t < secs / 2] or [pts[len(pts) // 4][1]]
late = [r for t, r in pts if t >= secs / 2] or [pts[-1][1]]
base, peak = max(early), max(late)
series = " ".join(f"{t}s:{r // 1024}M" for t, r in pts[:: max(1, len(pts) // 12)])
print(f"rss (kB): first {pts[0][1]}, peak before half {base}, peak after {peak}, last {pts[-1][1]}; {series}")
if peak > base * 1.10 + 4096:
    print(f"FAILED: memory grew from {base} kB to {peak} kB", file=sys.stderr)
    sys.exit(1)
PY
grep -q 'push: clickhouse=.*0 waiting in the spool, 0 dropped' "$tmp/rec.err" || fail "ClickHouse: $(grep 'push' "$tmp/rec.err")"
grep -q 'push: pyroscope=.*0 waiting in the spool, 0 dropped' "$tmp/rec.err" || fail "Pyroscope: $(grep 'push' "$tmp/rec.err")"
intervals=$(sed -n 's/.*push: \([0-9]*\) intervals.*/\1/p' "$tmp/rec.err")
[ "${intervals:-0}" -ge $((secs / 2)) ] || fail "$intervals intervals in $secs s"
ch_mb=$(sed -n 's/.*push: clickhouse=[^:]*:[^:]*:[0-9]*: \([0-9]*\) delivered (\([0-9.]*\) MB).*/\1 \2/p' "$tmp/rec.err")
py_bytes=$(cat "$tmp/pyro"/*.body 2>/dev/null | wc -c)
py_n=$(requests "$tmp/pyro")
rows=$(ch_query "SELECT count() FROM perfring.samples WHERE host = 'soak'")
procs=$(ch_query "SELECT uniqExact(pid) FROM perfring.samples WHERE host = 'soak'")
echo "$intervals intervals, $rows rows of $procs processes; bytes per interval: ClickHouse $(echo "$ch_mb" | awk '{ printf "%d", $1 ? $2 * 1e6 / $1 : 0 }') (gzip RowBinary), Pyroscope $((py_n ? py_bytes / py_n : 0)) (gzip pprof)"
grep 'resets\|rebuilt' "$tmp/rec.err" || true
