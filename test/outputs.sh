#!/usr/bin/env bash
# Output files, a full disk, and what killed recorders leave behind.
#
# Every file perfring writes (perf.data of record and record --replay-cs,
# trace.dat of record --tracefs, export, inject) is a new file, mode 0600
# whatever the umask, never written through a symbolic link nor over an
# existing file in place (a hard link or a prepared file stays as it was);
# a record output's predecessor is kept as .old, perf's way.  Oracles: the
# link target's bytes and mode, stat, and perf report / trace-cmd report
# on what was written.  A record --tracefs that fills a tmpfs of its own
# keeps what it wrote, readable, and says what is and is not in it.  Then SIGHUP ends a perf recording and an AUX
# recording cleanly, and the session directories of killed recorders are
# reclaimed by the next recording (said on stderr) while those of live
# recorders, live programs and other users stay.
# Skips (77) only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
data=${CS_DATA:-test/data}
make_tmp
bg=()
mounted=
cleanup() {
	for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$mounted" ] && umount "$mounted"
}
need_cmd perf linux-perf
need_cmd trace-cmd trace-cmd
cli=$(realpath "$cli")
app=$(realpath "$apps/apptrace")
data=$(realpath "$data")
[ -x "$app" ] || fail "$app is missing (make check builds it)"
need_perf_events
cd "$tmp" || exit 1
umask 022 # outputs are 0600 all the same
T=/sys/kernel/tracing

