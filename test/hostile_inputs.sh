#!/usr/bin/env bash
# Nothing a user can name makes perfring hang or act for them (each case
# failed before its fix):
#  1. a recorded object's path that is a FIFO (or a symlink to one): script,
#     report, export (folded, pprof), script's srcline return, warn once
#     naming the path; root's `top -a` and `record -a --pprof` survive user
#     nobody swapping the binary of a program it runs for a FIFO;
#  2. --control: 20000 unread acks do not block the recorder; a "stop"
#     across byte 256 of one write is a stop; fd:N on a pipe whose writer
#     has closed costs no CPU; a regular file, /dev/zero or a symlink as a
#     FIFO is refused;
#  3. a setuid-root program linking libperfring, run by nobody with
#     PERFRING_SESSION pointing into a root-only directory, creates nothing
#     there (the environment is ignored under AT_SECURE);
#  4. events too large for a ring are counted as lost, with their cause,
#     by the program and in the recorder's summary and the file;
#  5. --max-size keeps the data section within the limit; a damaged
#     optional feature section (hostname, cpu_topology, build_id) is a
#     warning, exit 0, output complete; a sample whose raw data does not fit
#     is skipped and counted, the rest read.
# Runs as root (setuid, nobody, top -a); skips (77) only if the kernel
# refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
work=${WORKLOADS:-build/workloads}
apps=${TEST_APPS:-build/apps}
make_tmp
bg=()
cleanup() {
	for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
}
need_cmd perf linux-perf
[ "$(id -u)" = 0 ] || fail "runs as root (make check does): setuid and nobody cases"
cli=$(realpath "$cli")
work=$(realpath "$work")
apptrace=$(realpath "$apps/apptrace")
need_perf_events
chmod 755 "$tmp"
cd "$tmp" || exit 1
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

# run_bounded SECS NAME CMD...: CMD must end within SECS (else it hung).
run_bounded() {
	local secs=$1 name=$2
	shift 2
	timeout -k 5 "$secs" "$@" >"$name.out" 2>"$name.err"
	local rc=$?
	[ $rc = 124 ] || [ $rc = 137 ] && fail "$name: still running after ${secs}s (hung)"
	return $rc
}

# 1. Object paths that are FIFOs.
cp "$work/hot" prog
perf record -q --no-buildid -g -F 2000 -o fifo.data -- ./prog 0.3 >/dev/null 2>&1 ||
	fail "perf record of the workload failed"
mv prog prog.real
for shape in fifo symlink; do
	rm -f prog target.fifo
	if [ $shape = fifo ]; then
		mkfifo prog
	else
		mkfifo target.fifo
		ln -s target.fifo prog
	fi
	for c in "script" "report --stdio" "export -f folded -o /dev/null" \
		"export -f pprof -o $tmp/p.pb.gz" "script -F ip,sym,srcline"; do
		name=$shape-${c%% *}
		run_bounded 60 "$name" "$cli" $c -i fifo.data ||
			fail "$shape: $c exited $?: $(head -3 "$name.err")"
		n=$(grep -c "$tmp/prog is a FIFO, not a regular file" "$name.err")
		[ "$n" = 1 ] || fail "$shape: $c warned $n times about the FIFO: $(head -3 "$name.err")"
	done
done
echo "1a: script, report, export folded/pprof, srcline: a FIFO (and a symlink to one) where the binary was: exit 0, one warning each"

