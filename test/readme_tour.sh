#!/usr/bin/env bash
# The tour as a newcomer runs it after `make`: every command line of the
# ```sh blocks of README.md and then docs/tour.md (or of the markdown files
# given as arguments, relative to the checkout), taken from the files
# themselves (so the test follows them wherever they move things), run in
# order in one scratch
# directory that sees the checkout's build/, test/, scripts/, examples/
# and python/, with build/ on PATH.  A C block whose first line is
# "/* NAME.c" is saved as NAME.c first, so the lines that build it work.
# Every file must have command lines, and all together more than 50.
# Each command must exit 0, or the status its comment announces
# ("(exits N)").  Skipped, and named in the output: lines marked "(needs a
# network)" or "(needs hardware)", and the build itself (lines starting
# with make or git): this test runs inside `make check`, after make.
# Then the library example (ring.c) again, twice in a row, its output
# checked, and once over a ring a killed process left behind.
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 900
set -u
. "$(dirname "$0")/lib.sh"
top=$(realpath "$(dirname "$0")/..")
docs=("$@")
[ "${#docs[@]}" -gt 0 ] || docs=(README.md docs/tour.md)
cli=$(realpath "${PERFRING_CLI:-$top/build/perfring}")
build=$(dirname "$cli")
# a line's own limit: generous, the tour's lines take a second or two
line_limit=${TOUR_LINE_TIMEOUT:-120}
make_tmp
hold=
cleanup() {
	# (what the tour's lines start in the background ends by itself:
	# each runs for a second or two)
	[ -n "$hold" ] && kill "$hold" 2>/dev/null
	rm -f /dev/shm/my.ring /dev/shm/my.ring.wake
	[ -n "${KEEP:-}" ] && echo "(logs/N.cmd, N.out, N.err in $tmp)"
}
for d in "${docs[@]}"; do
	[ -f "$top/$d" ] || fail "no $d in $top"
done
[ -x "$build/perfring" ] || fail "no $build/perfring: make first"
need_perf_events

# The scratch directory stands for the checkout: its tree, read-only
# use only (every file the tour writes lands here).
mkdir "$tmp/tour" "$tmp/home" "$tmp/logs"
for d in build test scripts examples python include docs; do
	ln -s "$top/$d" "$tmp/tour/$d"
done
[ "$(realpath "$tmp/tour/build")" = "$build" ] ||
	ln -sfn "$build" "$tmp/tour/build" # (PERFRING_CLI elsewhere: that build)
export PATH="$build:$PATH"
# perf's build-id cache and go's caches go to the scratch home
export HOME=$tmp/home GOCACHE=$tmp/home/gocache
unset PERFRING_MODE PERFRING_RING_SIZE PERFRING_SESSION
cd "$tmp/tour" || exit 1

# The C files: a ```c block whose first line is "/* NAME.c".
for d in "${docs[@]}"; do
	awk -v dir="$tmp/tour" '
		/^```c$/ { inb = 1; first = 1; out = ""; next }
		/^```/ { inb = 0; next }
		inb && first { first = 0; if (match($0, /^\/\* [A-Za-z0-9_]+\.c/)) out = dir "/" substr($0, 4, RLENGTH - 3) }
		inb && out != "" { print > out }' "$top/$d"
done

