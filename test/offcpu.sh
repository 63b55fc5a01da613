#!/usr/bin/env bash
# perfring record --off-cpu on a program with known waits (workloads/
# offcpu.c: 500 ms asleep in sleeper(), 500 ms blocked on a pipe in
# blocker() until a second thread writes to it from pipe_writer(), then
# 300 ms spinning in spinner()), judged by the real perf (perf script and
# perf report read the file) and go tool pprof:
#  - folded -e offcpu-time: 0.45-0.6 s under sleeper and under blocker,
#    nothing under spinner; --wakers joins blocker's stack to
#    pipe_writer's, for as long;
#  - perf script shows the offcpu-time samples, with the same total as
#    the folded export; perfring report prints what perf report prints;
#  - go tool pprof -sample_index=off_cpu -top lists sleeper;
#  - each thread's on-CPU time (its cpu-clock periods) plus its off-CPU
#    time (offcpu-time and offcpu-preempted) is its lifetime (COMM exec
#    or FORK to EXIT, from perf script) within 2%;
#  - system wide (-a): the same waits under sleeper and blocker;
#  - chrome: the two long blocks as slices on their threads, the pipe
#    block linked to the writer by a flow; svg: off-CPU frames drawn cold;
#  - -z: the off-CPU samples compressed with the rest, perf reads them.
# All of it in both modes (--off-cpu-mode): bpf (the program in the
# kernel measures and sums; the summary must say it ran) and events (the
# recorder reads every sched switch); the default is bpf as root.
# Skips (77) only if the kernel refuses perf_event_open (or the sched
# tracepoints); the bpf mode is required as root (this kernel has BTF).
set -u
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
need_cmd perf linux-perf
need_cmd python3 python3
need_cmd go golang-go
need_perf_events "$cli"
export HOME=$tmp/home GOCACHE=$tmp/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$HOME"

if ! "$cli" record -q --off-cpu -o "$tmp/probe.data" -- true 2>"$tmp/probe.err"; then
	grep -qi 'permission\|not permitted' "$tmp/probe.err" && skip "kernel refuses the sched tracepoints: $(cat "$tmp/probe.err")"
	fail "record --off-cpu -- true: $(cat "$tmp/probe.err")"
fi

# The default as root is the BPF mode; it says so.
"$cli" record --off-cpu -o "$tmp/probe.data" -- true 2>"$tmp/probe.err" || fail "record --off-cpu -- true: $(cat "$tmp/probe.err")"
if [ "$(id -u)" = 0 ]; then
	grep -q 'measured by BPF in the kernel' "$tmp/probe.err" ||
		fail "record --off-cpu as root did not run the BPF program: $(cat "$tmp/probe.err")"
fi

# check_mode MODE: every check below on a recording in MODE (the body is
# not indented: its python here-documents end at column 0).
check_mode() {
mode=$1
echo "--- --off-cpu-mode $mode"
data=$tmp/oc-$mode.data
# --off-cpu-thresh 100: the long blocks keep their own time (chrome's
# slices); the short ones are summed.
timeout $((WAIT_S * 2)) "$cli" record --off-cpu --off-cpu-mode "$mode" --off-cpu-thresh 100 -g -o "$data" -- "$wl/offcpu" 500 500 300 \
	2>"$tmp/record.err" || fail "record --off-cpu --off-cpu-mode $mode: $(cat "$tmp/record.err")"
grep 'off-CPU:' "$tmp/record.err"
grep -q 'off-CPU: [0-9]* blocks in [0-9]* samples, 0 sched events lost, 0 blocks left out' "$tmp/record.err" ||
	fail "the recorder lost sched events: $(grep 'off-CPU' "$tmp/record.err")"
case $mode in
bpf) how='measured by BPF in the kernel' ;;
*) how='measured from the sched events' ;;
esac
grep -q "$how" "$tmp/record.err" || fail "--off-cpu-mode $mode: the summary does not say '$how': $(grep 'off-CPU' "$tmp/record.err")"

# The folded export of offcpu-time: nanoseconds per stack.
"$cli" export -i "$data" -f folded -e offcpu-time -o "$tmp/off.folded" 2>"$tmp/export.err" ||
	fail "export -f folded -e offcpu-time: $(cat "$tmp/export.err")"
