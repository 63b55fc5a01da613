#!/usr/bin/env bash
# The recorder survives any traced program and any session directory another
# user prepared, with real processes (test/apps/apphostile.c misbehaves on
# purpose) and perf as the oracle:
#  1. a program truncates its ring (to 4096 bytes, then to 0) while
#     perfring record -a -e sched:sched_switch runs: exit 0, perf reads the
#     file, sched_switch and the healthy thread's events are all there, the
#     ring is named in one warning and its unread bytes are counted;
#  2. record -p against a target (running as nobody) whose PERFRING_SESSION
#     is a symlink, a root-owned directory, a directory open to others, or a
#     directory with a planted symlink ring, FIFO ring, device ring and
#     recorder.pid symlink: refused or skipped with a message, never blocks,
#     nothing followed, written or removed there;
#  3. more rings than --app-max-rings, or than the descriptors left: the
#     summary names the unread rings and never says "0 lost";
#  4. a LOST record of 2^64-1: shown as the program's claim, not as loss;
#  5. a program scribbling over its ring for 2 s: a handful of warning lines
#     for that ring at most, the other thread's events intact.
# Runs as root (the machine's tests do) for the -p cases; skips those
# otherwise.  Skips (77) only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
make_tmp
shared=""
selfpid=""
bg=()
cleanup() {
	for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$shared" ] && rm -rf "$shared"
	[ -n "$selfpid" ] && rm -rf "/dev/shm/perfring-$(id -u)/$selfpid" "/tmp/perfring-$(id -u)/$selfpid"
}
need_cmd perf linux-perf
cli=$(realpath "$cli")
hostile=$(realpath "$apps/apphostile")
apptrace=$(realpath "$apps/apptrace")
[ -x "$hostile" ] || fail "$hostile is missing (make check builds it)"
need_perf_events
cd "$tmp" || exit 1

# thread N's hostile:tick events in a perf script listing
ticks_of() { grep -c "hostile:tick:.*thread=$2\$" "$1"; }

# 1. Truncation while recording, next to the kernel's events.
for len in 4096 0; do
	timeout 120 "$cli" record -a -e sched:sched_switch -o trunc$len.data -- \
		"$hostile" truncate $len >trunc$len.out 2>trunc$len.err
	rc=$?
	[ $rc = 0 ] || fail "truncate $len: recorder exit $rc: $(tail -5 trunc$len.err)"
	perf report --stats -i trunc$len.data >stats$len.txt 2>&1 || fail "truncate $len: perf report --stats: $(tail -3 stats$len.txt)"
	grep -q 'sched:sched_switch stats' stats$len.txt || fail "truncate $len: no sched_switch in perf report --stats"
	perf script -i trunc$len.data >trunc$len.txt 2>/dev/null || fail "truncate $len: perf script failed"
	sw=$(grep -c 'sched:sched_switch:' trunc$len.txt)
	[ "$sw" -gt 0 ] || fail "truncate $len: no sched_switch events"
	want2=$(awk '$2 == 2 { print $4 }' trunc$len.out)
	got2=$(ticks_of trunc$len.txt 2)
	[ "$got2" = "$want2" ] || fail "truncate $len: the healthy thread emitted $want2, the file has $got2"
	want1=$(awk '$2 == 1 { print $4 }' trunc$len.out)
	got1=$(ticks_of trunc$len.txt 1)
	[ "$got1" -le "$want1" ] || fail "truncate $len: more events than emitted"
	n=$(grep -c 'truncated its ring' trunc$len.err)
	[ "$n" = 1 ] || fail "truncate $len: $n warnings about the ring: $(cat trunc$len.err)"
	grep 'truncated its ring' trunc$len.err | grep -q "program [0-9]* (apphostile).*/[0-9]*-[0-9]*\.ring" ||
		fail "truncate $len: the warning does not name the program and ring: $(grep truncated trunc$len.err)"
	grep -q '1 rings dropped after their program truncated them' trunc$len.err ||
		fail "truncate $len: summary: $(cat trunc$len.err)"
	grep 'application:' trunc$len.err | grep -q ' 0 lost,' && fail "truncate $len: summary says 0 lost: $(grep application: trunc$len.err)"
	unread=$(sed -n 's/.* \([0-9]*\) bytes it held unread.*/\1/p' trunc$len.err)
	# 4096: the control page survives and tells where the program got
	# to; every tick it wrote is either in the file or in those bytes.
	if [ $len = 4096 ]; then
		[ $(((want1 - got1) * 40)) = "$unread" ] ||
			fail "truncate $len: $((want1 - got1)) ticks (40 bytes each) missing, $unread bytes counted unread"
	fi
	echo "1 ($len): recorder exit 0, $sw sched_switch, healthy thread $got2/$want2, truncated ring $got1/$want1 ($unread bytes counted unread)"