# The command lines, in the files' order: "FILE:LINE" and the command,
# lines joined while bash says the command is not complete yet (a
# trailing backslash, a quote that goes on).
cmds=()
starts=()
for d in "${docs[@]}"; do
	awk '/^```sh$/ { inb = 1; next } /^```/ { inb = 0; next } inb { print NR "\t" $0 }' "$top/$d" >"$tmp/lines"
	[ -s "$tmp/lines" ] || fail "$d has no sh block"
	n0=${#cmds[@]}
	acc=
	while IFS=$'\t' read -r nr text; do
		if [ -z "$acc" ]; then
			[[ $text =~ ^[[:space:]]*(#.*)?$ ]] && continue
			start=$nr
			acc=$text
		else
			acc+=$'\n'$text
		fi
		[[ $acc == *\\ ]] && continue
		bash -n <<<"$acc" 2>/dev/null || continue
		cmds+=("$acc")
		starts+=("$d:$start")
		acc=
	done <"$tmp/lines"
	[ -z "$acc" ] || fail "$d line $start: a command that never ends: $acc"
	[ "${#cmds[@]}" -gt "$n0" ] || fail "no command line in $d"
	echo "$d: $((${#cmds[@]} - n0)) command lines"
done
[ "${#cmds[@]}" -gt 50 ] || fail "only ${#cmds[@]} commands found in ${docs[*]}"

ran=0
skipped=()
t_all=$SECONDS
for i in "${!cmds[@]}"; do
	cmd=${cmds[$i]}
	where=${starts[$i]}
	first=${cmd%%[[:space:]]*}
	if [[ $cmd =~ \(needs\ (a\ network|hardware) ]]; then
		skipped+=("$where (needs ${BASH_REMATCH[1]})")
		continue
	fi
	if [ "$first" = make ] || [ "$first" = git ]; then
		skipped+=("$where ($first: the build, done before the tests)")
		continue
	fi
	expect=0
	[[ $cmd =~ \(exits\ ([0-9]+)\) ]] && expect=${BASH_REMATCH[1]}
	log=$tmp/logs/$i
	printf '%s\n' "$where" "$cmd" >"$log.cmd"
	t0=$SECONDS
	timeout -k 5 "$line_limit" bash -o pipefail -c "set -e
$cmd" </dev/null >"$log.out" 2>"$log.err"
	rc=$?
	if [ "$rc" != "$expect" ]; then
		[ "$rc" = 124 ] && rc="$rc (killed after ${line_limit}s)"
		echo "--- stderr:" >&2
		tail -n 15 "$log.err" >&2
		fail "$where: '$cmd' exited $rc, not $expect"
	fi
	ran=$((ran + 1))
	echo "ok $where ($((SECONDS - t0)) s): $(head -n 1 <<<"$cmd" | cut -c1-100)"
done
echo "tour: $ran command lines as written, ${#skipped[@]} skipped, $((SECONDS - t_all)) s"
for s in "${skipped[@]}"; do echo "  skipped $s"; done

# The README's library example (hello.c, built by its own lines above).
if [ -f hello.c ]; then
	[ -x hello ] || fail "the tour did not build ./hello from hello.c"
	out=$(./hello 2>&1) || fail "./hello: exit $?: $out"
	[ "$out" = "read 1 record(s)" ] || fail "./hello: '$out'"
	echo "hello.c: read 1 record(s)"
fi
# The named-ring example (ring.c, saved from docs/tour.md and built by
# its own lines above) again: twice in a row, each reading back its record
# and leaving nothing behind; then after a run killed before it removed its
# ring (the ring of a process that is gone is replaced).
[ -f ring.c ] || { echo "readme_tour: ok (no ring.c in ${docs[*]})"; exit 0; }
[ -x ring ] || fail "the tour did not build ./ring from ring.c"
for run in 1 2; do
	out=$(./ring 2>&1) || fail "./ring, run $run: exit $?: $out"
	[ "$out" = "read 1 record(s)" ] || fail "./ring, run $run: '$out'"
done
[ -e /dev/shm/my.ring ] && fail "./ring left /dev/shm/my.ring behind"
sed 's|perfring_ring_remove(opts.path);|/* not removed */|' ring.c >stale.c
grep -q 'not removed' stale.c || fail "ring.c has no perfring_ring_remove(opts.path) line"
cc -std=c11 -Wall -Werror -o stale stale.c $(PKG_CONFIG_PATH="$build" pkg-config --cflags --libs perfring) ||
	fail "building ring.c without its remove"
./stale >/dev/null 2>&1 || fail "the stale-making copy failed"
[ -e /dev/shm/my.ring ] && [ -p /dev/shm/my.ring.wake ] || fail "the copy left no ring behind"
out=$(./ring 2>&1) || fail "./ring over a stale ring of a dead process: exit $?: $out"
[ "$out" = "read 1 record(s)" ] || fail "./ring over a stale ring: '$out'"
# A ring held by a live process: refused, the message naming what to remove.
sed 's|perfring_ring_remove(opts.path);|pause();|; s|#include <stdio.h>|#include <stdio.h>\n#include <unistd.h>|' ring.c >hold.c
cc -std=c11 -Wall -Werror -o hold hold.c $(PKG_CONFIG_PATH="$build" pkg-config --cflags --libs perfring) ||
	fail "building ring.c holding its ring"
./hold >/dev/null 2>&1 &
hold=$!
wait_until "$WAIT_S" test -p /dev/shm/my.ring.wake || fail "the holding copy made no ring"
out=$(./ring 2>&1) && fail "./ring over a live ring: exit 0: $out"
grep -q 'remove /dev/shm/my.ring and /dev/shm/my.ring.wake' <<<"$out" || fail "./ring over a live ring: $out"
kill "$hold"
wait "$hold" 2>/dev/null
echo "ring.c: twice in a row, over a dead process's ring; a live one refused with what to remove"
echo "readme_tour: ok"
