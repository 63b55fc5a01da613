#!/usr/bin/env bash
# perfring data convert against perf data convert (the oracle) and
# babeltrace2 (the reader): for a -g profile, a system-wide tracepoint
# recording and a recording with application events -- perf's files and
# perfring's -- `babeltrace2 DIR` prints the same lines for our CTF as for
# perf's (time deltas aside), with the same metadata (uuids aside), --all
# and --tod included; --to-json writes the same file as perf's.  Then what
# perf cannot do: a pipe on stdin (against perf's conversion of the same
# recording as a file, and against perf script), application events with
# bytes fields; the options as perf takes them; a damaged file; bounded
# memory on a large file; progress on a terminal only.
# perf and babeltrace2 are oracles scripts/deps.sh installs: missing is a
# failure.  Skips (77) only if the kernel refuses perf_event_open.
# About a minute here; 2.5 minutes at load average 11 (two `yes` loops
# and other builds beside it):
# test-timeout: 600
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
asan_cli=${PERFRING_ASAN_CLI:-build/asan/perfring}
workloads=${WORKLOADS:-build/workloads}
apps=${TEST_APPS:-build/apps}
make_tmp
need_cmd perf linux-perf
need_cmd babeltrace2 babeltrace2
cli=$(realpath "$cli")
asan_cli=$(realpath "$asan_cli")
hot=$(realpath "$workloads/hot")
pingpong=$(realpath "$workloads/pingpong")
app_trace=$(realpath "${EXAMPLES:-$(dirname "$apps")/examples}/app_trace")
apptrace=$(realpath "$apps/apptrace")
for x in "$asan_cli" "$hot" "$pingpong" "$app_trace" "$apptrace"; do
	[ -x "$x" ] || fail "$x is missing (make check builds it)"
done
need_perf_events
cd "$tmp" || exit 1

# babeltrace2's lines without the time deltas ("(+0.000995677)")
bt_lines() { babeltrace2 "$1" | sed 's/ (+[^)]*)//'; }

# same_ctf NAME FILE [OPTION...]: perf's and our CTF of FILE (with the
# options) print the same lines and have the same metadata.
same_ctf() {
	local name=$1 f=$2 n
	shift 2
	rm -rf "p-$name" "o-$name"
	perf data convert "$@" -i "$f" --to-ctf "p-$name" >/dev/null 2>p.err || fail "$name: perf data convert: $(cat p.err)"
	"$cli" data convert "$@" -i "$f" --to-ctf "o-$name" 2>o.err || fail "$name: perfring data convert: $(cat o.err)"
	# (perf converts perfring's checkpoint COMMs, of task -2, too: out)
	bt_lines "p-$name" >p.all 2>p.err || fail "$name: babeltrace2 cannot read perf's CTF: $(tail -3 p.err)"
	grep -v 'perf_comm: .*pid = 4294967294, tid = 4294967294,' p.all >p.txt
	bt_lines "o-$name" >o.txt 2>o.err || fail "$name: babeltrace2 cannot read our CTF: $(tail -3 o.err)"
	n=$(wc -l <p.txt)
	[ "$n" -gt 0 ] || fail "$name: perf's CTF has no events"
	if ! cmp -s p.txt o.txt; then
		diff p.txt o.txt | head -6 >&2
		fail "$name: babeltrace2 prints our CTF otherwise than perf's"
	fi
	cmp -s <(grep -v uuid "p-$name/metadata") <(grep -v uuid "o-$name/metadata") ||
		fail "$name: the metadata differs from perf's: $(diff <(grep -v uuid "p-$name/metadata") <(grep -v uuid "o-$name/metadata") | head -4)"
	echo "$name: $n events, as perf's"
}

# same_json NAME FILE: perf's and our JSON of FILE are the same file (the
# same samples, and the same headers: both read the one file).
same_json() {
	local name=$1 f=$2
	rm -f "p-$name.json" "o-$name.json"
	perf data convert -i "$f" --to-json "p-$name.json" >/dev/null 2>p.err || fail "$name: perf data convert --to-json: $(cat p.err)"
	"$cli" data convert -i "$f" --to-json "o-$name.json" 2>o.err || fail "$name: perfring data convert --to-json: $(cat o.err)"
	grep -q '"timestamp"' "p-$name.json" || fail "$name: perf's JSON has no samples"
	if ! cmp -s "p-$name.json" "o-$name.json"; then
		diff "p-$name.json" "o-$name.json" | head -8 >&2
		fail "$name: our JSON differs from perf's"
	fi
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["samples"]' "o-$name.json" ||
		fail "$name: our JSON does not parse or has no samples"
	echo "$name: JSON as perf's ($(grep -c '"timestamp"' "o-$name.json") samples)"
}

