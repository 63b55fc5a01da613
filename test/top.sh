#!/usr/bin/env bash
# perfring top against the real kernel: a workload whose hot function is
# known (test/workloads/hot.c) must head the table.  Output to a file (not a
# terminal): plain text, no screen clearing.  Skips (77) only if the
# kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
# The ASan+UBSan CLI when there is one: top parses what the rings hold.
# System-wide it loads the symbol tables of everything that runs (a
# compiler's are large): the release CLI there, to stay quick under load.
cli=${PERFRING_ASAN_CLI:-${PERFRING_CLI:-build/perfring}}
release_cli=${PERFRING_CLI:-$cli}
wl=${WORKLOADS:-build/workloads}
make_tmp
hot_pid=
top_pid=
victim=
cleanup() {
	[ -n "$top_pid" ] && kill -KILL "$top_pid" 2>/dev/null
	[ -n "$hot_pid" ] && kill -KILL "$hot_pid" 2>/dev/null
	[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null
	wait 2>/dev/null
}

# Runs top bounded in time: a hung top fails here, not at the runner's limit.
top() { timeout -s KILL "$WAIT_S" "$cli" top "$@"; }
top_release() { timeout -s KILL "$WAIT_S" "$release_cli" top "$@"; }
tables() { grep -c 'PerfTop:' "$1"; }
# The first table's rows: "  12.34%  hot  [.] hot_loop".
rows() { awk '/PerfTop:/ { n++ } n == 1 && /%  / && !/PerfTop:/' "$1"; }

# 0. Can we open perf events at all?
if ! top -p $$ -d 0.1 --iterations 1 >"$tmp/probe.out" 2>"$tmp/probe.err"; then
	grep -q 'no permission' "$tmp/probe.err" && skip "kernel refuses perf_event_open: $(cat "$tmp/probe.err")"
	fail "top -p \$\$: $(cat "$tmp/probe.err")"
fi

# The workload runs far longer than the test; it is killed at the end.
"$wl/hot" 600 &
hot_pid=$!
wait_until "$WAIT_S" has_exec "$hot_pid" hot || fail "hot did not start"

# 1. -p PID, N refreshes, not a terminal: N tables, hot_loop on top, exit 0,
# no escape sequences.
top -p "$hot_pid" -F 1000 -d 0.5 --iterations 3 >"$tmp/p.out" 2>"$tmp/p.err"
rc=$?
[ $rc = 0 ] || fail "top -p exited $rc: $(cat "$tmp/p.err")"
[ "$(tables "$tmp/p.out")" = 3 ] || fail "top --iterations 3 printed $(tables "$tmp/p.out") tables"
grep -q $'\033' "$tmp/p.out" && fail "escape sequences written to a file"
grep -q "target_pid: $hot_pid" "$tmp/p.out" || fail "the header does not name the target: $(head -1 "$tmp/p.out")"
first=$(rows "$tmp/p.out" | head -n 1)
[[ $first =~ hot\ +\[\.\]\ hot_loop$ ]] || fail "-p: hot_loop is not on top: '$first'"
pct=$(awk '{ sub("%", "", $1); print int($1) }' <<<"$first")
[ "$pct" -ge 50 ] || fail "-p: hot_loop has only $pct% of its samples"
echo "-p: $first"

# 2. System-wide (the default, and -a), with the machine's other load beside
# it: the hot process's first row is hot_loop, and the table is sorted.
top_release -a -F 1000 -d 0.5 --iterations 2 -E 50 -s comm,dso,sym >"$tmp/a.out" 2>"$tmp/a.err" || fail "top -a: $(cat "$tmp/a.err")"
[ "$(tables "$tmp/a.out")" = 2 ] || fail "top -a printed $(tables "$tmp/a.out") tables"
grep -q '(all, [0-9]* CPU' "$tmp/a.out" || fail "-a: the header does not say all CPUs"
first=$(rows "$tmp/a.out" | awk '$2 == "hot"' | head -n 1)
[[ $first =~ \[\.\]\ hot_loop$ ]] || fail "-a: the first row of hot is not hot_loop: '$first'"
rows "$tmp/a.out" | awk '{ sub("%", "", $1); if (NR > 1 && $1 + 0 > last + 0) exit 1; last = $1 }' ||
	fail "-a: the table is not sorted by overhead"
# At most 1000 samples a second per CPU, measured over the time the
# samples were taken (not the time the table took to print).
for rate in $(awk '/PerfTop:/ { print int($2) }' "$tmp/a.out"); do
	[ "$rate" -le $((1100 * $(nproc))) ] || fail "-a -F 1000: $rate samples a second on $(nproc) CPUs"
done
echo "-a: $first"

# 3. -g: the hot function's call chain under it reaches main.
top -p "$hot_pid" -g -d 0.5 --iterations 1 -E 1 >"$tmp/g.out" 2>"$tmp/g.err" || fail "top -g: $(cat "$tmp/g.err")"
awk '/\[\.\] hot_loop$/ { on = 1; next } on && /--(-|[0-9.]+%--)hot_loop$/ { chain = 1; next } chain && / main$/ { found = 1 } END { exit !found }' "$tmp/g.out" ||
	fail "-g: no call chain hot_loop ... main under hot_loop: $(head -n 20 "$tmp/g.out")"
echo "-g: $(grep -c . "$tmp/g.out") lines, chain through main"

# 4. -e, -c, -n and --sort pid: the event named in the header, the pid
# column, a samples column.
top -p "$hot_pid" -e task-clock -c 1000000 -n -s pid,sym -d 0.5 --iterations 1 >"$tmp/e.out" 2>"$tmp/e.err" || fail "top -e task-clock: $(cat "$tmp/e.err")"
grep -q '\[c=1000000 task-clock\]' "$tmp/e.out" || fail "-e task-clock -c: header $(head -n 1 "$tmp/e.out")"
first=$(rows "$tmp/e.out" | head -n 1)
[[ $first =~ ^\ *[0-9.]+%\ +[0-9]+\ +$hot_pid:hot\ +\[\.\]\ hot_loop$ ]] || fail "-n -s pid,sym: '$first'"
echo "-e task-clock -n -s pid,sym: $first"

# 5. SIGINT ends it cleanly (status 0) between refreshes.
"$cli" top -p "$hot_pid" -d 0.2 >"$tmp/int.out" 2>"$tmp/int.err" &
top_pid=$!
wait_until "$WAIT_S" grep -q 'PerfTop:' "$tmp/int.out" || fail "top printed no table: $(cat "$tmp/int.err")"
catches "$top_pid" INT || fail "top does not catch SIGINT"
kill -INT "$top_pid"
wait_until "$WAIT_S" sh -c "! kill -0 $top_pid 2>/dev/null" || fail "top still runs after SIGINT"
wait "$top_pid"
rc=$?
top_pid=
[ $rc = 0 ] || fail "top exited $rc after SIGINT: $(cat "$tmp/int.err")"
[ -s "$tmp/int.err" ] && fail "top wrote to stderr: $(cat "$tmp/int.err")"
echo "SIGINT: exit 0 after $(tables "$tmp/int.out") tables"

# 6. Decay (the default) against -z: a process that stopped being sampled
# stays in the table, decaying, but leaves it at once with -z.  Its own
# hot process each, killed once the first table is out; two tables later
# its interval is long over.
for mode in decay zero; do
	"$wl/hot" 600 &
	victim=$!
	wait_until "$WAIT_S" has_exec "$victim" hot || fail "hot did not start"
	args=(-p "$victim" -d 0.5 --iterations 4)
	[ $mode = zero ] && args+=(-z)
	"$cli" top "${args[@]}" >"$tmp/$mode.out" 2>"$tmp/$mode.err" &
	top_pid=$!
	wait_until "$WAIT_S" grep -q 'PerfTop:' "$tmp/$mode.out" || fail "$mode: no table: $(cat "$tmp/$mode.err")"
	kill -KILL "$victim"
	wait "$victim" 2>/dev/null
	victim=
	wait_until "$WAIT_S" sh -c "! kill -0 $top_pid 2>/dev/null" || fail "$mode: top did not end after 4 refreshes"
	wait "$top_pid" || fail "$mode: top failed: $(cat "$tmp/$mode.err")"
	top_pid=
	last=$(awk '/PerfTop:/ { n++; next } n == 4 && /%  /' "$tmp/$mode.out")
	if [ $mode = decay ]; then
		[[ $last == *hot_loop* ]] || fail "decay: hot_loop left the table: $(tail -n 8 "$tmp/decay.out")"
	else
		[ -z "$last" ] || fail "-z: rows of an ended interval in the last table: $last"
	fi
done
echo "decay keeps a stopped process, -z drops it"

# 7. Usage errors.
"$cli" top --iterations 0 >/dev/null 2>&1
[ $? = 2 ] || fail "--iterations 0 accepted"
"$cli" top -s nosuchkey --iterations 1 >/dev/null 2>"$tmp/s.err"
[ $? = 1 ] && grep -q 'unknown key' "$tmp/s.err" || fail "--sort nosuchkey: $(cat "$tmp/s.err")"
echo "ok"
