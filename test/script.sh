#!/usr/bin/env bash
# perfring script and perfring report judged by perf script and perf report
# on the same files: recorded by the real perf record and by perfring
# record.  Skips (77) only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")

need_perf_events

# Compare perfring script with perf script on file $1 (extra args: both).
# Line counts must be equal; the text must agree on at least 99% of the
# lines (identical here; a machine where perf finds other symbol files
# could name a few frames differently).
compare() {
	local f=$1 name=$2
	shift 2
	"$cli" script -i "$f" "$@" >"$tmp/ours.txt" 2>"$tmp/ours.err" || fail "$name: perfring script failed: $(cat "$tmp/ours.err")"
	perf script -i "$f" "$@" >"$tmp/perf.txt" 2>/dev/null || fail "$name: perf script failed"
	local o p d
	o=$(wc -l <"$tmp/ours.txt")
	p=$(wc -l <"$tmp/perf.txt")
	[ "$o" -gt 0 ] || fail "$name: no output"
	[ "$o" = "$p" ] || fail "$name: perfring script has $o lines, perf script $p"
	d=$(diff "$tmp/perf.txt" "$tmp/ours.txt" | grep -c '^<')
	if [ "$d" -gt $((p / 100)) ]; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -20 >&2
		fail "$name: $d of $p lines differ from perf script"
	fi
	[ -s "$tmp/ours.err" ] && fail "$name: perfring script complained: $(head -3 "$tmp/ours.err")"
	echo "$name: $o lines, as perf script ($d differ)"
}

# 1. Files from the real perf record.
perf record -q -o "$tmp/plain.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record"
compare "$tmp/plain.data" "perf record"
perf record -q -g -o "$tmp/g.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record -g"
compare "$tmp/g.data" "perf record -g"
perf record -q -a -e sched:sched_switch -o "$tmp/sw.data" -- "$wl/pingpong" 2000 2>/dev/null || fail "perf record -a"
compare "$tmp/sw.data" "perf record -a -e sched:sched_switch"
perf record -q -e cpu-clock -e page-faults -e sched:sched_switch -o "$tmp/multi.data" -- "$wl/hot" 0.2 2>/dev/null ||
	fail "perf record with three -e"
compare "$tmp/multi.data" "perf record -e x -e y -e z"
perf record -q -c 1 -e page-faults -o "$tmp/pf.data" -- "$wl/faults" 2000 2>/dev/null || fail "perf record -c 1"
compare "$tmp/pf.data" "perf record -c 1 -e page-faults"
# -z: zstd-compressed records (one stream across records), -G: callchains
perf record -q -z -g -a -e sched:sched_switch -o "$tmp/z.data" -- "$wl/pingpong" 2000 2>/dev/null || fail "perf record -z"
compare "$tmp/z.data" "perf record -z -g -a -e sched:sched_switch" -G
"$cli" stats -i "$tmp/z.data" | grep -q 'COMPRESSED events' || fail "perf record -z: stats shows no COMPRESSED records"
perf record -q -o - -- "$wl/hot" 0.2 2>/dev/null >"$tmp/pipe.data" || fail "perf record -o -"
o=$("$cli" script -i - <"$tmp/pipe.data" | wc -l)
p=$(perf script -i - <"$tmp/pipe.data" 2>/dev/null | wc -l)
[ "$o" -gt 0 ] && [ "$o" = "$p" ] || fail "pipe mode: perfring script has $o lines, perf script $p"
"$cli" script -i - <"$tmp/pipe.data" | cmp -s - <(perf script -i - <"$tmp/pipe.data" 2>/dev/null) ||
	fail "pipe mode: text differs from perf script"
echo "perf record -o -: $o lines, as perf script"