# 1. A -g profile, recorded by perf and by perfring.
perf record -q -g -e cpu-clock -F 2000 -o perf-g.data -- "$hot" 0.3 >/dev/null 2>rec.err || fail "perf record -g: $(cat rec.err)"
"$cli" record -q -g -e cpu-clock -F 2000 -o ours-g.data -- "$hot" 0.3 >/dev/null 2>rec.err || fail "perfring record -g: $(cat rec.err)"
same_ctf perf-g perf-g.data
grep -q 'perf_callchain_size = [1-9][0-9]*, perf_callchain = \[ \[0\] = 0x' o.txt ||
	fail "no perf_callchain in the CTF of a -g profile: $(head -1 o.txt)"
same_ctf ours-g ours-g.data
same_ctf ours-g-all ours-g.data --all
grep -q 'perf_mmap2: .*filename = ".*/hot"' o.txt || fail "--all: no perf_mmap2 of the workload"
same_json perf-g perf-g.data
same_json ours-g ours-g.data

# 2. A system-wide tracepoint recording, by perf and by perfring.
perf record -q -a -e sched:sched_switch -o perf-sw.data -- "$pingpong" 2000 >/dev/null 2>rec.err || fail "perf record -a: $(cat rec.err)"
"$cli" record -q -a -e sched:sched_switch -o ours-sw.data -- "$pingpong" 2000 >/dev/null 2>rec.err || fail "perfring record -a: $(cat rec.err)"
same_ctf perf-sw perf-sw.data
same_ctf ours-sw ours-sw.data
grep -q 'sched:sched_switch: { cpu_id = 1 }' o.txt || fail "no stream of CPU 1 in a system-wide recording"
grep -q 'prev_comm = "pingpong", prev_pid = [0-9]*, prev_prio = [0-9]*, prev_state = [0-9]*, next_comm = ' o.txt ||
	fail "sched_switch fields missing: $(grep -m1 sched_switch o.txt)"
same_ctf ours-sw-all ours-sw.data --all
same_json perf-sw perf-sw.data
same_json ours-sw ours-sw.data
# a tracepoint with an array field (raw_syscalls:sys_enter's args[6])
perf record -q -e raw_syscalls:sys_enter -o perf-arr.data -- "$hot" 0.05 >/dev/null 2>rec.err || fail "perf record raw_syscalls: $(cat rec.err)"
same_ctf perf-array perf-arr.data
grep -q 'args = \[ \[0\] = 0x[0-9A-F]*, \[1\]' o.txt || fail "no args array: $(head -1 o.txt)"

# 3. Application events (examples/app_trace.c: u64, u32, string fields)
# beside the kernel's, on one timeline.
PERFRING_RING_SIZE=8M PERFRING_MODE=block "$cli" record -a -e sched:sched_switch -o app.data -- "$app_trace" >app.out 2>rec.err ||
	fail "perfring record of app_trace: $(cat rec.err)"
same_ctf app app.data
grep -q 'webapp:request: { cpu_id = [0-9]* }, { perf_tid = [0-9]*, perf_pid = [0-9]*, perf_id = [0-9]*, common_type = [0-9]*, common_flags = 0, common_preempt_count = 0, common_pid = [0-9]*, id = 7, bytes = 700, path = "/style.css" }' o.txt ||
	fail "webapp:request 7 is not as app_trace emitted it: $(grep -m1 'webapp:request' o.txt)"
n=$(grep -c 'webapp:handle_begin:' o.txt)
[ "$n" = 30000 ] || fail "$n webapp:handle_begin events in the CTF, app_trace emits 30000"
same_ctf app-all app.data --all
same_json app app.data

# 4. --tod: wall-clock times from the file's clock data (-k).
"$cli" record -q -k mono -e cpu-clock -F 1000 -o mono.data -- "$hot" 0.2 >/dev/null 2>rec.err || fail "perfring record -k mono: $(cat rec.err)"
same_ctf tod mono.data --tod
grep -q 'description = "monotonic"' o-tod/metadata || fail "--tod: the clock is not described as perf's"
same_ctf tod-ours ours-g.data --tod # perfring records CLOCK_DATA always
perf data convert --tod -i perf-g.data --to-ctf p-no-tod >/dev/null 2>&1 && fail "perf converted --tod without clock data"
"$cli" data convert --tod -i perf-g.data --to-ctf o-no-tod 2>err.txt && fail "--tod without clock data was converted"
grep -q 'clock data' err.txt || fail "--tod without clock data: $(cat err.txt)"
echo "tod: as perf's; refused without clock data, as by perf"

