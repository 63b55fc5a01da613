#!/usr/bin/env bash
# test-parallel: yes
# Progress: perfring report on a ~400 MB file (a --call-graph dwarf
# recording: more than a second of reading, twice the half second before the
# bar shows) on a terminal (a tmux window) shows perf's "Processing
# events" bar on stderr while it loads, then the browser; --stdio with
# stderr on the terminal shows it too and erases it; off a terminal (stderr
# a file) nothing is printed but the table.  Everything written to the
# terminal is logged (tmux pipe-pane, started before the command), so a
# bar shown between two looks at the screen is not missed.
# Skips (77) only if the kernel refuses perf_event_open.
set -u
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
fail() { echo "FAILED: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
tmp=$(mktemp -d)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux_lib.sh"
trap 'tmux_stop; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
command -v tmux >/dev/null || fail "tmux is not installed (scripts/deps.sh)"
cli=$(realpath "$cli")
wl=$(realpath "$wl")
# about 400 MB: 32 KiB of stack per sample, up to 8 s of samples
"$cli" record -q --call-graph dwarf,32768 -e cpu-clock -F 4000 --max-size 400M -o "$tmp/big.data" -- "$wl/nofp" 8 2>"$tmp/rec.err" ||
	{ grep -q "Permission denied\|not permitted" "$tmp/rec.err" && skip "kernel refuses perf_event_open"; fail "record: $(cat "$tmp/rec.err")"; }
size=$(file_size "$tmp/big.data")
[ "$size" -ge 300000000 ] || fail "the recording has $size bytes, not ~400 MB"

# logged_run COLS LINES COMMAND: tmux_run, with all the window's output
# logged into $tmp/term.log from before COMMAND starts.
logged_run() {
	local cols=$1 lines=$2
	shift 2
	rm -f "$tmp/rc" "$tmp/go" "$tmp/term.log"
	tm kill-session -t t 2>/dev/null
	tm new-session -d -s t -x "$cols" -y "$lines" -c "$tmp" \
		"while [ ! -e go ]; do sleep 0.05; done; $*; echo \$? >'$tmp/rc'; sleep 600"
	tm pipe-pane -t t "cat >>'$tmp/term.log'"
	touch "$tmp/go"
}
# logged PATTERN: the terminal was sent PATTERN (grep -E).
logged() { grep -aEq -- "$1" "$tmp/term.log"; }

# the browser: progress while loading, then its title
logged_run 120 30 "$cli report -i big.data"
wait_screen_until 120 on_screen 'Samples: ' || fail "the browser did not open: $(screen)"
wait_screen_until 10 logged 'Processing events\.\.\. \[[= >]+\] +[0-9]+%' ||
	fail "no progress bar while loading $size bytes: $(tr -c '[:print:]' ' ' <"$tmp/term.log" | head -c 300)"
on_screen 'Processing events' && fail "the progress line stayed under the browser"
tm send-keys -t t q
wait_screen_until 60 test -e "$tmp/rc" || fail "q did not quit"
# --stdio, its table into a file, stderr the terminal: shown, then erased
logged_run 120 30 "$cli report --stdio -g none -i big.data >table.txt"
wait_screen_until 120 test -e "$tmp/rc" || fail "--stdio did not end"
wait_screen_until 10 logged 'Processing events' || fail "--stdio: no progress on the terminal: $(screen)"
on_screen 'Processing events' && fail "--stdio: the progress line was not erased: $(screen)"
grep -q chain_inner "$tmp/table.txt" || fail "--stdio: no table"
# off a terminal: nothing on stderr
(cd "$tmp" && "$cli" report --stdio -g none -i big.data >off.txt 2>off.err) || fail "report off a terminal"
[ ! -s "$tmp/off.err" ] || fail "off a terminal, stderr got: $(head -c 200 "$tmp/off.err")"
cmp -s "$tmp/off.txt" "$tmp/table.txt" || { diff "$tmp/off.txt" "$tmp/table.txt" | head -5 >&2; fail "the table differs with progress on"; }
echo "progress: ok ($size bytes)"
