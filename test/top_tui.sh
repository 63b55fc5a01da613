#!/usr/bin/env bash
# test-parallel: yes
# perfring top's browser, driven as a person would through a terminal (a
# tmux window) on a running workload (test/workloads/hot.c): it opens with
# hot_loop selected; the list is refreshed (the title's sample count
# grows) while the selection stays on the same entry, moved off the top
# row too, and an expanded chain stays expanded; + expands; a says on the
# status line that live samples cannot be annotated; q exits 0, and
# SIGTERM, SIGINT and SIGHUP end it with 0 as well, the terminal restored
# (no alternate screen, canonical mode and echo back).  --stdio on a
# terminal keeps the text table.  Skips (77) only if the kernel refuses
# perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux_lib.sh"
cli=${PERFRING_ASAN_CLI:-${PERFRING_CLI:-build/perfring}}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd tmux tmux
cli=$(realpath "$cli")
wl=$(realpath "$wl")
hot_pid=
cleanup() {
	tmux_stop
	[ -n "$hot_pid" ] && kill -KILL "$hot_pid" 2>/dev/null
	wait 2>/dev/null
}
trap 'cleanup; lib_exit' EXIT

"$wl/hot" 600 &
hot_pid=$!
wait_until "$WAIT_S" has_exec "$hot_pid" hot || fail "hot did not start"
if ! timeout -s KILL "$WAIT_S" "$cli" top --stdio -p "$hot_pid" -d 0.1 --iterations 1 >"$tmp/probe.out" 2>"$tmp/probe.err"; then
	grep -q 'no permission\|not permitted' "$tmp/probe.err" && skip "kernel refuses perf_event_open: $(cat "$tmp/probe.err")"
	fail "top --stdio -p: $(cat "$tmp/probe.err")"
fi

wait_screen() { wait_screen_until "$WAIT_S" on_screen "$1" || fail "$2: $(screen)"; }
# the selected (reverse video) row, without its attributes
selected() { screen -e | sed '$d' | grep -E $'\e\\[[0-9;]*7m' | sed 's/\x1b\[[0-9;]*m//g; s/ *$//' | head -n 1; }
# the sample count of the title
samples() { screen | sed -n '1s/^Samples: \([0-9]*\) .*/\1/p'; }
grown_past() { local n; n=$(samples); [ -n "$n" ] && [ "$n" -gt "$1" ]; }
# the symbol of the selected entry row ("[.] name" up to the end)
selected_sym() { selected | sed -n 's/.*\] //p'; }
# top ends with status 0, the terminal as it was: canonical mode and echo
# (stty after it, in the same window), no alternate screen
ended_ok() {
	wait_screen_until "$WAIT_S" test -s "$tmp/rc" || fail "$1: did not end: $(screen)"
	[ "$(cat "$tmp/rc")" = 0 ] || fail "$1: exit $(cat "$tmp/rc"): $(cat "$tmp/top.err")"
	grep -Eq '(^| )icanon( |$)' "$tmp/stty" && grep -Eq '(^| )echo( |$)' "$tmp/stty" ||
		fail "$1: the terminal was left in raw mode: $(cat "$tmp/stty")"
	[ "$(tm display -p -t t '#{alternate_on}')" = 0 ] || fail "$1: the alternate screen is still on"
}
# start_top ARGS: perfring top ARGS in a fresh 120x40 window; its status
# into rc and the terminal's modes into stty after it ends.
start_top() {
	rm -f "$tmp/stty"
	tmux_run 120 40 "$cli top $* 2>top.err; r=\$?; stty -a >stty; (exit \$r)"
}
# the pid of top in the window (the child of its shell)
top_pid() { pgrep -f -n "^$cli top "; }

# 1. The browser opens with hot_loop selected, the title as perf top's.
start_top -g -p "$hot_pid" -d 0.5
wait_screen "^Samples: [0-9]+ +of event 'cpu-clock', [0-9]+ Hz, Event count \(approx\.\): [0-9]+ lost: [0-9]+/[0-9]+" "no perf top title"
wait_screen 'Overhead +Shared Object +Symbol' "no column header (dso,sym)"
wait_screen '\[\.\] hot_loop' "hot_loop not listed"
wait_screen_until "$WAIT_S" eval 'selected | grep -q hot_loop' || fail "hot_loop is not selected: $(selected)"
[ ! -e "$tmp/rc" ] || fail "top did not wait for keys: $(cat "$tmp/top.err")"
echo "opens: $(screen | head -n 1) / $(selected)"

# 2. A refresh: more samples in the title, the selection still on the
# same entry after moving off the top row (its row may change).
keys Down
wait_screen_until "$WAIT_S" eval '[ -n "$(selected_sym)" ] && ! selected | grep -q hot_loop' || fail "Down did not move: $(screen)"
sym=$(selected_sym)
n=$(samples)
wait_screen_until "$WAIT_S" grown_past "$n" || fail "the sample count did not grow past $n: $(screen)"
n2=$(samples)
[ "$(selected_sym)" = "$sym" ] || fail "after a refresh ($n -> $n2 samples) the selection moved from '$sym' to '$(selected_sym)'"
echo "refresh: $n -> $n2 samples, the selection still on '$sym'"

# 3. + expands hot_loop's callers; they stay expanded through a refresh.
keys Up
wait_screen_until "$WAIT_S" eval 'selected | grep -q hot_loop' || fail "Up did not select hot_loop: $(selected)"
keys +
wait_screen -- '--[0-9.]+%--' "+ showed no callers"
n=$(samples)
wait_screen_until "$WAIT_S" grown_past "$n" || fail "no refresh after +"
on_screen -- '--[0-9.]+%--' || fail "the expanded chain collapsed at a refresh: $(screen)"
selected | grep -q hot_loop || fail "the selection left hot_loop at a refresh: $(selected)"
echo "+: $(screen | grep -m1 -E -- '--[0-9.]+%--' | sed 's/^ *//') kept through a refresh"

# 4. a: live samples are in no file: said on the status line.
keys a
wait_screen 'annotate reads a perf.data' "a said nothing"
keys '?'
wait_screen '^Keys' "? showed no help"
keys x
wait_screen '^Samples: ' "a key did not leave the help"

# 5. q exits 0, the terminal restored.
keys q
ended_ok "q"
echo "q: exit 0, terminal restored"

# 6. SIGTERM, SIGINT, SIGHUP: exit 0, the terminal restored.
for sig in TERM INT HUP; do
	start_top -p "$hot_pid" -d 0.5
	wait_screen '\[\.\] hot_loop' "$sig: hot_loop not listed"
	pid=$(top_pid)
	[ -n "$pid" ] || fail "$sig: no top process"
	kill -"$sig" "$pid"
	ended_ok "SIG$sig"
	echo "SIG$sig: exit 0, terminal restored"
done

# 7. --stdio on a terminal: perf top --stdio's text, not the browser.
start_top --stdio -p "$hot_pid" -d 0.5 --iterations 2
ended_ok "--stdio"
on_screen 'PerfTop: +[0-9]+ irqs/sec' || fail "--stdio on a tty: no text table: $(screen)"
echo "top_tui: ok"
