#!/usr/bin/env bash
# test-parallel: yes
# The pager: on a terminal (a tmux window), script, dump, diff, report
# --stdio and annotate --stdio hand their output to $PERFRING_PAGER, else
# $PAGER, else less (with LESS=FRSX unless LESS is set), and wait for it;
# --no-pager and PAGER=cat page nothing; off a terminal (a pipe, a file)
# nothing is paged whatever PAGER says.  What the pager gets is what the
# command prints off a terminal, byte for byte.
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
cli=$(realpath "$cli")
wl=$(realpath "$wl")
"$cli" record -q -g -e cpu-clock -o "$tmp/perf.data" -- "$wl/hot" 0.2 2>"$tmp/rec.err" ||
	{ grep -q "Permission denied\|not permitted" "$tmp/rec.err" && skip "kernel refuses perf_event_open"; fail "record: $(cat "$tmp/rec.err")"; }
cp "$tmp/perf.data" "$tmp/perf.data.old"

# paged NAME ARGS...: run on the terminal with PAGER writing what it reads
# to $tmp/NAME.paged; compare with the same command into a pipe.
paged() {
	local name=$1
	shift
	tmux_run 100 30 "PAGER='cat >$tmp/$name.paged' $cli $*"
	wait_until 60 test -e "$tmp/rc" || fail "$name: did not end: $(screen)"
	[ "$(cat "$tmp/rc")" = 0 ] || fail "$name: exit $(cat "$tmp/rc"): $(screen)"
	[ -s "$tmp/$name.paged" ] || fail "$name: the pager got nothing"
	(cd "$tmp" && "$cli" "$@" | cat) >"$tmp/$name.pipe" 2>/dev/null
	cmp -s "$tmp/$name.paged" "$tmp/$name.pipe" ||
		fail "$name: the pager got other text than a pipe does"
	echo "$name: paged on a terminal ($(wc -l <"$tmp/$name.paged") lines)"
}
paged script script -i perf.data
paged dump dump -i perf.data
paged diff diff perf.data.old perf.data
paged report report --stdio -i perf.data
paged annotate annotate --stdio -i perf.data hot_loop

# PERFRING_PAGER before PAGER
tmux_run 100 30 "PERFRING_PAGER='cat >$tmp/pp' PAGER='cat >$tmp/p' $cli script -i perf.data"
wait_until 60 test -e "$tmp/rc" || fail "PERFRING_PAGER: did not end"
[ -s "$tmp/pp" ] && [ ! -e "$tmp/p" ] || fail "PERFRING_PAGER is not used before PAGER"
# less by default, told FRSX; LESS of the user's kept
mkdir "$tmp/bin"
printf '#!/bin/sh\necho "LESS=$LESS" >%s/less.env\ncat >/dev/null\n' "$tmp" >"$tmp/bin/less"
chmod +x "$tmp/bin/less"
tmux_run 100 30 "unset PAGER PERFRING_PAGER LESS; PATH=$tmp/bin:\$PATH $cli script -i perf.data"
wait_until 60 test -e "$tmp/rc" || fail "default pager: did not end"
grep -qx 'LESS=FRSX' "$tmp/less.env" || fail "default pager: less got $(cat "$tmp/less.env" 2>/dev/null)"
tmux_run 100 30 "unset PAGER PERFRING_PAGER; LESS=R PATH=$tmp/bin:\$PATH $cli script -i perf.data"
wait_until 60 test -e "$tmp/rc" || fail "LESS=R: did not end"
grep -qx 'LESS=R' "$tmp/less.env" || fail "the user's LESS was replaced: $(cat "$tmp/less.env")"
# --no-pager, PAGER=cat and PAGER="": the terminal gets the text
for how in "--no-pager" "PAGER=cat" "PAGER="; do
	rm -f "$tmp/np"
	case $how in
	--no-pager) tmux_run 200 50 "PAGER='cat >$tmp/np' $cli script --no-pager -i perf.data | tail -n 3 >/dev/null; PAGER='cat >$tmp/np' $cli --no-pager 2>/dev/null; PAGER='cat >$tmp/np' $cli report --stdio --no-pager -g none --percent-limit 5 -i perf.data" ;;
	*) tmux_run 200 50 "$how $cli report --stdio -g none --percent-limit 5 -i perf.data" ;;
	esac
	wait_until 60 test -e "$tmp/rc" || fail "$how: did not end"
	[ ! -e "$tmp/np" ] || fail "$how: paged anyway"
	on_screen 'hot_loop' || fail "$how: the table is not on the terminal: $(screen)"
done
# off a terminal: never, whatever PAGER says
PAGER="cat >$tmp/off" "$cli" script -i "$tmp/perf.data" >"$tmp/off.txt" || fail "script into a file"
PAGER="cat >$tmp/off" "$cli" diff "$tmp/perf.data.old" "$tmp/perf.data" | cat >/dev/null
[ ! -e "$tmp/off" ] || fail "paged off a terminal"
[ -s "$tmp/off.txt" ] || fail "script into a file printed nothing"
echo "pager: ok"