# Root's top -a and record -a --pprof beside nobody's program that turns
# its own binary into a FIFO once running (its MMAP names the FIFO).
mkdir nob && chown nobody nob
# perf_fds PID: PID's child (the recorder under timeout) has its events open.
perf_fds() {
	local c
	for c in $(pgrep -P "$1"); do
		ls -l "/proc/$c/fd" 2>/dev/null | grep -q perf_event && return 0
	done
	return 1
}
# run_beside_swap NAME CMD...: CMD runs as root; once its events are open,
# nobody's program starts and turns its binary into a FIFO.
run_beside_swap() {
	local name=$1 rec rc
	shift
	rm -f nob/swap.ready nob/swap.old nob/swap
	cp "$work/fifoswap" nob/swap && chown nobody nob/swap
	timeout -k 5 120 "$@" >"$name.out" 2>"$name.err" &
	rec=$!
	bg+=($rec)
	wait_until "$WAIT_S" perf_fds $rec || fail "$name: its events never opened: $(head -3 "$name.err")"
	# top enables its events once /proc is read: after its first table
	[ "$name" = top ] && { wait_until "$WAIT_S" grep -q PerfTop top.out || fail "top: no first table"; }
	as_nobody "$tmp/nob/swap" "$tmp/nob/swap" 3 &
	bg+=($!)
	wait_until "$WAIT_S" test -e nob/swap.ready || fail "nobody's program did not start"
	wait $rec
	rc=$?
	[ $rc = 124 ] || [ $rc = 137 ] && fail "$name: hung (killed after 120 s)"
	[ $rc = 0 ] || fail "$name: exit $rc: $(tail -3 "$name.err")"
	grep -q "$tmp/nob/swap is a FIFO" "$name.err" || fail "$name: no warning naming the FIFO: $(head -3 "$name.err")"
}
run_beside_swap top "$cli" top -a -F 499 -d 0.5 --iterations 8 -E 50
grep -q spin_here top.out && fail "top -a: resolved a symbol in the FIFO"
run_beside_swap recpprof "$cli" record -a -F 499 -o rp.data --pprof "$tmp/rp.pb.gz" -- sleep 3
[ -s rp.pb.gz ] || fail "record -a --pprof: no profile"
echo "1b: root's top -a and record -a --pprof beside nobody's binary turned FIFO: finished, the FIFO named"

# 2. --control.
mkfifo ctl ack
"$cli" record -e cpu-clock -F 100 -o c1.data --control fifo:ctl,ack -- sleep 60 >c1.out 2>c1.err &
rec=$!
bg+=($rec)
python3 - <<'EOF' || fail "--control: could not write 20000 pings"
import os
fd = os.open('ctl', os.O_WRONLY)
for i in range(20000):
    os.write(fd, b'ping\n')
os.write(fd, b'stop\n')
EOF
wait_until "$WAIT_S" sh -c "! kill -0 $rec 2>/dev/null" || fail "--control: blocked with 20000 unread acks"
wait $rec || fail "--control unread acks: exit $?: $(tail -3 c1.err)"
grep -q "acknowledgement not written" c1.err || fail "--control: dropped acks not said: $(cat c1.err)"

"$cli" record -e cpu-clock -F 100 -o c2.data --control fifo:ctl -- sleep 60 >c2.out 2>c2.err &
rec=$!
bg+=($rec)
# 51 pings are 255 bytes: "stop\n" spans bytes 255..259
python3 -c "
import os
fd = os.open('ctl', os.O_WRONLY)
os.write(fd, b'ping\n' * 51 + b'stop\n')
" || fail "--control: cannot write"
wait_until "$WAIT_S" sh -c "! kill -0 $rec 2>/dev/null" || fail "--control: a stop across byte 256 was lost"
wait $rec || fail "--control stop: exit $?"

# fd:N whose writer closed: epoll reports the hang-up; not spinning on it.
exec 3< <(echo ping)
sleep 0.1
/usr/bin/time -f "%U %S" -o c3.time "$cli" record -e cpu-clock -F 100 -o c3.data --control fd:3 -- sleep 3 >c3.out 2>c3.err ||
	fail "--control fd: exit $?: $(tail -3 c3.err)"
exec 3<&-
cpu=$(awk '{ print $1 + $2 }' c3.time)
awk -v c="$cpu" 'BEGIN { exit !(c < 0.5) }' || fail "--control fd:N hung up: ${cpu}s of CPU in a 3 s recording (spinning)"