# 2. Files from perfring record.
"$cli" record -q -o "$tmp/o-plain.data" -- "$wl/hot" 0.3 || fail "perfring record"
compare "$tmp/o-plain.data" "perfring record"
"$cli" record -q -g -o "$tmp/o-g.data" -- "$wl/hot" 0.3 || fail "perfring record -g"
compare "$tmp/o-g.data" "perfring record -g"
"$cli" record -q -a -e sched:sched_switch -o "$tmp/o-sw.data" -- "$wl/pingpong" 2000 || fail "perfring record -a"
compare "$tmp/o-sw.data" "perfring record -a -e sched:sched_switch"
"$cli" record -q -e page-faults -c 1 -o "$tmp/o-pf.data" -- "$wl/faults" 2000 || fail "perfring record -c 1"
compare "$tmp/o-pf.data" "perfring record -c 1 -e page-faults"
"$cli" record -q -e cpu-clock -e sched:sched_switch -o - -- "$wl/pingpong" 500 >"$tmp/o-pipe.data" || fail "perfring record -o -"
o=$("$cli" script -i - <"$tmp/o-pipe.data" | wc -l)
p=$(perf script -i - <"$tmp/o-pipe.data" 2>/dev/null | wc -l)
[ "$o" -gt 0 ] && [ "$o" = "$p" ] || fail "perfring record -o -: perfring script has $o lines, perf script $p"
echo "perfring record -o -: $o lines, as perf script"
# Tracepoint fields in pipe mode come from the HEADER_TRACING_DATA record.
"$cli" script -i - <"$tmp/o-pipe.data" | sed -n 's/.*sched:sched_switch: //p' >"$tmp/ours.tp"
perf script -i - <"$tmp/o-pipe.data" 2>/dev/null | sed -n 's/.*sched:sched_switch: //p' >"$tmp/perf.tp"
grep -q 'prev_comm=' "$tmp/perf.tp" || fail "perf script decodes no sched_switch fields in pipe mode"
cmp -s "$tmp/ours.tp" "$tmp/perf.tp" ||
	fail "pipe mode: sched_switch fields differ from perf script (is the pipe's TRACING_DATA available through prd_feature()?): $(diff "$tmp/perf.tp" "$tmp/ours.tp" | head -3)"

# 3. Tracepoint fields: the same decoded text as perf script, through the
# compiled formats and through libtraceevent itself.
grep -q 'prev_comm=.* prev_pid=.* prev_state=.* ==> next_comm=.* next_pid=' <("$cli" script -i "$tmp/sw.data") ||
	fail "no decoded sched_switch fields"
for f in sw o-sw; do
	"$cli" script -i "$tmp/$f.data" | sed -n 's/.*sched:sched_switch: //p' >"$tmp/ours.tp"
	perf script -i "$tmp/$f.data" 2>/dev/null | sed -n 's/.*sched:sched_switch: //p' >"$tmp/perf.tp"
	[ -s "$tmp/ours.tp" ] || fail "$f: no tracepoint lines"
	cmp -s "$tmp/ours.tp" "$tmp/perf.tp" || fail "$f: sched_switch fields differ from perf script: $(diff "$tmp/perf.tp" "$tmp/ours.tp" | head -4)"
	"$cli" script -i "$tmp/$f.data" --slow-tracepoints | cmp -s - <("$cli" script -i "$tmp/$f.data") ||
		fail "$f: compiled formats and libtraceevent print differently"
done
echo "tracepoints: $(wc -l <"$tmp/ours.tp") sched_switch lines decoded as perf script and libtraceevent do"

# 4. -F, -G, --ns against perf.
for fl in comm,tid,time ip,sym comm,pid,tid,cpu,event,trace sym,dso; do
	compare "$tmp/sw.data" "-F $fl" -F "$fl"
done
compare "$tmp/g.data" "-F ip,sym,dso (callchains)" -F ip,sym,dso
compare "$tmp/g.data" "-G" -G
compare "$tmp/multi.data" "--ns" --ns
compare "$tmp/multi.data" "-F trace:comm,cpu,event" -F trace:comm,cpu,event
compare "$tmp/multi.data" "-F sw:... -F trace:..." -F sw:comm,event,period -F trace:comm,event,trace

# 5. perfring report against perf report --stdio: the same top entries.
top() { grep -v '^#' | grep '%' | grep -v -- '--' | head -n "$1" | sed 's/ *$//'; }
for f in plain o-plain; do
	ours=$("$cli" report -i "$tmp/$f.data" | top 1)
	theirs=$(perf report --stdio -i "$tmp/$f.data" 2>/dev/null | top 1)
	grep -q 'hot_loop' <<<"$ours" || fail "$f: perfring report does not put hot_loop first: $ours"
	[ "$ours" = "$theirs" ] || fail "$f: top entry: ours '$ours', perf '$theirs'"
done
for f in g o-g; do
	for mode in --children --no-children; do
		ours=$("$cli" report -i "$tmp/$f.data" $mode | top 3)
		theirs=$(perf report --stdio -i "$tmp/$f.data" $mode 2>/dev/null | top 3)
		[ "$ours" = "$theirs" ] || fail "$f $mode: top entries differ: ours
$ours
perf
$theirs"
	done
	"$cli" report -i "$tmp/$f.data" --no-children | grep -A4 'hot_loop' | grep -q -- '---hot_loop' ||
		fail "$f: no call graph under hot_loop"
	"$cli" report -i "$tmp/$f.data" --no-children | grep -A4 'hot_loop' | grep -q 'main' ||
		fail "$f: the call graph does not reach main"
