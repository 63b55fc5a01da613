#!/usr/bin/env bash
# perfring export -f chrome with a trace.dat: the ftrace events of
# record --tracefs-event (<perf.data>.trace.dat, merged by default) and a
# trace.dat alone (ours, and trace-cmd convert's version 7 rewrite of it),
# judged by trace-cmd report (every event: its time to the microsecond,
# task, CPU and name, in the same order; the kernel's dropped-events
# marks) and by perf script (the same sched_switch seen by perf and by
# ftrace at the same time: one clock).  JSON checked by python3 (no key
# twice in an object).  Damaged trace.dat files are refused or cut, never
# crash (the ASan build).  Skips (77) only when the kernel refuses
# perf_event_open or tracefs is missing.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
acli=${PERFRING_ASAN_CLI:-$cli}
make_tmp
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $acli in /*) ;; *) acli=$PWD/$acli ;; esac
corpus=$PWD/fuzz/corpus/trace_dat
for tool in perf trace-cmd python3; do
	command -v $tool >/dev/null || fail "$tool is not installed (scripts/deps.sh installs it)"
done
[ -w /sys/kernel/tracing/instances ] || skip "no writable tracefs (not root?)"
cd "$tmp" || exit 1

# A session: perf's sched_switch and task-clock of the command, ftrace's
# sched_switch, exec and trace_marker writes of every CPU.
marks=40
if ! "$cli" record -e sched:sched_switch -e task-clock \
	--tracefs-event sched:sched_switch --tracefs-event sched:sched_process_exec \
	--tracefs-event ftrace:print -a -o s.data -- \
	sh -c "i=0; while [ \$i -lt $marks ]; do echo tdexport-mark-\$i > /sys/kernel/tracing/trace_marker; i=\$((i + 1)); done; ls / >/dev/null" \
	>rec.out 2>rec.err; then
	grep -q 'no permission\|not supported' rec.err && skip "the kernel refuses: $(head -2 rec.err)"
	fail "record: $(cat rec.err)"
fi
[ -s s.data.trace.dat ] || fail "record --tracefs-event wrote no s.data.trace.dat"

# json_ok FILE: a JSON object with no repeated key anywhere.
json_ok() {
	python3 -m json.tool "$1" >/dev/null 2>json.err || fail "$1 is not JSON: $(head -3 json.err)"
	python3 - "$1" <<'EOF' || fail "$1: a key repeated in an object"
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        sys.exit(f"repeated key in {keys}")
    return dict(pairs)
json.load(open(sys.argv[1]), object_pairs_hook=once)
EOF
}

# same_as_trace_cmd JSON TRACE.DAT: the ftrace instants are the events
# trace-cmd report prints, one for one in its order: task id, CPU, time
# (microseconds, rounded as trace-cmd rounds) and event name; the
# dropped-events marks too.  Prints the event count.
same_as_trace_cmd() {
	trace-cmd report -i "$2" >tc.txt 2>/dev/null || fail "trace-cmd report -i $2"
	python3 - "$1" tc.txt <<'EOF' || fail "$1 differs from trace-cmd report -i $2"
import json, re, sys
d = json.load(open(sys.argv[1]))
ours = []
marks = 0
for e in d["traceEvents"]:
    if e.get("cat") != "ftrace":
        continue
    a = e["args"]
    ns = round(e["ts"] * 1000)
    ours.append((e["tid"], a["cpu"], (ns + 500) // 1000, e["name"]))
    marks += "dropped_before" in a
line = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\S+):")
theirs = []
tc_marks = 0
for l in open(sys.argv[2], errors="replace"):
    if re.match(r"^CPU:\d+ \[.*EVENTS DROPPED\]", l):
        tc_marks += 1
        continue
    m = line.match(l)
    if m:
        theirs.append((int(m[2]), int(m[3]), int(m[4]) * 1000000 + int(m[5]), m[6]))
if not theirs:
    sys.exit("trace-cmd report printed no event")
if ours != theirs:
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            sys.exit(f"event {i}: ours {a}, trace-cmd {b}")
    sys.exit(f"{len(ours)} events, trace-cmd {len(theirs)}")
if marks != tc_marks:
    sys.exit(f"{marks} dropped marks, trace-cmd {tc_marks}")
if d["otherData"]["ftrace_events"] != len(ours):
    sys.exit("otherData.ftrace_events")
print(len(ours))
EOF
}

# 1. The session: the trace.dat beside the perf.data joins by default.
"$acli" export -i s.data -o s.json 2>exp.err || fail "export -i s.data: $(cat exp.err)"
[ ! -s exp.err ] || fail "export -i s.data said: $(head -3 exp.err)"
json_ok s.json
n=$(same_as_trace_cmd s.json s.data.trace.dat)
python3 - s.json "$marks" <<'EOF' || fail "s.json: the session's timeline"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
ft = [e for e in ev if e.get("cat") == "ftrace"]
marks = [e["args"]["buf"] for e in ft if e["name"] == "print"]
want = [f"tdexport-mark-{i}\n" for i in range(int(sys.argv[2]))]
if [m for m in marks if m.startswith("tdexport-mark-")] != want:
    sys.exit(f"markers: {marks[:3]}...")
execs = [e for e in ft if e["name"] == "sched_process_exec"]
if not any(e["args"]["filename"].endswith("/ls") for e in execs):
    sys.exit("no exec of ls with its filename")
sw = [e for e in ft if e["name"] == "sched_switch"]
for f in ("prev_comm", "prev_pid", "prev_state", "next_comm", "next_pid"):
    if f not in sw[0]["args"]:
        sys.exit(f"sched_switch without {f}: {sw[0]}")
# perf's sched_switch samples and ftrace's: the same switches at the same
# time (one clock), within 1 ms (the two probes run one after the other).
perf = [e for e in ev if e.get("cat") == "sched:sched_switch"]
if not perf:
    sys.exit("no perf sched_switch sample")
by = {}
for e in sw:
    a = e["args"]
    by.setdefault((a["cpu"], a["prev_pid"]), []).append(e["ts"])
# (only while both ran: the perf events and the tracefs instance start
# and stop one after the other, so a switch at either end may be in one
# of them alone)
span = {}
for e in sw:
    c = e["args"]["cpu"]
    lo, hi = span.get(c, (e["ts"], e["ts"]))
    span[c] = (min(lo, e["ts"]), max(hi, e["ts"]))
inside = [p for p in perf if p["args"]["cpu"] in span and
          span[p["args"]["cpu"]][0] <= p["ts"] <= span[p["args"]["cpu"]][1]]
if len(inside) < len(perf) // 2:
    sys.exit(f"only {len(inside)} of {len(perf)} perf sched_switch samples while ftrace recorded")
matched = 0
for p in inside:
    near = [t for t in by.get((p["args"]["cpu"], p["tid"]), []) if abs(t - p["ts"]) < 1000]
    matched += bool(near)
if matched != len(inside):
    sys.exit(f"{len(inside) - matched} of {len(inside)} perf sched_switch samples (while ftrace recorded) have no ftrace twin within 1 ms")
# perf's samples make the slices (not both files' switches).
if d["otherData"]["slices"] == 0:
    sys.exit("no slices")
ts = [e["ts"] for e in ev if "ts" in e and e.get("cat") in ("ftrace", "task-clock", "sched:sched_switch")]
if ts != sorted(ts):
    sys.exit("the merged events are not in time order")
print(f"session: {len(ft)} ftrace events, {len(perf)} perf sched_switch samples matched")
EOF
[ $? = 0 ] || exit 1
echo "session: $n ftrace events as trace-cmd report prints them, merged with the perf.data"

# --no-trace-dat: the perf.data alone; --trace-dat FILE: that file.
"$cli" export -i s.data --no-trace-dat -o alone.json || fail "--no-trace-dat"
! grep -q '"cat":"ftrace"' alone.json || fail "--no-trace-dat: ftrace events exported"
cp s.data.trace.dat other.dat
"$cli" export -i s.data --trace-dat other.dat -o other.json || fail "--trace-dat"
[ "$(grep -c '"cat":"ftrace"' other.json)" = "$n" ] || fail "--trace-dat other.dat: not its $n events"
# perf's sched_switch makes the slices; ftrace's copy of it adds none.
[ "$(grep -c '"cat":"sched","ph":"X"' s.json)" = "$(grep -c '"cat":"sched","ph":"X"' alone.json)" ] ||
	fail "the trace.dat's sched_switch added slices to perf's"
# A perf.data without sched_switch: the trace.dat's makes the slices.
"$cli" record -e task-clock --tracefs-event sched:sched_switch -a -o n.data -- ls / >/dev/null 2>n.err || fail "record n.data: $(cat n.err)"
"$cli" export -i n.data -o n.json 2>n.err || fail "export -i n.data: $(cat n.err)"
json_ok n.json
same_as_trace_cmd n.json n.data.trace.dat >/dev/null
python3 - n.json <<'EOF2' || fail "n.json: no slices from the trace.dat's sched_switch"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sw = {(e["args"]["cpu"], e["args"]["next_pid"], e["ts"]) for e in ev if e.get("cat") == "ftrace" and e["name"] == "sched_switch"}
sl = [e for e in ev if e.get("cat") == "sched" and e["ph"] == "X"]
if not sl or any((s["args"]["cpu"], s["tid"], s["ts"]) not in sw for s in sl):
    sys.exit(f"{len(sl)} slices")
EOF2
# The formats without a timeline take the perf.data alone; asked for a
# trace.dat they refuse.
"$cli" export -i s.data -f folded -o s.folded 2>f.err || fail "-f folded beside a trace.dat: $(cat f.err)"
"$cli" export -i s.data -f pprof --trace-dat other.dat -o x.pb 2>p.err && fail "-f pprof --trace-dat accepted"
grep -q 'only -f chrome' p.err || fail "-f pprof --trace-dat: $(cat p.err)"
"$cli" export -i s.data.trace.dat -f folded -o x.folded 2>p.err && fail "-f folded -i trace.dat accepted"
[ ! -e x.folded ] || fail "a refused export left its output"

# 2. The trace.dat alone: its events, and slices from its sched_switch.
"$acli" export -i s.data.trace.dat -o t.json 2>t.err || fail "export -i trace.dat: $(cat t.err)"
json_ok t.json
[ "$(same_as_trace_cmd t.json s.data.trace.dat)" = "$n" ] || fail "-i trace.dat: another event count"
python3 - t.json <<'EOF' || fail "t.json: slices from the trace.dat's sched_switch"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
sw = [e for e in ev if e.get("cat") == "ftrace" and e["name"] == "sched_switch"]
sl = [e for e in ev if e.get("cat") == "sched" and e["ph"] == "X"]
# A slice starts at a switch that names its thread next_pid on its CPU.
starts = {(e["args"]["cpu"], e["args"]["next_pid"], e["ts"]) for e in sw}
bad = [s for s in sl if (s["args"]["cpu"], s["tid"], s["ts"]) not in starts]
if not sl or bad:
    sys.exit(f"{len(sl)} slices, {len(bad)} not started by a switch: {bad[:1]}")
if "hostname" in d["otherData"]:
    sys.exit("perf.data fields without a perf.data")
EOF

# 3. A file written by trace-cmd (convert to version 7, zstd and none):
# the same export, event for event.
for comp in any none; do
	trace-cmd convert --compression $comp -i s.data.trace.dat -o v7.dat >/dev/null 2>&1 || fail "trace-cmd convert --compression $comp"
	"$acli" export -i v7.dat -o v7.json 2>v7.err || fail "export -i v7.dat ($comp): $(cat v7.err)"
	json_ok v7.json
	[ "$(same_as_trace_cmd v7.json v7.dat)" = "$n" ] || fail "v7 ($comp): another event count"
	python3 -c '
import json, sys
a, b = (json.load(open(f))["traceEvents"] for f in sys.argv[1:])
sys.exit(a != b)' t.json v7.json || fail "v7 ($comp): not the events of the version 6 file"
done
echo "trace.dat alone: ours and trace-cmd's version 7 rewrites export the same $n events"

# 4. Dropped events: the kernel's marks become dropped_before args where
# trace-cmd prints its EVENTS DROPPED lines.
"$acli" export -i "$corpus/dropped-events.dat" -o d.json 2>d.err || fail "dropped-events.dat: $(cat d.err)"
json_ok d.json
same_as_trace_cmd d.json "$corpus/dropped-events.dat" >/dev/null
grep -q '"dropped_before"' d.json || fail "dropped-events.dat: no dropped mark exported"

# 5. Damage: every cut of the file and flipped bytes in its data are
# refused or cut with an error, the output valid JSON when written (ASan).
size=$(stat -c %s s.data.trace.dat)
for cut in 16 200 4096 $((size / 2)) $((size - 100)); do
	head -c "$cut" s.data.trace.dat >cut.dat
	"$acli" export -i cut.dat -o cut.json 2>cut.err
	rc=$?
	grep -q 'ERROR: AddressSanitizer\|runtime error' cut.err && fail "cut at $cut: $(head -5 cut.err)"
	[ $rc -le 1 ] || fail "cut at $cut: exit $rc"
	[ $rc = 1 ] && [ ! -s cut.err ] && fail "cut at $cut: failed without a word"
	[ -s cut.json ] && json_ok cut.json
done
python3 - s.data.trace.dat flip.dat <<'EOF'
import random, sys
b = bytearray(open(sys.argv[1], "rb").read())
r = random.Random(7)
for _ in range(400):
    i = r.randrange(len(b) // 2, len(b))
    b[i] = r.randrange(256)
open(sys.argv[2], "wb").write(b)
EOF
"$acli" export -i flip.dat -o flip.json 2>flip.err
grep -q 'ERROR: AddressSanitizer\|runtime error' flip.err && fail "flipped bytes: $(head -5 flip.err)"
[ -s flip.json ] && json_ok flip.json
echo "damage: cut and flipped trace.dat files refused or cut, no crash"
exit 0