touch reg
ln -s ctl lnk
for bad in reg:"a regular file" /dev/zero:"a character device" lnk:"a symbolic link"; do
	path=${bad%%:*} want=${bad#*:}
	"$cli" record -e cpu-clock -o c4.data --control "fifo:$path" -- true >c4.out 2>c4.err
	rc=$?
	[ $rc = 2 ] || fail "--control fifo:$path: exit $rc, want 2 (refused)"
	grep -q "$want" c4.err || fail "--control fifo:$path: message does not say $want: $(cat c4.err)"
done
"$cli" record -e cpu-clock -o c4.data --control fd:0 -- true </dev/zero >c4.out 2>c4.err &&
	fail "--control fd:0 on /dev/zero accepted"
grep -q "not a FIFO, a pipe or a socket" c4.err || fail "--control fd:0 on /dev/zero: $(cat c4.err)"
echo "2: --control: 20000 unread acks, stop across byte 256, fd hang-up (${cpu}s CPU), bad CTL refused"

# 3. A setuid-root program run by nobody ignores PERFRING_*.
mkdir rootonly && chmod 755 rootonly
cp "$apptrace" suid && chown root:root suid && chmod 4755 suid
as_nobody env PERFRING_SESSION="$tmp/rootonly" PERFRING_RING_SIZE=64M PERFRING_MODE=shared \
	"$tmp/suid" 1 100 >suid.out 2>suid.err || fail "setuid program failed: $(cat suid.err)"
grep -q "^emitted 0 " suid.out || fail "setuid program traced itself: $(cat suid.out)"
[ -z "$(ls -A rootonly)" ] || fail "setuid program run by nobody created in a root-only directory: $(ls -A rootonly)"
# The same program not setuid (AT_SECURE off) does trace: the test can fail.
cp "$apptrace" plain && chmod 755 plain
PERFRING_SESSION="$tmp/rootonly" ./plain 1 100 >plain.out 2>&1
[ -n "$(ls -A rootonly)" ] || fail "control case: the non-setuid program made no file in its session"
echo "3: setuid-root program run by nobody: PERFRING_SESSION/RING_SIZE/MODE ignored, nothing created"

# 4. Events too large for a ring.
"$cli" record -e dummy -o big.data -- "$apptrace" 1 4 --oversize 7 >big.out 2>big.err ||
	fail "oversize: exit $?: $(tail -3 big.err)"
read -r _ emitted _ lost _ _ _ too_large <big.out
[ "$lost" = 7 ] && [ "$too_large" = 7 ] || fail "oversize: the program counts lost $lost too_large $too_large, want 7 and 7"
grep -q "application: $emitted events of .*, 7 lost (7 of them too large for a ring record)" big.err ||
	fail "oversize: the summary does not say 7 too large: $(cat big.err)"
grep -q "dropped 7 events larger than a ring record" big.err || fail "oversize: no warning"
"$cli" stats -i big.data >big.stats 2>&1 || fail "oversize: stats failed"
grep -Eq "lost events: +7 " big.stats || fail "oversize: the file's LOST records do not hold 7: $(cat big.stats)"
n=$(perf script -i big.data 2>/dev/null | grep -c apptest:)
[ "$n" = "$emitted" ] || fail "oversize: perf script shows $n events, the program wrote $emitted"
echo "4: 7 oversized events: -E2BIG, lost 7 (7 too large) in the program, the summary and the file"

# 5a. --max-size within the limit, app events and kernel events.
"$cli" record -e sched:sched_switch -a --max-size 256K -o ms.data -- "$apptrace" 2 200000 >ms.out 2>ms.err ||
	fail "--max-size: exit $?: $(tail -3 ms.err)"
size=$(perf report --header-only -i ms.data 2>/dev/null | awk '/# data size/ { print $5 }')
[ -n "$size" ] && [ "$size" -le 262144 ] || fail "--max-size 256K: data section of $size bytes"
grep -q "max-size limit reached (256 KB), recording stopped" ms.err || fail "--max-size: stopping not said: $(cat ms.err)"
perf script -i ms.data >/dev/null 2>ms.perf || fail "--max-size: perf script: $(head -3 ms.perf)"
echo "5a: --max-size 256K: $size bytes of data"

# 5b. Damaged optional feature sections, in perf's own file.
cat >featcut.py <<'EOF'
import struct, sys
# featcut.py IN OUT FEAT: the feature's section moved past the end
src, dst, fid = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, 'rb').read())
data_off, data_size = struct.unpack_from('<QQ', b, 40)
bits = 0
for i in range(4):
    bits |= struct.unpack_from('<Q', b, 72 + 8 * i)[0] << (64 * i)