# 5. A pipe on stdin (perf 6.1 cannot convert one): perf's -g file as a
# pipe (perf inject) converts as perf converts the file; perfring's
# tracepoint pipe holds perf script's events.  From here on the inputs
# perf does not convert go through the ASan+UBSan build.
perf inject -i perf-g.data -o - >perf-g.pipe 2>inj.err || fail "perf inject: $(cat inj.err)"
rm -rf o-pipe
cat perf-g.pipe | "$asan_cli" data convert --to-ctf o-pipe 2>o.err || fail "pipe: $(cat o.err)"
bt_lines p-perf-g >p.txt
bt_lines o-pipe >o.txt
cmp -s p.txt o.txt || { diff p.txt o.txt | head -4 >&2; fail "pipe: our CTF differs from perf's of the file"; }
cat perf-g.pipe | "$asan_cli" data convert --to-json o-pipe.json 2>o.err || fail "pipe --to-json: $(cat o.err)"
cmp -s <(sed -n '/"samples"/,$p' p-perf-g.json) <(sed -n '/"samples"/,$p' o-pipe.json) ||
	fail "pipe --to-json: the samples differ from perf's of the file"
"$cli" record -q -a -e sched:sched_switch -o - -- "$pingpong" 500 >sw.pipe 2>rec.err || fail "perfring record -o -: $(cat rec.err)"
rm -rf o-swpipe
"$asan_cli" data convert -i - --to-ctf o-swpipe <sw.pipe 2>o.err || fail "tracepoint pipe: $(cat o.err)"
# time, cpu, prev_pid, next_pid of every switch, both sorted
perf script -i - --ns -F cpu,time,trace <sw.pipe 2>/dev/null |
	sed -n 's/^ *\[0*\([0-9][0-9]*\)\] *\([0-9]*\)\.\([0-9]*\): *prev_comm=.* prev_pid=\([0-9]*\) .* next_pid=\([0-9]*\) .*/\2\3 \1 \4 \5/p' |
	sed 's/^0*//' | sort >p.sw
babeltrace2 o-swpipe | sed -n 's/^\[\([0-9]*\):\([0-9]*\):\([0-9]*\)\.\([0-9]*\)\].*cpu_id = \([0-9]*\) .*prev_pid = \([0-9]*\),.*next_pid = \([0-9]*\),.*/\1 \2 \3 \4 \5 \6 \7/p' |
	awk '{ printf "%d%09d %s %s %s\n", $1 * 3600 + $2 * 60 + $3, $4, $5, $6, $7 }' | sed 's/^0*//' | sort >o.sw
[ -s p.sw ] || fail "tracepoint pipe: perf script shows no sched_switch"
cmp -s p.sw o.sw || { diff p.sw o.sw | head -4 >&2; fail "tracepoint pipe: our CTF's switches are not perf script's"; }
echo "pipe: -g as perf's CTF and JSON of the file; $(wc -l <o.sw) switches as perf script's"

# 6. bytes fields (perf's CTF loses the packets holding them: its writer
# refuses the raw bytes it keeps): each byte as \xNN.
PERFRING_RING_SIZE=4M PERFRING_MODE=block "$cli" record -q -e cpu-clock -o bytes.data -- "$apptrace" 1 500 >/dev/null 2>rec.err ||
	fail "perfring record of apptrace: $(cat rec.err)"
rm -rf o-bytes
"$asan_cli" data convert -i bytes.data --to-ctf o-bytes 2>o.err || fail "bytes: $(cat o.err)"
babeltrace2 o-bytes >o.txt 2>o.err || fail "bytes: babeltrace2: $(tail -3 o.err)"
perf script -i bytes.data 2>/dev/null | sed -n 's/.*apptest:msg: seq=\([0-9]*\) text=\([^ ]*\) blob=\(.*\)$/\1 \2 \3/p' |
	awk '{ b = ""; for (i = 3; i <= NF; i++) b = b "\\\\x" $i; print $1, $2, b }' >p.msg
sed -n 's/.*apptest:msg: .* seq = \([0-9]*\), text = "\([^"]*\)", blob = "\([^"]*\)" }$/\1 \2 \3/p' o.txt | sed 's/ $//' >o.msg
[ "$(wc -l <p.msg)" -gt 4 ] || fail "bytes: perf script shows $(wc -l <p.msg) apptest:msg events"
cmp -s <(sed 's/ $//' p.msg) o.msg || { diff p.msg o.msg | head -4 >&2; fail "bytes: the msg events differ from perf script's"; }
echo "bytes: $(wc -l <o.msg) msg events with their text and bytes, as perf script shows them"