# The file a link points to must come out as it went in.
printf 'precious\n' >target
chmod 0644 target
sha=$(sha256sum <target)
untouched() {
	[ "$(sha256sum <target)" = "$sha" ] || fail "$1: the link's target was written"
	[ "$(stat -c %a target)" = 644 ] || fail "$1: the link's target changed mode"
}
mode600() { [ "$(stat -c %a "$1")" = 600 ] || fail "$2: $1 has mode $(stat -c %a "$1"), not 600"; }
# wait_for CMD...: until CMD succeeds (20 s at most).
wait_for() {
	for _ in $(seq 400); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# refused NAME OUT CMD...: CMD writing OUT (a link to target) is refused
# with a message naming OUT, target untouched, the link still a link.
refused() {
	local name=$1 out=$2
	shift 2
	"$@" >"$name.out" 2>"$name.err" && fail "$name: writing through the link $out succeeded"
	grep -q "$out is a symbolic link: refusing to write through it" "$name.err" ||
		fail "$name: no clear refusal: $(cat "$name.err")"
	untouched "$name"
	[ -L "$out" ] || fail "$name: the link $out is gone"
	[ -e "$out.old" ] && fail "$name: made $out.old"
	return 0
}

# 1. perf.data (perfring record).
ln -s target link
refused record link "$cli" record -o link -- true
ln -s nowhere dangling
refused record-dangling dangling "$cli" record -o dangling -- true
[ -e nowhere ] && fail "record: created the dangling link's target"
"$cli" record -o p.data -- true 2>/dev/null || fail "record p.data"
mode600 p.data record
cp p.data first.data
ino=$(stat -c %i p.data)
"$cli" -v record -o p.data -- true 2>p.err || fail "record p.data again: $(cat p.err)"
grep -q 'info: kept the previous p.data as p.data.old' p.err || fail "record: no word of p.data.old: $(cat p.err)"
cmp -s first.data p.data.old || fail "record: p.data.old is not the previous file"
[ "$(stat -c %i p.data)" != "$ino" ] || fail "record: p.data was written in place"
mode600 p.data record
perf report --stats -i p.data >/dev/null 2>perf.err || fail "perf report on the new p.data: $(cat perf.err)"
grep -qi 'warning\|error' perf.err && fail "perf report warns: $(cat perf.err)"
# A hard link to a file elsewhere: that file is not written.
cp target other
ln other hard.data
"$cli" record -o hard.data -- true 2>/dev/null || fail "record over a hard link"
cmp -s target other || fail "record: wrote into the hard-linked file"
cmp -s other hard.data.old || fail "record: hard.data.old is not the old link"
mkdir dir.data
"$cli" record -o dir.data -- true 2>rec.err && fail "record into a directory succeeded"
grep -q 'dir.data is a directory' rec.err || fail "record -o dir: $(cat rec.err)"
mkfifo fifo.data
timeout 20 "$cli" record -o fifo.data -- true 2>rec.err && fail "record into a FIFO succeeded"
grep -q 'fifo.data is a FIFO: this output must be a regular file' rec.err || fail "record -o fifo: $(cat rec.err)"
echo "record: links, directories, FIFOs refused; p.data.old kept, new file 0600; hard link left alone"

# 2. trace.dat (record --tracefs).
if [ -w $T/instances ]; then
	# in the background: its pid names its instance
	refused tracefs link sh -c '"$0" record --tracefs -e sched:sched_switch -o link -- true & echo $! >tracefs.pid; wait $!' "$cli"
	ls $T/instances | grep -qE "^perfring-$(cat tracefs.pid)-" && fail "tracefs: instance left"
	"$cli" record --tracefs -e sched:sched_switch -a -o t.dat -- true 2>/dev/null || fail "record --tracefs t.dat"
	cp t.dat first.dat
	"$cli" record --tracefs -e sched:sched_switch -a -o t.dat -- true 2>/dev/null || fail "record --tracefs t.dat again"
	mode600 t.dat tracefs
	cmp -s first.dat t.dat.old || fail "tracefs: t.dat.old is not the previous file"
	for f in t.dat t.dat.old; do
		trace-cmd report -i $f >/dev/null 2>tc.err || fail "trace-cmd report $f: $(cat tc.err)"
		[ -s tc.err ] && fail "trace-cmd report $f warns: $(cat tc.err)"
	done
	echo "record --tracefs: link refused, t.dat.old kept, new file 0600, both read by trace-cmd"

	# A full disk: recording stops, the file keeps every page written
	# before (cut at the last complete one, metadata first), trace-cmd
	# report and perfring script read it, and the summary's figures are
	# the file's.  A tmpfs of our own just larger than the metadata
	# (kallsyms is most of it) fills up with trace_marker lines of one
	# writer pinned to CPU 0.
	mkdir full
	kb=$(($(wc -c </proc/kallsyms) / 1024 + 3072))
	mount -t tmpfs -o size=${kb}k perfring-test-full "$tmp/full" || fail "diskfull: cannot mount a tmpfs"
	mounted=$tmp/full
	timeout 120 "$cli" record --tracefs -e ftrace:print -a -o "$tmp/full/t.dat" -- taskset -c 0 python3 -c '
import os
fd = os.open("/sys/kernel/tracing/trace_marker", os.O_WRONLY)
i = 0
while True:
    os.write(fd, b"perfring-full-%d-%d" % (os.getpid(), i))
    i += 1
' 2>full.err >/dev/null &
	pid=$!
	wait $pid
	rc=$?
	ls $T/instances | grep -qE "^perfring-$pid-" && fail "diskfull: instance left"
	[ $rc = 1 ] || fail "diskfull: exit status $rc, not 1: $(tail -3 full.err)"
	grep -q "writing $tmp/full/t.dat failed (No space left on device): recording stopped" full.err ||
		fail "diskfull: no message naming the file and the error: $(tail -3 full.err)"
	[ -e full/t.dat.old ] && fail "diskfull: made a .old out of nothing"
	# summary FIELD: a key=value of the summary line
	summary() { sed -n "s/.*[[ ]$1=\([0-9]*\).*/\1/p" full.err | tail -1; }
	ev=$(summary events) pages=$(summary pages) ent=$(summary kernel_entries) lost=$(summary lost)
	unsaved=$(sed -n 's/.* \([0-9]*\) events the kernel recorded are not in it.*/\1/p' full.err)
	[ "$ev" -gt 0 ] && [ "$unsaved" -gt 0 ] || fail "diskfull: $ev events kept, $unsaved not written"
	[ $((ev + unsaved + lost)) = "$ent" ] || fail "diskfull: $ev kept + $unsaved not written + $lost lost != $ent kernel entries"
	trace-cmd report -i full/t.dat >tc.txt 2>tc.err || fail "diskfull: trace-cmd report: $(head -3 tc.err)"
	[ -s tc.err ] && fail "diskfull: trace-cmd report warns: $(head -3 tc.err)"
	tc=$(grep -vc -e '^cpus=' -e 'EVENTS DROPPED\]$' tc.txt)
	[ "$tc" = "$ev" ] || fail "diskfull: trace-cmd report shows $tc events, the summary says $ev"
	"$cli" script -i full/t.dat >ours.txt 2>ours.err || fail "diskfull: perfring script: $(cat ours.err)"
	tail -n +2 tc.txt | cmp -s - ours.txt || fail "diskfull: perfring script differs from trace-cmd report"
	"$cli" stats -i full/t.dat >stats.txt || fail "diskfull: perfring stats"
	grep -q "^total: $ev events" stats.txt || fail "diskfull: perfring stats: $(grep total stats.txt)"
	fpages=$(awk '$1 ~ /^[0-9]+$/ && NF == 6 { s += $3 } END { print s + 0 }' stats.txt)
	[ "$fpages" = "$pages" ] || fail "diskfull: the file has $fpages pages, the summary says $pages"
	# The writer's lines are all there from the first, without a hole
	# (in order, from the first, if the kernel dropped some: counted).
	mpid=$(grep -o 'perfring-full-[0-9]*-0$' tc.txt | head -1 | cut -d- -f3)
	grep -o "perfring-full-$mpid-[0-9]*\$" tc.txt | sed 's/.*-//' >seq.txt
	n=$(wc -l <seq.txt)
	if [ "$lost" = 0 ]; then
		[ "$n" -gt 1000 ] && seq 0 $((n - 1)) | cmp -s - seq.txt || fail "diskfull: the writer's $n lines are not 0..$((n - 1)) in order"
	else
		[ "$n" -gt 1000 ] && sort -n -c seq.txt && [ "$(head -1 seq.txt)" = 0 ] || fail "diskfull: the writer's lines are out of order"
	fi
	umount "$tmp/full"
	mounted=
	echo "diskfull: kept $ev events in $pages pages ($n lines 0..$((n - 1))), $unsaved not written, the file reads as the summary says"
else
	echo "record --tracefs: no writable tracefs, not tried"
fi

# 3. export: replaces a file (no .old), sequential outputs may be a FIFO
# of one's own or /dev/null.
refused export link "$cli" export -i p.data -f folded -o link
"$cli" export -i p.data -f chrome -o e.json || fail "export e.json"
cp e.json first.json
echo stale >e.json
chmod 0644 e.json
"$cli" export -i p.data -f chrome -o e.json 2>ex.err || fail "export over e.json: $(cat ex.err)"
cmp -s first.json e.json || fail "export: e.json is not a fresh export"
mode600 e.json export
[ -e e.json.old ] && fail "export: made e.json.old"
"$cli" export -i p.data -f chrome -o /dev/null || fail "export -o /dev/null"
[ -c /dev/null ] || fail "export replaced /dev/null"
mkfifo pipe
cat pipe >from-pipe.json &
reader=$!
timeout 20 "$cli" export -i p.data -f chrome -o pipe || fail "export into a FIFO of ours"
wait $reader
cmp -s first.json from-pipe.json || fail "export: what came through the FIFO differs"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkfifo theirs
	chown nobody theirs
	timeout 20 "$cli" export -i p.data -f chrome -o theirs 2>ex.err && fail "export into another user's FIFO"
	grep -q "theirs is a FIFO of uid $(id -u nobody): refusing to write into it" ex.err || fail "export -o theirs: $(cat ex.err)"
fi
echo "export: link refused, file replaced fresh (0600), /dev/null and our FIFO written, another user's FIFO refused"

# 4. inject and record --replay-cs (AUX).
etm=$data/simpleperf-etm
refused inject link "$cli" inject -i "$etm/perf_etm.data" --symdir "$etm" -o link
"$cli" inject -i "$etm/perf_etm.data" --symdir "$etm" -o i.txt 2>/dev/null || fail "inject"
mode600 i.txt inject
cmp -s "$etm/perf_inject.data" i.txt || fail "inject: output differs from simpleperf's"
snap=$data/opencsd/snapshots/juno_r1_1
refused aux link "$cli" record -q --replay-cs "$snap" -o link
"$cli" record -q --replay-cs "$snap" -o cs.data 2>/dev/null || fail "record --replay-cs"
ino1=$(stat -c %i cs.data)
"$cli" record -q --replay-cs "$snap" --chunk 64K -o cs.data 2>/dev/null || fail "record --replay-cs again"
cp cs.data second.data
[ "$(stat -c %i cs.data.old)" = "$ino1" ] || fail "aux: cs.data.old is not the first file"
# The third recording writes over the pages of the first (the .old that
# goes): same inode, cs.data.old is the second.
"$cli" record -q --replay-cs "$snap" -o cs.data 2>/dev/null || fail "record --replay-cs a third time"
[ "$(stat -c %i cs.data)" = "$ino1" ] || fail "aux: the third file did not reuse the first's pages"
cmp -s second.data cs.data.old || fail "aux: cs.data.old is not the second file"
mode600 cs.data aux
perf report --stats -i cs.data >stats 2>perf.err || fail "perf report --stats cs.data: $(cat perf.err)"
grep -qi 'warning\|error\|failed' perf.err && fail "perf report warns on the rewritten cs.data: $(cat perf.err)"
grep -Eq 'AUXTRACE events: +1 ' stats || fail "aux: the rewritten cs.data has no AUXTRACE"
echo "inject, record --replay-cs: links refused, 0600, .old kept, the .old that goes is written over"

# 5. SIGHUP ends a perf recording and an AUX recording like SIGTERM: exit
# 0, a complete file.  The output exists once the handler does.
"$cli" record -a -e cpu-clock -o hup.data 2>hup.err &
pid=$!
bg+=($pid)
wait_for test -s hup.data || fail "sighup: hup.data not made: $(cat hup.err)"
kill -HUP $pid
wait $pid || fail "sighup: perf recorder exited $? after SIGHUP: $(cat hup.err)"
perf report --stats -i hup.data >/dev/null 2>perf.err || fail "sighup: perf report: $(cat perf.err)"
grep -qi 'warning\|error' perf.err && fail "sighup: perf report warns: $(cat perf.err)"
"$cli" record -q --replay-cs "$snap" --loops 100000 --rate 4M -o auxhup.data 2>hup.err &
pid=$!
bg+=($pid)
wait_for test -s auxhup.data || fail "sighup: auxhup.data not made: $(cat hup.err)"
kill -HUP $pid
wait $pid || fail "sighup: AUX recorder exited $? after SIGHUP: $(cat hup.err)"
perf report --stats -i auxhup.data >stats 2>perf.err || fail "sighup: perf report on the AUX file: $(cat perf.err)"
grep -qi 'warning\|error\|failed' perf.err && fail "sighup: perf report warns on the AUX file: $(cat perf.err)"
grep -Eq 'AUXTRACE events: +[1-9]' stats || fail "sighup: the AUX file has no AUXTRACE"
echo "sighup: perf and AUX recordings end cleanly, files complete"

# 6. Session directories of killed recorders (PERFRING_TMPDIR: ours only).
export PERFRING_TMPDIR=$tmp/shm
mkdir shm
# state PID: the process state letter, "" when gone.
state() { sed -n 's/.*) \(.\).*/\1/p' /proc/$1/stat 2>/dev/null; }
gone() { case $(state $1) in "" | Z | X) return 0 ;; esac; return 1; }
# session_of PID: the session directory whose recorder.pid says PID.
session_of() { grep -lx "$1" shm/perfring-*/recorder.pid 2>/dev/null | xargs -r dirname; }
has_session() { [ -n "$(session_of $1)" ]; }
ring_in() { compgen -G "$1/*.ring" >/dev/null; }
"$cli" record -o killed.data -- "$app" 1 1 --forever --rate 1000 >/dev/null 2>&1 &
killed=$!
bg+=($killed)
wait_for has_session $killed || fail "sessions: the recorder made no session"
kdir=$(session_of $killed)
wait_for ring_in "$kdir" || fail "sessions: no ring in $kdir"
kapp=$(basename "$(compgen -G "$kdir/*.ring" | head -1)" | cut -d- -f1)
kill -9 $killed
wait $killed 2>/dev/null
# Other users' directories, links, open modes: never touched.
mkdir -m 0700 shm/perfring-NoBody && chown nobody shm/perfring-NoBody 2>/dev/null && echo x >shm/perfring-NoBody/f
mkdir -m 0755 shm/perfring-Open01 && echo x >shm/perfring-Open01/f
mkdir -m 0700 elsewhere && echo x >elsewhere/f && ln -s "$tmp/elsewhere" shm/perfring-Link01
"$cli" record -o live.data -- "$app" 1 1 --forever --rate 1000 >/dev/null 2>live.err &
live=$!
bg+=($live)
wait_for has_session $live || fail "sessions: the live recorder made no session: $(cat live.err)"
ldir=$(session_of $live)
# The killed recorder's program still traces into its directory: kept
# (a recorder -p can take it over).
[ -d "$kdir" ] || fail "sessions: $kdir reclaimed while its program $kapp lives"
grep -q reclaimed live.err && fail "sessions: reclaimed something while the program lived: $(cat live.err)"
kill -9 "$kapp"
wait_for gone "$kapp" || fail "sessions: program $kapp does not die"
"$cli" record -o next.data -- true 2>next.err || fail "sessions: next recording: $(cat next.err)"
grep -q "reclaimed 1 session directory of killed recorders in $tmp/shm" next.err ||
	fail "sessions: the next recording did not say it reclaimed $kdir: $(cat next.err)"
[ -e "$kdir" ] && fail "sessions: $kdir is still there"
[ -d "$ldir" ] && ring_in "$ldir" || fail "sessions: the live recorder's $ldir was touched"
for d in perfring-Open01 perfring-Link01; do [ -e "shm/$d" ] || fail "sessions: shm/$d removed"; done
[ -e shm/perfring-NoBody ] || fail "sessions: another user's directory removed"
[ -f elsewhere/f ] || fail "sessions: followed a link"
[ -f shm/perfring-Open01/f ] || fail "sessions: emptied a directory open to others"
kill -INT $live
wait $live
rc=$?
[ $rc = 0 ] || [ $rc = 143 ] || fail "sessions: the live recorder exited $rc: $(cat live.err)"
[ -e "$ldir" ] && fail "sessions: the live recorder left $ldir"
perf report --stats -i live.data >/dev/null 2>perf.err || fail "sessions: perf report on the live recording: $(cat perf.err)"
echo "sessions: a killed recorder's directory kept while its program lived, reclaimed after; live and foreign ones left"
exit 0