if not bits >> fid & 1:
    sys.exit('feature %d not in the file' % fid)
k = bin(bits & ((1 << fid) - 1)).count('1')
at = data_off + data_size + 16 * k
struct.pack_into('<Q', b, at, len(b) + 4096)
open(dst, 'wb').write(b)
EOF
cp "$work/hot" hotw
perf record -q -g -F 1000 -o pf.data -- ./hotw 0.2 >/dev/null 2>&1 || fail "perf record failed"
"$cli" script -i pf.data >pf.want 2>pf.err || fail "script of the intact file failed"
for feat in 3:hostname 13:cpu_topology 2:build_id; do
	id=${feat%%:*} name=${feat#*:}
	python3 featcut.py pf.data pf$id.data "$id" || fail "cannot damage $name"
	for c in script "report --stdio" "export -f folded -o /dev/null"; do
		"$cli" $c -i pf$id.data >pf$id.out 2>pf$id.err || fail "damaged $name: $c exit $?: $(head -2 pf$id.err)"
		grep -q "feature $name .* past the end of the file.*ignored" pf$id.err ||
			fail "damaged $name: $c: no warning naming it: $(head -2 pf$id.err)"
	done
	"$cli" script -i pf$id.data 2>/dev/null | cmp -s - pf.want || fail "damaged $name: script's output differs from the intact file's"
done
echo "5b: hostname, cpu_topology, build_id sections past the end: warned, exit 0, script output complete"

# 5c. A sample whose raw data does not fit.
cat >rawcut.py <<'EOF'
import struct, sys
# rawcut.py IN OUT N DELTA: the Nth sample's raw size + DELTA
src, dst, nth, delta = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
b = bytearray(open(src, 'rb').read())
attr_off = struct.unpack_from('<Q', b, 24)[0]
data_off, data_size = struct.unpack_from('<QQ', b, 40)
st = struct.unpack_from('<Q', b, attr_off + 24)[0]
assert st & (1 << 10) and not st & (1 << 4) and not st & (1 << 5)
before = [16, 0, 1, 2, 3, 6, 9, 7, 8]  # u64 fields before READ/CALLCHAIN/RAW
off, k = data_off, 0
while off < data_off + data_size:
    t, misc, size = struct.unpack_from('<IHH', b, off)
    if t == 9:
        if k == nth:
            p = off + 8 + 8 * sum(1 for bit in before if st >> bit & 1)
            raw = struct.unpack_from('<I', b, p)[0]
            struct.pack_into('<I', b, p, raw + delta)
            print(off)
            break
        k += 1
    off += size
open(dst, 'wb').write(b)
EOF
"$cli" record -e sched:sched_switch -a -o tp.data -- sleep 0.3 >/dev/null 2>&1 || fail "record sched_switch failed"
all=$("$cli" script -i tp.data 2>/dev/null | wc -l)
[ "$all" -ge 6 ] || fail "too few sched_switch events ($all) to damage one"
for delta in 4096 -1; do
	off=$(python3 rawcut.py tp.data tpbad.data 3 $delta) || fail "cannot damage a raw size"
	"$cli" script -i tpbad.data >tpbad.out 2>tpbad.err || fail "raw size $delta: script exit $?: $(head -2 tpbad.err)"
	n=$(wc -l <tpbad.out)
	[ "$n" = $((all - 1)) ] || fail "raw size $delta: $n lines, want $((all - 1)) (all but the bad sample)"
	grep -q "offset $(printf '%#x' "$off"): PERF_RECORD_SAMPLE.*skipped" tpbad.err ||
		fail "raw size $delta: no warning naming offset $off: $(cat tpbad.err)"
	"$cli" stats -i tpbad.data >tpbad.stats 2>/dev/null
	grep -Eq "bad samples: +1 " tpbad.stats || fail "raw size $delta: stats do not count it: $(cat tpbad.stats)"
done
echo "5c: a sample whose raw data does not fit: skipped, named, counted; the other $((all - 1)) read"
