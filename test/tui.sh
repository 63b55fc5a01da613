#!/usr/bin/env bash
# test-parallel: yes
# The report browser, driven as a person would through a terminal (a tmux
# window): perfring report --no-children on a tty waits for keys with the
# hottest entry selected; + shows its callers; a annotates it with the
# hottest instruction highlighted (perf annotate's hottest); q goes back,
# q quits with exit 0.  Also: the Children column by default on a -g
# file, E/C, / filter, d and t zoom, ? help, --sort's columns and
# --dsos's shares as --stdio's, Tab between the events of a two-event
# file, Esc, resizing to a small terminal, --stdio on a tty, annotate
# --tui, and perf's files as well as ours.
set -u
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
fail() { echo "FAILED: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
tmp=$(mktemp -d)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux_lib.sh"
trap 'tmux_stop; rm -rf "$tmp"' EXIT
command -v tmux >/dev/null || fail "tmux is not installed (scripts/deps.sh)"
command -v perf >/dev/null || fail "perf is not installed"
cli=$(realpath "$cli")
wl=$(realpath "$wl")
"$cli" record -q -g -e cpu-clock -F 2000 -o "$tmp/ours.data" -- "$wl/hot" 0.4 2>"$tmp/rec.err" ||
	{ grep -q "Permission denied\|not permitted" "$tmp/rec.err" && skip "kernel refuses perf_event_open"; fail "record: $(cat "$tmp/rec.err")"; }
perf record -q -g -e cpu-clock -F 2000 -o "$tmp/perf.data" -- "$wl/hot" 0.4 2>/dev/null || fail "perf record -g"
"$cli" record -q -e cpu-clock,task-clock -o "$tmp/two.data" -- "$wl/hot" 0.2 || fail "record two events"

# wait_screen PATTERN WHAT: the screen shows PATTERN within the bound.
wait_screen() { wait_screen_until 60 on_screen "$1" || fail "$2: $(screen)"; }
wait_gone() { wait_screen_until 60 off_screen "$1" || fail "$2: $(screen)"; }
# the line of the selected (reverse video) row
selected() { screen -e | grep -E $'\e\\[[0-9;]*7m' | sed 's/\x1b\[[0-9;]*m//g' | head -n 1; }
quit_ok() {
	wait_screen_until 60 test -e "$tmp/rc" || fail "$1: did not quit: $(screen)"
	[ "$(cat "$tmp/rc")" = 0 ] || fail "$1: exit $(cat "$tmp/rc")"
}

for f in ours perf; do
	hot=$("$cli" annotate --stdio -i "$tmp/$f.data" hot_loop |
		awk '$2 == ":" && $3 ~ /:$/ { if ($1 + 0 > best) { best = $1 + 0; a = $3 } } END { print a }')
	[ -n "$hot" ] || fail "$f: no hottest instruction of hot_loop"
	tmux_run 120 40 "$cli report --no-children -i $f.data"
	wait_screen "Samples: [0-9]+ +of event 'cpu-clock'" "$f: no browser title"
	wait_screen 'hot_loop' "$f: hot_loop not listed"
	selected | grep -q 'hot_loop' || fail "$f: the selected entry is not hot_loop: $(selected)"
	[ ! -e "$tmp/rc" ] || fail "$f: report did not wait for keys"
	keys +
	wait_screen -- '--[0-9.]+%--' "$f: + showed no callers"
	keys a
	wait_screen 'Annotate hot_loop' "$f: a did not annotate"
	screen -e | grep -E $'\e\\[[0-9;]*7m' | grep -q " $hot " ||
		fail "$f: the highlighted instruction is not the hottest ($hot): $(selected)"
	keys q
	wait_screen 'Samples: ' "$f: q did not go back from annotate"
	keys q
	quit_ok "$f: report"
	echo "$f: report browser: hot_loop selected, + callers, a annotates ($hot highlighted), q q exits 0"
done

# Children by default (-g file), E/C, filter, zoom, help, Esc
tmux_run 120 40 "$cli report -i ours.data"
wait_screen 'Children +Self' "no Children column by default on a -g file"
keys E
wait_screen -- '---[0-9.]+%--' "E expanded nothing"
keys C
wait_gone -- '---[0-9.]+%--' "C collapsed nothing"
keys / && keys -l hot_loop && keys Enter
wait_screen '/hot_loop' "/ filter not shown"
screen | sed -n '3,30p' | grep '%' | grep -vq hot_loop && fail "/hot_loop left other entries: $(screen)"
keys Escape
wait_gone '/hot_loop' "Esc did not clear the filter"
keys End d
wait_screen ' dso: ' "d did not zoom into an object"
keys d
wait_gone ' dso: ' "d again did not zoom out"
keys t
wait_screen ' thread: hot' "t did not zoom into the thread"
keys q
wait_gone ' thread: ' "q did not leave the zoom"
keys '?'
wait_screen 'Keys' "? showed no help"
keys x
wait_screen 'Samples: ' "a key did not leave the help"
# resizing, down to a tiny terminal, and back
tm resize-window -t t -x 40 -y 6
wait_screen '^Samples' "40x6"
keys Down Down
tm resize-window -t t -x 120 -y 40
wait_screen 'Children' "back to 120x40"
keys Escape
quit_ok "Esc"
echo "report browser: Children, E/C, /, d, t, ?, resize, Esc"

# --sort's keys are the columns; --dsos hides the other objects' entries
# and keeps the shares of the whole file, as --stdio's
tmux_run 120 40 "$cli report --no-children --sort dso,sym --dsos hot -i ours.data"
wait_screen 'Overhead +Shared Object +Symbol' "--sort dso,sym: not its columns"
on_screen 'Command' && fail "--sort dso,sym: a Command column: $(screen)"
screen | sed -n '3,38p' | grep '%' | grep -v ' hot  ' && fail "--dsos hot left other objects: $(screen)"
want=$("$cli" report --stdio --no-children --sort dso,sym --dsos hot -i "$tmp/ours.data" | awk '/hot_loop$/ { print $1; exit }')
got=$(screen | awk '/hot_loop/ { print $2; exit }')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "--dsos hot: hot_loop has $got in the browser, $want in --stdio"
keys q
quit_ok "--sort --dsos"
echo "report browser: --sort dso,sym columns, --dsos hot: hot_loop $got as --stdio"

# two events: Tab switches
tmux_run 120 40 "$cli report -i two.data"
wait_screen "of event 'cpu-clock'" "two events: first event"
keys Tab
wait_screen "of event 'task-clock'" "Tab did not switch events"
keys q
quit_ok "two events"
# --stdio on a terminal: the text (paged by less -F: short, so shown)
tmux_run 200 50 "$cli report --stdio -g none --percent-limit 5 -i ours.data"
quit_ok "--stdio"
on_screen '^# Overhead|^# +Children' || fail "--stdio on a tty: no table: $(screen)"
# annotate on a terminal: the browser's view
tmux_run 120 40 "$cli annotate -i ours.data hot_loop"
wait_screen 'Annotate hot_loop' "annotate --tui"
keys q
quit_ok "annotate"
echo "tui: ok"
