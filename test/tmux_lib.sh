# Helpers for the tests that drive perfring on a terminal (sourced after
# lib.sh): a private tmux server (its own socket, killed at exit), a
# window of a given size running a command, its screen captured.
# Needs $tmp.

tmux_sock="perfring-test-$$"
tm() { tmux -L "$tmux_sock" "$@"; }
tmux_stop() { tm kill-server 2>/dev/null; }

# tmux_run COLS LINES COMMAND: a fresh session running COMMAND (sh -c) in
# $tmp, its exit status into $tmp/rc when it ends.
tmux_run() {
	local cols=$1 lines=$2
	shift 2
	rm -f "$tmp/rc"
	tm kill-session -t t 2>/dev/null
	tm new-session -d -s t -x "$cols" -y "$lines" -c "$tmp" \
		"$*; echo \$? >'$tmp/rc'; sleep 600"
}

# screen [-e]: the window's text now (-e: with attributes as escapes).
screen() { tm capture-pane -p -t t "$@"; }
# on_screen PATTERN: grep -E on the screen.
on_screen() { screen | grep -Eq -- "$1"; }
# keys KEY...: as typed.
keys() { tm send-keys -t t "$@"; }

# wait_screen_until SECONDS COMMAND...: wait_until, polling every 50 ms
# (each poll is a tmux client: 10 ms polls would load the machine).
wait_screen_until() {
	local limit=$1 deadline
	shift
	deadline=$((SECONDS + limit + 1))
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}
# off_screen PATTERN: the screen does not show PATTERN.
off_screen() { ! on_screen "$1"; }