done

# 2. Session directories a target running as nobody points -p at.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	nob=$(id -u nobody)
	nog=$(id -g nobody)
	# Under /tmp (mktemp's 0700 directory is closed to nobody).
	shared=$(mktemp -d /tmp/perfring-trust-XXXXXX)
	chmod 0711 "$shared"
	as_nobody() { setpriv --reuid="$nob" --regid="$nog" --clear-groups "$@"; }
	# Starts "env PERFRING_SESSION=$1 <cmd...>" as nobody in the background.
	target() {
		local dir=$1
		shift
		env PERFRING_SESSION="$dir" setpriv --reuid="$nob" --regid="$nog" --clear-groups "$@" &
		tpid=$!
		bg+=("$tpid")
		# Until env and setpriv have exec'd the command, the process
		# is root's: -p must meet the nobody process it is about.
		wait_until "$WAIT_S" has_exec "$tpid" "$(basename "$1")" ||
			fail "target $*: never started"
	}
	# record -p for a moment; must end by itself, exit 0.
	rec_p() {
		local name=$1
		shift
		timeout 60 "$cli" record -p "$tpid" -e sched:sched_switch -o "$name.data" --duration 0.5 "$@" >"$name.out" 2>"$name.err"
		rc=$?
		[ $rc = 124 ] && fail "$name: the recorder hung"
		[ $rc = 0 ] || fail "$name: recorder exit $rc: $(cat "$name.err")"
	}
	snapshot() { (cd "$1" && find . -printf '%p %y %U %m %s %l\n' | sort && cat victim 2>/dev/null); }

	# a) PERFRING_SESSION is a symlink to a directory of nobody's.
	mkdir "$shared/real" && chown "$nob:$nog" "$shared/real" && chmod 0700 "$shared/real"
	ln -s "$shared/real" "$shared/link"
	target "$shared/link" sleep 30
	rec_p symlink
	grep -q 'refused.*symbolic link' symlink.err || fail "symlinked session: $(cat symlink.err)"
	[ -z "$(ls -A "$shared/real")" ] || fail "symlinked session: the recorder wrote into it: $(ls -A "$shared/real")"
	kill "$tpid"
	echo "2a: a symlinked session directory is refused, nothing written behind it"

	# b) A root-owned directory, the target runs as nobody.
	mkdir -m 0700 "$shared/rootdir"
	echo keep >"$shared/rootdir/victim"
	echo junk >"$shared/rootdir/1-1.ring"
	before=$(snapshot "$shared/rootdir")
	target "$shared/rootdir" sleep 30
	rec_p rootdir
	grep -q 'refused.*not owned by the process' rootdir.err || fail "root-owned session: $(cat rootdir.err)"
	[ "$(snapshot "$shared/rootdir")" = "$before" ] || fail "root-owned session: its files changed"
	kill "$tpid"
	echo "2b: a root-owned session directory of a nobody process is refused and left alone"

	# c) nobody's directory, but open to others.
	mkdir -m 0755 "$shared/open" && chown "$nob:$nog" "$shared/open"
	target "$shared/open" sleep 30
	rec_p open
	grep -q 'refused.*group or others' open.err || fail "0755 session: $(cat open.err)"
	kill "$tpid"
	echo "2c: a session directory open to others is refused"

	# d) nobody's 0700 directory with a traced program in it, and planted
	# things: rings that are a symlink, a FIFO (nobody writes it) and a
	# device, and recorder.pid as a symlink to a file of root's.
	d="$shared/sess"
	mkdir -m 0700 "$d" && chown "$nob:$nog" "$d"
	echo precious >"$shared/victim"
	ln -s "$shared/victim" "$d/1-1.ring"
	mkfifo "$d/1-2.ring" "$d/1-2.ring.wake"
	mknod "$d/1-3.ring" c 1 3
	ln -s "$shared/victim" "$d/recorder.pid"
	chown -h "$nob:$nog" "$d"/*
	target "$d" "$apptrace" 1 1 --forever --rate 20000
	for _ in $(seq 200); do [ -e "$d/$tpid.events" ] && break; sleep 0.05; done
	rec_p planted
	[ "$(cat "$shared/victim")" = precious ] || fail "planted: the victim file was written"
	[ -L "$d/recorder.pid" ] && [ -L "$d/1-1.ring" ] && [ -p "$d/1-2.ring" ] && [ -c "$d/1-3.ring" ] ||
		fail "planted: a planted file was removed or replaced: $(ls -la "$d")"
	grep -q '1-1.ring not attached: .*symbolic link' planted.err || fail "planted: symlink ring not reported: $(cat planted.err)"
	grep -q '1-2.ring not attached: .*not a regular file' planted.err || fail "planted: FIFO ring not reported: $(cat planted.err)"
	grep -q '1-3.ring not attached: .*not a regular file' planted.err || fail "planted: device ring not reported: $(cat planted.err)"
	grep -q 'recorder.pid is there and not ours' planted.err || fail "planted: recorder.pid symlink not reported: $(cat planted.err)"
	n=$(perf script -i planted.data 2>/dev/null | grep -c 'apptest:tick:')
	[ "$n" -gt 0 ] || fail "planted: the real program's events are missing"
	grep -q '3 files named like rings refused' planted.err || fail "planted: summary: $(cat planted.err)"
	ls "$d"/"$tpid"-*.ring >/dev/null 2>&1 || fail "planted: the program's own ring was removed"
	kill "$tpid"
	echo "2d: planted symlink/FIFO/device rings and recorder.pid refused; $n events of the real program recorded"
else
	echo "2: skipped (needs root, setpriv and a nobody user)"
fi

# 3. More rings than the recorder may attach: -p with the threads held.
PERFRING_SESSION=self "$hostile" threads 24 500 >threads.out &
tpid=$!
selfpid=$tpid
bg+=("$tpid")
for _ in $(seq 400); do grep -q ready threads.out && break; sleep 0.05; done
grep -q ready threads.out || fail "the 24 threads did not get ready"
timeout 60 "$cli" record -p "$tpid" -o cap.data --duration 0.5 --app-max-rings 8 2>cap.err ||
	fail "cap: recorder failed: $(cat cap.err)"
grep -q '16 rings never read, their events all lost (16 over --app-max-rings' cap.err || fail "cap: summary: $(cat cap.err)"
grep 'application:' cap.err | grep -q ' 0 lost,' && fail "cap: the summary says 0 lost: $(grep application: cap.err)"
n=$(perf script -i cap.data 2>/dev/null | grep -c 'hostile:tick:')
[ "$n" = 4000 ] || fail "cap: $n ticks recorded from the 8 attached rings, not 4000"
# ... and with the descriptors a hard limit of 96 leaves (2 per ring, 32
# kept for the recorder, 25 for the per-thread cpu-clock events).
prlimit --nofile=96:96 timeout 60 "$cli" record -p "$tpid" --per-thread -o nofd.data --duration 0.5 2>nofd.err ||
	fail "nofd: recorder failed: $(cat nofd.err)"
grep -q 'rings never read, their events all lost (0 over --app-max-rings, [1-9][0-9]* for want of file descriptors' nofd.err ||
	fail "nofd: summary: $(cat nofd.err)"
grep 'application:' nofd.err | grep -q ' 0 lost,' && fail "nofd: the summary says 0 lost: $(grep application: nofd.err)"
kill "$tpid"
echo "3: over the ring limit and out of descriptors: the unread rings are reported lost"

# 4. A LOST record claiming 2^64-1.
timeout 60 "$cli" record -o lostmax.data -- "$hostile" lostmax >lostmax.out 2>lostmax.err || fail "lostmax: $(cat lostmax.err)"
grep -q 'the programs claim 18446744073709551615 (implausible)' lostmax.err || fail "lostmax: summary: $(cat lostmax.err)"
grep -q '18446744073709551615 lost' lostmax.err && fail "lostmax: printed as the loss: $(cat lostmax.err)"
grep -q 'a claim, not a measurement' lostmax.err || fail "lostmax: no warning: $(cat lostmax.err)"
echo "4: a LOST record of 2^64-1 is shown as the program's implausible claim"

# 5. A program scribbling over its ring: a handful of lines, no more.
timeout 120 "$cli" record -a -e sched:sched_switch -o scribble.data -- "$hostile" scribble 2 >scribble.out 2>scribble.err ||
	fail "scribble: $(tail -5 scribble.err)"
lines=$(grep -c 'warning' scribble.err)
[ "$lines" -le 8 ] || fail "scribble: $lines warning lines: $(head -20 scribble.err)"
perf script -i scribble.data >scribble.txt 2>/dev/null || fail "scribble: perf script"
want2=$(awk '$2 == 2 { print $4 }' scribble.out)
got2=$(ticks_of scribble.txt 2)
[ "$got2" = "$want2" ] || fail "scribble: the healthy thread emitted $want2, the file has $got2"
grep -q 'sched:sched_switch:' scribble.txt || fail "scribble: no sched_switch"
grep -q 'damaged records or ranges' scribble.err || fail "scribble: damage not in the summary: $(cat scribble.err)"
echo "5: scribbling for 2 s: $lines warning lines, healthy thread $got2/$want2"
echo "app_trust: ok"