# 7. Options as perf takes them.
"$cli" data convert -i ours-g.data >/dev/null 2>err.txt
[ $? = 2 ] && grep -q 'one of --to-ctf or --to-json' err.txt || fail "no output format: $(cat err.txt)"
"$cli" data convert -i ours-g.data --to-ctf x --to-json y >/dev/null 2>err.txt
[ $? = 2 ] && grep -q 'cannot specify both' err.txt || fail "both formats: $(cat err.txt)"
"$cli" data convert --all -i ours-g.data --to-json all.json 2>err.txt && fail "--all --to-json was accepted"
[ ! -e all.json ] || fail "--all --to-json left a file"
echo keep >exists.json
"$cli" data convert -i ours-g.data --to-json exists.json 2>err.txt && fail "an existing JSON file was overwritten without -f"
[ "$(cat exists.json)" = keep ] || fail "the existing JSON file was changed"
"$cli" data convert -f -i ours-g.data --to-json exists.json 2>err.txt || fail "-f: $(cat err.txt)"
cmp -s exists.json o-ours-g.json || fail "-f did not write the JSON"
cp ours-g.data other.data
chown nobody other.data 2>/dev/null && [ "$(id -u)" = 0 ] && {
	"$cli" data convert -i other.data --to-ctf other.ctf 2>err.txt && fail "another user's file was converted without -f"
	grep -q 'not owned' err.txt || fail "another user's file: $(cat err.txt)"
	"$cli" data convert -f -i other.data --to-ctf other.ctf 2>err.txt || fail "-f, another user's file: $(cat err.txt)"
}
ln -s o-ours-g link.ctf
"$cli" data convert -i ours-g.data --to-ctf link.ctf 2>err.txt && fail "a symbolic link was written through"
# converting again into the directory: the earlier streams go
mkdir stale
"$cli" data convert -i ours-sw.data --to-ctf stale 2>/dev/null || fail "into an empty directory"
"$cli" data convert -i ours-g.data --to-ctf stale 2>/dev/null || fail "into a CTF directory"
[ "$(ls stale | grep -c perf_stream_)" = "$(ls o-ours-g | grep -c perf_stream_)" ] || fail "streams of the earlier trace are left: $(ls stale)"
bt_lines stale | cmp -s - <(bt_lines o-ours-g) || fail "a second conversion into a directory differs"
echo "options: as perf's; links refused; a directory converted into again holds the new trace alone"

# 8. A damaged file: what comes before the damage is converted and read
# (perf's: its attrs are at the start; perfring's are at the end).
size=$(file_size perf-sw.data)
head -c $((size / 2)) perf-sw.data >cut.data
"$asan_cli" data convert -i cut.data --to-ctf o-cut 2>err.txt && fail "a truncated file converted without an error"
grep -qi 'truncated\|damage' err.txt || fail "truncated: $(cat err.txt)"
n=$(babeltrace2 o-cut 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || fail "truncated: nothing of it converted"
echo "damaged: $n events before the damage, error reported"

# 9. A large file in bounded memory, and progress on a terminal only.
"$cli" record -q -a -e sched:sched_switch -m 4M -o large.data -- "$pingpong" 100000 >/dev/null 2>rec.err || fail "recording the large file: $(cat rec.err)"
n=$("$cli" stats -i large.data | sed -n 's/.*SAMPLE events: *\([0-9]*\).*/\1/p' | head -1)
[ "${n:-0}" -ge 150000 ] || fail "the large file has ${n:-0} samples"
# perf's writer keeps 100,000 events a stream (about 390 MB for 500,000)
prlimit --as=$((160 << 20)) "$cli" data convert -i large.data --to-ctf o-large 2>err.txt ||
	fail "$n samples do not convert in 160 MB of address space: $(tail -2 err.txt)"
grep -q "($n samples)" err.txt || fail "large: $(cat err.txt)"
grep -q $'\r\|converting' err.txt && fail "progress written off a terminal"
# the ASan build is slow enough to take more than half a second
rm -rf o-tty
script -qec "$asan_cli data convert -i large.data --to-ctf o-tty" /dev/null >tty.txt 2>&1 </dev/null || fail "on a terminal: $(tail -3 tty.txt)"
grep -q 'converting: [0-9.]* of [0-9.]* MB' tty.txt || fail "no progress on a terminal: $(head -c 300 tty.txt)"
grep -q "($n samples)" tty.txt || fail "on a terminal: no summary"
echo "large: $n samples in 160 MB; progress on a terminal only"
echo "convert: all passed"