[ ! -s "$tmp/export.err" ] || fail "export -e offcpu-time said: $(head -3 "$tmp/export.err")"
under() { awk -v f=";$2;" '{ k = $0; sub(/ [0-9]+$/, "", k) } index(k ";", f) { n += $NF } END { print n + 0 }' "$1"; }
in_range() { # NAME NS LOW_MS HIGH_MS
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo * 1e6 && v <= hi * 1e6) }' ||
		fail "$1: $(awk -v v="$2" 'BEGIN { printf "%.1f", v / 1e6 }') ms, not in $3-$4 ms"
	echo "$1: $(awk -v v="$2" 'BEGIN { printf "%.1f", v / 1e6 }') ms"
}
in_range "offcpu-time under sleeper" "$(under "$tmp/off.folded" sleeper)" 450 600
in_range "offcpu-time under blocker" "$(under "$tmp/off.folded" blocker)" 450 600
in_range "offcpu-time under writer_wait" "$(under "$tmp/off.folded" writer_wait)" 450 600
[ "$(under "$tmp/off.folded" spinner)" = 0 ] || fail "offcpu-time under spinner: $(grep ';spinner;' "$tmp/off.folded" | head -3)"
# ... and the CPU samples are the spinner's, not in the off-CPU counts
"$cli" export -i "$data" -f folded -o "$tmp/cpu.folded" || fail "export -f folded"
[ "$(under "$tmp/cpu.folded" spinner)" -gt 0 ] || fail "no cpu-clock sample under spinner"

# --wakers: the reader's blocked stack, "--", the writer's stack.
"$cli" export -i "$data" -f folded --wakers -o "$tmp/wakers.folded" 2>"$tmp/export.err" ||
	fail "export --wakers: $(cat "$tmp/export.err")"
joined=$(awk '{ k = $0; sub(/ [0-9]+$/, "", k); split(k, h, ";--;") }
	index(";" h[1] ";", ";blocker;") && index(";" h[2] ";", ";pipe_writer;") { n += $NF } END { print n + 0 }' "$tmp/wakers.folded")
in_range "--wakers: blocker;--;...pipe_writer" "$joined" 450 600

# perf script reads the file: offcpu-time samples, the same total.
perf script -i "$data" -F tid,time,event,period >"$tmp/perf.script" 2>"$tmp/perf.err" ||
	fail "perf script: $(head -3 "$tmp/perf.err")"
perf_total=$(awk '$NF == "offcpu-time:" { n += $(NF - 1) } END { print n + 0 }' "$tmp/perf.script")
ours_total=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/off.folded")
[ "$perf_total" -gt 0 ] || fail "perf script shows no offcpu-time sample"
[ "$perf_total" = "$ours_total" ] || fail "perf script's offcpu-time total $perf_total != folded $ours_total"
echo "perf script: $(grep -c 'offcpu-time:' "$tmp/perf.script") offcpu-time samples, $perf_total ns as the folded export"
report_like_perf "$data" --no-children --sort comm,dso -g none

# go tool pprof: the off_cpu sample type lists the sleeping function.
"$cli" export -i "$data" -f pprof -o "$tmp/oc.pb.gz" || fail "export -f pprof"
timeout 120 go tool pprof -symbolize=none -sample_index=off_cpu -top -nodecount=200 "$tmp/oc.pb.gz" \
	>"$tmp/pprof.top" 2>"$tmp/pprof.err" || fail "go tool pprof: $(head -3 "$tmp/pprof.err")"
grep -q '^Type: off_cpu' "$tmp/pprof.top" || fail "pprof: not the off_cpu type: $(head -5 "$tmp/pprof.top")"
grep -E ' sleeper$' "$tmp/pprof.top" || fail "go tool pprof -sample_index=off_cpu -top lists no sleeper"
! grep -E ' spinner$' "$tmp/pprof.top" || fail "pprof's off_cpu lists spinner"

# On-CPU plus off-CPU time is each thread's lifetime.
perf script -i "$data" --show-task-events -F comm,tid,time,event,period >"$tmp/tasks.script" 2>/dev/null ||
	fail "perf script --show-task-events"
python3 - "$tmp/tasks.script" <<'EOF' || exit 1
import collections, re, sys
on, off, start, end = collections.Counter(), collections.Counter(), {}, {}
for l in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s*.+?\s+(\d+)\s+([\d.]+):\s+PERF_RECORD_(\w+)", l)
    if m:
        tid, t, kind = int(m.group(1)), float(m.group(2)), m.group(3)
        if kind == "COMM" and "exec" in l:
            start[tid] = t
        elif kind == "FORK":
            start[int(re.search(r"FORK\(\d+:(\d+)\)", l).group(1))] = t
        elif kind == "EXIT":
            end[tid] = t
        continue
    m = re.match(r"\s*.+?\s+(\d+)\s+[\d.]+:\s+(\d+)\s+(\S+):", l)
    if m:
        tid, period, ev = int(m.group(1)), int(m.group(2)), m.group(3)
        if ev == "cpu-clock":
            on[tid] += period
        elif ev in ("offcpu-time", "offcpu-preempted"):
            off[tid] += period
threads = [t for t in start if t in end]
if len(threads) != 2:
    sys.exit(f"FAILED: {len(threads)} threads with a start and an exit, not 2: {start} {end}")
for tid in threads:
    life = (end[tid] - start[tid]) * 1e9
    err = (on[tid] + off[tid] - life) / life
    print(f"thread {tid}: lifetime {life / 1e6:.1f} ms, on-CPU {on[tid] / 1e6:.1f} + off-CPU {off[tid] / 1e6:.1f} ms ({err * 100:+.2f}%)")
    if abs(err) > 0.02:
        sys.exit(f"FAILED: thread {tid}: on + off CPU differs from its lifetime by {err * 100:.2f}%")
EOF

# chrome: the long blocks as slices on their threads, the pipe block's
# waker linked by a flow from the writer's thread.
"$cli" export -i "$data" -f chrome -o "$tmp/oc.json" || fail "export -f chrome"
python3 - "$tmp/oc.json" <<'EOF' || exit 1
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
long = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "offcpu" and 450e3 <= e["dur"] <= 600e3]
if len({e["tid"] for e in long}) != 2 or len(long) != 3:
    sys.exit(f"FAILED: chrome: {len(long)} off-CPU slices of 450-600 ms on {len({e['tid'] for e in long})} threads, not 3 on 2")
starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("cat") == "offcpu"}
flows = [(starts[e["id"]], e) for e in ev if e.get("ph") == "f" and e.get("id") in starts]
cross = [(s, f) for s, f in flows if s["tid"] != f["tid"]]
if not cross:
    sys.exit("FAILED: chrome: no wake-up flow from one thread to another")
print(f"chrome: {len(long)} long off-CPU slices, {len(flows)} wake-up flows")
EOF

# svg: one wall-time graph, the off-CPU frames in cold (blue) colours.
"$cli" export -i "$data" -f svg -o "$tmp/oc.svg" || fail "export -f svg"
cold=$(grep -c 'fill="rgb(\([0-9]*\),\1,2[0-9][0-9])"' "$tmp/oc.svg")
[ "$cold" -gt 0 ] || fail "svg: no cold (blue) frame"
grep -q 'sleeper' "$tmp/oc.svg" || fail "svg: no sleeper frame"
echo "svg: $cold cold frames"

# System wide (-a, the command run beside): every thread's blocks, the
# program's among them (in the BPF mode: the program's system-wide maps).
# (in the events mode a block ends at the sched_switch that brings the
# thread back: the program runs where the idle task's switches reach perf,
# see idle_visible_pin in lib.sh)
idle_visible_pin "$cli"
timeout $((WAIT_S * 2)) "$cli" record -a --off-cpu --off-cpu-mode "$mode" --off-cpu-thresh 100 -g -o "$tmp/all-$mode.data" -- "${pin[@]}" "$wl/offcpu" 500 500 300 \
	2>"$tmp/record.err" || fail "record -a --off-cpu --off-cpu-mode $mode: $(cat "$tmp/record.err")"
grep -q "$how" "$tmp/record.err" || fail "-a --off-cpu-mode $mode: the summary does not say '$how': $(grep 'off-CPU' "$tmp/record.err")"
"$cli" export -i "$tmp/all-$mode.data" -f folded -e offcpu-time -o "$tmp/all.folded" || fail "export -a's file"
in_range "-a: offcpu-time under sleeper" "$(under "$tmp/all.folded" sleeper)" 450 600
in_range "-a: offcpu-time under blocker" "$(under "$tmp/all.folded" blocker)" 450 600

# -z: the off-CPU samples go into COMPRESSED records with the rest (dump
# names a compressed record's offset for every record decoded from it):
# none at the top level, and perf reads them (as many as without -z).
timeout $((WAIT_S * 2)) "$cli" record -q --off-cpu --off-cpu-mode "$mode" --off-cpu-thresh 100 -g -z -o "$tmp/z-$mode.data" -- "$wl/offcpu" 500 500 300 \
	>/dev/null 2>"$tmp/record.err" || fail "record -z --off-cpu --off-cpu-mode $mode: $(cat "$tmp/record.err")"
"$cli" dump -i "$tmp/z-$mode.data" >"$tmp/z.dump" 2>&1 || fail "dump of the -z file: $(tail -3 "$tmp/z.dump")"
read -r nsamples top < <(awk '$3 ~ /^PERF_RECORD_COMPRESSED/ { c[$1] = 1 }
	$5 ~ /^PERF_RECORD_SAMPLE/ { n++; if (!($3 in c)) top++ }
	END { print n + 0, top + 0 }' "$tmp/z.dump")
[ "$nsamples" -gt 0 ] && [ "$top" = 0 ] || fail "-z --off-cpu-mode $mode: $top of $nsamples samples outside COMPRESSED records"
zoc=$(perf script -i "$tmp/z-$mode.data" 2>/dev/null | grep -c 'offcpu-time:')
[ "$zoc" -ge 2 ] || fail "-z --off-cpu-mode $mode: perf script shows $zoc offcpu-time samples"
echo "-z: $nsamples samples, all compressed; perf script: $zoc offcpu-time samples"
}

check_mode bpf
check_mode events
echo "PASS"