done
for srt in comm dso sym comm,dso dso,sym; do
	a=$("$cli" report -i "$tmp/plain.data" --sort "$srt" | grep -v '^#' | grep '%' | sort)
	b=$(perf report --stdio -i "$tmp/plain.data" --sort "$srt" 2>/dev/null | grep -v '^#' | grep '%' | sort)
	[ "$a" = "$b" ] || fail "--sort $srt: entries differ from perf report: $(diff <(echo "$b") <(echo "$a") | head -4)"
done
a=$("$cli" report -i "$tmp/o-sw.data" | grep -v '^#' | grep '%' | sort)
b=$(perf report --stdio -i "$tmp/o-sw.data" 2>/dev/null | grep -v '^#' | grep '%' | sort)
[ "$a" = "$b" ] || fail "tracepoint report differs from perf report: $(diff <(echo "$b") <(echo "$a") | head -4)"
echo "report: top entries, sort orders and the tracepoint table as perf report --stdio"

# 6. Defaults and errors: perf.data in the current directory, EPIPE,
# missing and damaged files.
(cd "$tmp" && cp plain.data perf.data && "$cli" script </dev/null | cmp -s - <(perf script </dev/null 2>/dev/null)) ||
	fail "default input perf.data"
(cd "$tmp" && "$cli" report </dev/null | grep -q hot_loop) || fail "report: default input perf.data"
# A pipe on stdin is the input when -i is not given, as for perf.
o=$(cat "$tmp/pipe.data" | (cd "$tmp" && "$cli" script | wc -l))
p=$(cat "$tmp/pipe.data" | (cd "$tmp" && perf script 2>/dev/null | wc -l))
[ "$o" = "$p" ] || fail "stdin pipe without -i: $o lines, perf script $p"
"$cli" script -i "$tmp/sw.data" | head -1 | grep -q sched_switch || fail "script | head"
"$cli" script -i "$tmp/nonexistent" 2>"$tmp/e1" && fail "missing file accepted"
grep -q 'No such file' "$tmp/e1" || fail "missing file: unclear message: $(cat "$tmp/e1")"
head -c 100000 /dev/urandom >"$tmp/junk.data"
"$cli" script -i "$tmp/junk.data" >/dev/null 2>&1
[ $? -lt 128 ] || fail "script crashed on random bytes"
"$cli" report -i "$tmp/junk.data" >/dev/null 2>&1
[ $? -lt 128 ] || fail "report crashed on random bytes"
size=$(stat -c %s "$tmp/o-g.data")
for cut in 200 1000 5000 $((size / 2)) $((size - 100)); do
	head -c "$cut" "$tmp/o-g.data" >"$tmp/cut.data"
	"$cli" script -i "$tmp/cut.data" >/dev/null 2>&1
	[ $? -lt 128 ] || fail "script crashed on a file cut at $cut bytes"
	"$cli" report -i "$tmp/cut.data" >/dev/null 2>&1
	[ $? -lt 128 ] || fail "report crashed on a file cut at $cut bytes"
done
# Flipped bytes in the data section (records, callchains, raw data).
need_cmd python3 python3
for seed in 1 2 3 4 5 6 7 8; do
	cp "$tmp/o-sw.data" "$tmp/flip.data"
	python3 - "$tmp/flip.data" "$seed" <<'EOF' || fail "flipping bytes (seed $seed) failed"
import random, sys
p, seed = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, 'rb').read())
r = random.Random(seed)
for _ in range(64):
    i = r.randrange(512, len(b))
    b[i] = r.randrange(256)
open(p, 'wb').write(bytes(b))
EOF
	cmp -s "$tmp/o-sw.data" "$tmp/flip.data" && fail "seed $seed: the damaged copy equals the original"
	"$cli" script -i "$tmp/flip.data" >/dev/null 2>&1
	[ $? -lt 128 ] || fail "script crashed on a damaged file (seed $seed)"
	"$cli" report -i "$tmp/flip.data" >/dev/null 2>&1
	[ $? -lt 128 ] || fail "report crashed on a damaged file (seed $seed)"
done
"$cli" script -F nosuchfield -i "$tmp/plain.data" 2>/dev/null && fail "-F nosuchfield accepted"
"$cli" report --sort nosuchkey -i "$tmp/plain.data" 2>/dev/null && fail "--sort nosuchkey accepted"
echo "script: ok"
