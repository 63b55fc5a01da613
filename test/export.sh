#!/usr/bin/env bash
# perfring export: Chrome trace JSON, folded stacks and flame graph SVG
# from files recorded by perfring record and by the real perf record,
# checked with python3 (JSON), xmllint (XML) and perf script (the oracle
# for samples, threads and sched_switch).  Skips (77) only if the kernel
# refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
for tool in perf python3 xmllint; do
	command -v $tool >/dev/null || fail "$tool is not installed (.ci/run installs linux-perf python3 libxml2-utils)"
done

need_perf_events "$cli"

# export FILE FORMAT OUT [extra args]: must succeed without a word on stderr.
export_ok() {
	local in=$1 fmt=$2 out=$3
	shift 3
	"$cli" export -i "$in" -f "$fmt" -o "$out" "$@" 2>"$tmp/export.err" || fail "export -i $in -f $fmt: $(cat "$tmp/export.err")"
	[ ! -s "$tmp/export.err" ] || fail "export -i $in -f $fmt said: $(head -3 "$tmp/export.err")"
}
samples_in() { perf report --stats -i "$1" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}'; }
folded_total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
xml_ok() { xmllint --noout "$1" 2>"$tmp/xml.err" || fail "$1 is not well-formed XML: $(head -3 "$tmp/xml.err")"; }

# Checks a chrome export against perf script's view of the same file:
# JSON.  Prints "instants slices threads".  Arguments: json, perf script
# output with -F tid,pid,comm,cpu,time,event (--ns), names that must be
# thread names.
check_chrome() {
	python3 - "$@" 2>&1 <<'EOF'
import collections, json, re, sys
path, script = sys.argv[1], sys.argv[2]
want_names = sys.argv[3:]
try:
    d = json.load(open(path, encoding="utf-8"))
except Exception as e:
    sys.exit(f"{path}: not valid JSON: {e}")
if not isinstance(d, dict) or not isinstance(d.get("traceEvents"), list):
    sys.exit(f"{path}: no traceEvents array")
if d.get("displayTimeUnit") != "ns":
    sys.exit(f"{path}: displayTimeUnit is {d.get('displayTimeUnit')!r}")
ev = d["traceEvents"]
for e in ev:
    for k in ("name", "ph", "pid", "tid"):
        if k not in e:
            sys.exit(f"{path}: event without {k}: {e}")
    if not isinstance(e["pid"], int) or not isinstance(e["tid"], int):
        sys.exit(f"{path}: pid/tid not integers: {e}")
    if e["ph"] in ("i", "X") and not isinstance(e.get("ts"), (int, float)):
        sys.exit(f"{path}: no numeric ts: {e}")
inst = [e for e in ev if e["ph"] == "i"]
slices = [e for e in ev if e["ph"] == "X"]
meta = [e for e in ev if e["ph"] == "M"]
# perf script's samples: tid and time of each.
ref = collections.Counter()
times = collections.Counter()
for line in open(script, encoding="utf-8", errors="replace"):
    m = re.match(r"^\s*(.*?)\s+(\d+)/(\d+)\s+(?:\[(\d+)\]\s+)?(\d+)\.(\d+):", line)
    if not m:
        continue
    ref[int(m.group(3))] += 1
    times[(int(m.group(3)), int(m.group(5)) * 10**9 + int(m.group(6).ljust(9, "0")))] += 1
ours = collections.Counter(e["tid"] for e in inst)
if sum(ref.values()) != len(inst):
    sys.exit(f"{path}: {len(inst)} instants, perf script shows {sum(ref.values())} samples")
if ours != ref:
    diff = {t: (ours[t], ref[t]) for t in set(ours) | set(ref) if ours[t] != ref[t]}
    sys.exit(f"{path}: instants per tid differ from perf script (ours, perf): {dict(list(diff.items())[:5])}")
ourt = collections.Counter((e["tid"], round(e["ts"] * 1000)) for e in inst)
if ourt != times:
    sys.exit(f"{path}: instant times differ from perf script's sample times")
for e in inst:
    if e.get("s") != "t":
        sys.exit(f"{path}: instant not thread-scoped: {e}")
    a = e.get("args", {})
    for k in ("ip", "dso", "period", "cpu", "event"):
        if k not in a:
            sys.exit(f"{path}: instant without args.{k}: {e}")
tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
pnames = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
for e in inst + slices:
    if (e["pid"], e["tid"]) not in tnames:
        sys.exit(f"{path}: track {e['pid']}/{e['tid']} has no thread_name")
    if e["pid"] not in pnames:
        sys.exit(f"{path}: process {e['pid']} has no process_name")
for n in want_names:
    if n not in tnames.values():
        sys.exit(f"{path}: no thread named {n!r}: {sorted(set(tnames.values()))[:20]}")
# Slices of one thread never overlap.
by = collections.defaultdict(list)
for e in slices:
    if e["dur"] < 0:
        sys.exit(f"{path}: negative duration: {e}")
    by[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
for tid, v in by.items():
    v.sort()
    for a, b in zip(v, v[1:]):
        # ts and dur are exact to the ns in the file; their float sum at
        # ~1e10 us is not (one ulp is ~4e-6): half a ns of tolerance
        if b[0] < a[1] - 5e-4:
            sys.exit(f"{path}: slices of tid {tid} overlap: {a} {b}")
print(len(inst), len(slices), len(tnames))
EOF
}

# The slices sched_switch must give, computed from perf script: a thread
# runs on a CPU from the switch naming it next_pid until the switch there
# naming it prev_pid (idle excluded; open ones end at the last switch).
check_slices() {
	python3 - "$@" 2>&1 <<'EOF'
import collections, json, re, sys
path, script = sys.argv[1], sys.argv[2]
cpu_run, run_cpu, want, last = {}, {}, set(), 0
# Switches on two CPUs with the same timestamp may come in either order
# (perf's queue and ours both keep file order, which differs per ring), and
# a thread moving between those CPUs then gets its slice from either one:
# slices touching such a tie are left out of the comparison.
cpus_at = {}
for line in open(script, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*\[(\d+)\]\s+(\d+)\.(\d+):.*prev_pid=", line)
    if m:
        t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0"))
        cpus_at.setdefault(t, set()).add(int(m.group(1)))
ties = {t for t, c in cpus_at.items() if len(c) > 1}
for line in open(script, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*\[(\d+)\]\s+(\d+)\.(\d+):.*prev_pid=(\d+).*next_pid=(\d+)", line)
    if not m:
        continue
    cpu, t = int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0"))
    nxt = int(m.group(5))
    last = max(last, t)
    if cpu in cpu_run:
        tid, st = cpu_run.pop(cpu)
        run_cpu.pop(tid, None)
        want.add((tid, cpu, st, t))
    if nxt > 0:
        c2 = run_cpu.get(nxt)
        if c2 is not None and c2 != cpu and c2 in cpu_run:
            tid, st = cpu_run.pop(c2)
            want.add((tid, c2, st, t))
        cpu_run[cpu], run_cpu[nxt] = (nxt, t), cpu
for cpu, (tid, st) in cpu_run.items():
    if last > st:
        want.add((tid, cpu, st, last))
d = json.load(open(path, encoding="utf-8"))
got = set()
cpu_slices = collections.defaultdict(list)
for e in d["traceEvents"]:
    if e["ph"] == "X" and e.get("cat") == "cpu":
        st = round(e["ts"] * 1000)
        cpu_slices[e["tid"] - 1000000000].append((e["args"]["tid"], st, st + round(e["dur"] * 1000)))
for e in d["traceEvents"]:
    if e["ph"] == "X" and e.get("cat") == "sched":
        st = round(e["ts"] * 1000)
        got.add((e["tid"], e["args"]["cpu"], st, st + round(e["dur"] * 1000)))
if not want:
    sys.exit(f"{script}: no sched_switch in perf script's output")
# The CPU tracks hold the same runs, by CPU, never overlapping.
by_cpu = {(tid, cpu, st, en) for cpu, v in cpu_slices.items() for tid, st, en in v}
if by_cpu != got:
    sys.exit(f"{path}: CPU tracks' slices differ from the threads' ({len(by_cpu)}, {len(got)}): {sorted(by_cpu ^ got)[:3]}")
for cpu, v in cpu_slices.items():
    v.sort(key=lambda x: x[1])
    for a, b in zip(v, v[1:]):
        if b[1] < a[2]:
            sys.exit(f"{path}: slices on CPU {cpu} overlap: {a} {b}")
if ties:
    untied = lambda sl: {x for x in sl if x[2] not in ties and x[3] not in ties}
    got, want = untied(got), untied(want)
# A switch whose record lands in another ring's round can be ordered
# differently by perf and by us around it; allow a few such slices (1%).
bad = len(got ^ want)
if bad and bad <= max(2, len(want) // 100) and want:
    print(len(got))
    sys.exit(0)
if got != want:
    sys.exit(f"{path}: {len(got)} slices, expected {len(want)}; missing {sorted(want - got)[:3]}, extra {sorted(got - want)[:3]}")
print(len(got))
EOF
}

# Folded stacks as stackcollapse-perf.pl --kernel makes them from perf
# script: the stacks without kernel or unknown frames must be the same.
check_folded() {
	python3 - "$@" 2>&1 <<'EOF'
import collections, re, sys
folded, script = sys.argv[1], sys.argv[2]
ref, stack, comm = collections.Counter(), [], None
def flush():
    global stack, comm
    if comm is not None:
        ref[";".join([comm] + stack[::-1])] += 1
    stack, comm = [], None
for line in open(script, encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    if not line.strip():
        flush()
        continue
    if not line[0].isspace():
        flush()
        m = re.match(r"^(\S.*?)\s+\d+(/\d+)?\s+", line)
        comm = m.group(1).replace(" ", "_") if m else "?"
        continue
    m = re.match(r"^\s*(\w+)\s*(.+) \((\S*)\)$", line)
    if not m:
        continue
    pc, raw, mod = m.groups()
    raw = re.sub(r"\+0x[\da-f]+$", "", raw)
    f = raw
    if raw == "[unknown]":
        f = "[unknown]" if mod == "[unknown]" else "[" + mod.split("/")[-1] + "]"
    if re.match(r"(^\[|.*vmlinux$)", mod) and "unknown" not in mod:
        f += "_[k]"
    stack.append(f.replace(";", ":"))
flush()
ours = collections.Counter()
for line in open(folded, encoding="utf-8", errors="replace"):
    k, _, n = line.rstrip("\n").rpartition(" ")
    if not k or not n.isdigit():
        sys.exit(f"{folded}: malformed line {line!r}")
    ours[k] += int(n)
# (perf may leave the vDSO unresolved where we resolve it, or not)
plain = lambda c: {k: v for k, v in c.items() if "[k]" not in k and "unknown" not in k and "vdso" not in k}
if sum(ours.values()) != sum(ref.values()):
    sys.exit(f"{folded}: {sum(ours.values())} samples, perf script {sum(ref.values())}")
if plain(ours) != plain(ref):
    a, b = plain(ours), plain(ref)
    diff = [(k, a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)]
    sys.exit(f"{folded}: stacks differ from perf script's (ours, perf): {diff[:3]}")
print(len(ours))
EOF
}

# The chrome export's call stacks (samples + stackFrames) against the
# folded export of the same file: the same stacks, as many times each.
check_stacks() {
	python3 - "$@" 2>&1 <<'EOF'
import collections, json, sys
path, folded = sys.argv[1], sys.argv[2]
d = json.load(open(path, encoding="utf-8"))
frames, samples = d.get("stackFrames"), d.get("samples")
if not frames or not samples:
    sys.exit(f"{path}: no stackFrames/samples")
comm = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
inst = [e for e in d["traceEvents"] if e["ph"] == "i"]
if len(samples) != len(inst) or any(e.get("sf") is None for e in inst):
    sys.exit(f"{path}: {len(samples)} stack samples, {len(inst)} instants (each should have its stack)")
got = collections.Counter()
for s in samples:
    names, sf = [], s["sf"]
    while sf is not None:
        f = frames[sf]
        names.append(f["name"] + ("_[k]" if f["category"] == "kernel" else ""))
        sf = f.get("parent")
    got[";".join([comm[(s["pid"], s["tid"])].replace(" ", "_")] + names[::-1])] += 1
want = collections.Counter()
for line in open(folded, encoding="utf-8"):
    k, _, n = line.rstrip("\n").rpartition(" ")
    want[k] += int(n)
if got != want:
    diff = [(k, got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)]
    sys.exit(f"{path}: stacks differ from the folded export (chrome, folded): {diff[:3]}")
print(len(got))
EOF
}

# 1. perfring record -g of a program with a known hot function.
"$cli" record -q -g -e cpu-clock -F 2000 -o "$tmp/hot.data" -- "$wl/hot" 0.4 || fail "record -g hot"
n=$(samples_in "$tmp/hot.data")
[ "${n:-0}" -ge 100 ] || fail "only ${n:-0} samples of hot"
perf script -i "$tmp/hot.data" -G -F comm,pid,tid,cpu,time,event --ns >"$tmp/hot.script" 2>/dev/null || fail "perf script hot.data"
export_ok "$tmp/hot.data" chrome "$tmp/hot.json"
res=$(check_chrome "$tmp/hot.json" "$tmp/hot.script" hot) || fail "$res"
echo "hot chrome: instants slices threads = $res (perf: $n samples)"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [e["name"] for e in d["traceEvents"] if e["ph"] == "i"]
hot = names.count("hot_loop")
sys.exit(0 if hot * 10 >= len(names) * 8 else f"hot_loop names {hot} of {len(names)} instants")
' "$tmp/hot.json" || fail "hot.json: samples not named by their symbol"

export_ok "$tmp/hot.data" folded "$tmp/hot.folded"
[ "$(folded_total "$tmp/hot.folded")" = "$n" ] || fail "folded total $(folded_total "$tmp/hot.folded") != $n samples"
perf script -i "$tmp/hot.data" >"$tmp/hot.full" 2>/dev/null || fail "perf script hot.data"
res=$(check_folded "$tmp/hot.folded" "$tmp/hot.full") || fail "$res"
grep -Eq '^hot;.*main;hot_loop [0-9]+$' "$tmp/hot.folded" || fail "no hot;...;main;hot_loop stack: $(head -3 "$tmp/hot.folded")"
echo "hot folded: $res stacks, $n samples"
res=$(check_stacks "$tmp/hot.json" "$tmp/hot.folded") || fail "$res"
echo "hot chrome: $res stacks as folded has them"

export_ok "$tmp/hot.data" svg "$tmp/hot.svg" --title 'hot <&> "flame"'
xml_ok "$tmp/hot.svg"
grep -q 'hot_loop' "$tmp/hot.svg" || fail "hot.svg has no hot_loop frame"
grep -q '<script' "$tmp/hot.svg" || fail "hot.svg has no script"
grep -q 'hot &lt;&amp;&gt; &quot;flame&quot;' "$tmp/hot.svg" || fail "hot.svg: title not escaped"
grep -q "<title>all ($n samples, 100.00%)</title>" "$tmp/hot.svg" || fail "hot.svg: root frame is not all $n samples"

# Output to standard output: no -o, -o -; input perf.data by default.
(cd "$tmp" && cp hot.data perf.data && "$cli" export -f folded >"$tmp/stdout1.folded") || fail "export with no -i/-o"
"$cli" export -i "$tmp/hot.data" -f folded -o - >"$tmp/stdout2.folded" || fail "export -o -"
cmp -s "$tmp/stdout1.folded" "$tmp/hot.folded" || fail "export to stdout differs from -o FILE"
cmp -s "$tmp/stdout2.folded" "$tmp/hot.folded" || fail "export -o - differs from -o FILE"
"$cli" export -i "$tmp/hot.data" -f bogus >/dev/null 2>&1 && fail "an unknown format was accepted"
"$cli" export -i "$tmp/nonexistent.data" >/dev/null 2>&1 && fail "a missing input was accepted"

# 2. System-wide sched_switch: slices, checked against perf script.
"$cli" record -q -a -e sched:sched_switch -o "$tmp/ss.data" -- "$wl/pingpong" 2000 || fail "record -a sched_switch"
perf script -i "$tmp/ss.data" -G -F comm,pid,tid,cpu,time,event --ns >"$tmp/ss.script" 2>/dev/null || fail "perf script ss.data"
perf script -i "$tmp/ss.data" -G -F cpu,time,trace --ns >"$tmp/ss.trace" 2>/dev/null || fail "perf script ss.data"
export_ok "$tmp/ss.data" chrome "$tmp/ss.json"
res=$(check_chrome "$tmp/ss.json" "$tmp/ss.script" pingpong) || fail "$res"
read -r inst nsl _ <<<"$res"
[ "$nsl" -gt 0 ] || fail "sched_switch made no slices"
sl=$(check_slices "$tmp/ss.json" "$tmp/ss.trace") || fail "$sl"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
named = {(e["pid"], e["tid"]) for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"] == "pingpong"}
ran = {e["tid"] for e in d["traceEvents"] if e["ph"] == "X" and (e["pid"], e["tid"]) in named}
sys.exit(0 if len(ran) >= 2 else f"pingpong threads with slices: {ran} (named: {named})")
' "$tmp/ss.json" || fail "ss.json: both pingpong processes should have tracks with slices"
echo "sched_switch chrome: $inst instants, $nsl slices (as perf script's switches give)"
export_ok "$tmp/ss.data" folded "$tmp/ss.folded"
[ "$(folded_total "$tmp/ss.folded")" = "$inst" ] || fail "ss folded total $(folded_total "$tmp/ss.folded") != $inst samples"
export_ok "$tmp/ss.data" svg "$tmp/ss.svg"
xml_ok "$tmp/ss.svg"

# 3. Pipe format in (-i -), from a file and straight from record.
"$cli" record -q -g -a -e sched:sched_switch -o - -- "$wl/pingpong" 500 >"$tmp/pipe.data" || fail "record -o -"
# (perf 6.1's report --stats fails on pipes with tracing data; script works)
perf script -i - -G -F comm,pid,tid,cpu,time,event --ns <"$tmp/pipe.data" >"$tmp/pipe.script" 2>/dev/null || fail "perf script pipe"
n=$(wc -l <"$tmp/pipe.script")
perf script -i - -G -F cpu,time,trace --ns <"$tmp/pipe.data" >"$tmp/pipe.trace" 2>/dev/null || fail "perf script pipe"
"$cli" export -i - -f chrome <"$tmp/pipe.data" >"$tmp/pipe.json" || fail "export -i - chrome"
res=$(check_chrome "$tmp/pipe.json" "$tmp/pipe.script" pingpong) || fail "$res"
sl=$(check_slices "$tmp/pipe.json" "$tmp/pipe.trace") || fail "pipe: $sl"
"$cli" export -i - -f folded <"$tmp/pipe.data" >"$tmp/pipe.folded" || fail "export -i - folded"
[ "$(folded_total "$tmp/pipe.folded")" = "$n" ] || fail "pipe folded total $(folded_total "$tmp/pipe.folded") != $n"
"$cli" export -i - -f svg <"$tmp/pipe.data" >"$tmp/pipe.svg" || fail "export -i - svg"
xml_ok "$tmp/pipe.svg"
# (the stream is kept on the side: perf script says how many samples it
# holds, however few a loaded machine gave)
"$cli" record -q -e cpu-clock -F 1000 -o - -- "$wl/hot" 0.2 2>/dev/null | tee "$tmp/live.data" |
	"$cli" export -i - -f chrome >"$tmp/live.json" || fail "record | export"
n=$(perf script -i - -F tid <"$tmp/live.data" 2>/dev/null | wc -l)
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); k = sum(e["ph"] == "i" for e in d["traceEvents"]); sys.exit(0 if k == int(sys.argv[2]) > 0 else f"{k} instants, perf script {sys.argv[2]} samples")' "$tmp/live.json" "$n" ||
	fail "record -o - | export -i -: $(head -c 300 "$tmp/live.json")"
echo "pipe: $res, $sl slices, folded $n samples"

# 4. The real perf record: -g, and system-wide sched_switch.
perf record -q -g -F 2000 -o "$tmp/perf.data" -- "$wl/hot" 0.3 >/dev/null 2>&1 || fail "perf record -g"
n=$(samples_in "$tmp/perf.data")
perf script -i "$tmp/perf.data" -G -F comm,pid,tid,time,event --ns >"$tmp/perf.script" 2>/dev/null || fail "perf script perf.data"
perf script -i "$tmp/perf.data" >"$tmp/perf.full" 2>/dev/null || fail "perf script perf.data"
export_ok "$tmp/perf.data" chrome "$tmp/perf.json"
res=$(check_chrome "$tmp/perf.json" "$tmp/perf.script" hot) || fail "$res"
export_ok "$tmp/perf.data" folded "$tmp/perf.folded"
[ "$(folded_total "$tmp/perf.folded")" = "$n" ] || fail "perf.data folded total $(folded_total "$tmp/perf.folded") != $n"
fres=$(check_folded "$tmp/perf.folded" "$tmp/perf.full") || fail "$fres"
res=$(check_stacks "$tmp/perf.json" "$tmp/perf.folded") || fail "$res"
export_ok "$tmp/perf.data" svg "$tmp/perf.svg"
xml_ok "$tmp/perf.svg"
echo "perf record -g: chrome $res, folded $fres stacks, $n samples"
perf record -q -a -e sched:sched_switch -o "$tmp/pss.data" -- "$wl/pingpong" 1000 >/dev/null 2>&1 || fail "perf record -a sched_switch"
perf script -i "$tmp/pss.data" -G -F comm,pid,tid,cpu,time,event --ns >"$tmp/pss.script" 2>/dev/null || fail "perf script pss.data"
perf script -i "$tmp/pss.data" -G -F cpu,time,trace --ns >"$tmp/pss.trace" 2>/dev/null || fail "perf script pss.data"
export_ok "$tmp/pss.data" chrome "$tmp/pss.json"
res=$(check_chrome "$tmp/pss.json" "$tmp/pss.script" pingpong) || fail "$res"
sl=$(check_slices "$tmp/pss.json" "$tmp/pss.trace") || fail "perf sched_switch: $sl"
echo "perf record -a sched_switch: $res, $sl slices"

# 4b. A counting event: counter tracks, per process, the running total of
# the periods, ending at what perf report counts.
"$cli" record -q -e page-faults -c 1 -o "$tmp/pf.data" -- "$wl/faults" >/dev/null 2>&1 || fail "record page-faults"
export_ok "$tmp/pf.data" chrome "$tmp/pf.json"
want=$(perf report -i "$tmp/pf.data" --stdio --sort pid 2>/dev/null | awk '/Event count/ {print $NF; exit}')
python3 - "$tmp/pf.json" "${want:-0}" <<'EOF' || fail "page-faults counters"
import collections, json, sys
d = json.load(open(sys.argv[1]))
c = [e for e in d["traceEvents"] if e["ph"] == "C"]
inst = [e for e in d["traceEvents"] if e["ph"] == "i"]
if not c or len(c) != len(inst):
    sys.exit(f"{len(c)} counter events for {len(inst)} samples")
last = collections.defaultdict(int)
for e in c:
    v = e["args"][e["name"]]
    if v <= last[e["pid"]]:
        sys.exit(f"counter of pid {e['pid']} does not grow: {last[e['pid']]} then {v}")
    last[e["pid"]] = v
if sum(last.values()) != int(sys.argv[2]):
    sys.exit(f"counters end at {sum(last.values())}, perf report counts {sys.argv[2]}")
EOF
echo "page-faults chrome: counter tracks as perf report counts"

# 5. Names that need escaping: quotes, backslash, <&>, UTF-8 and a byte
# that is not UTF-8.
weird=$tmp/$'q"b\\<&>\xc3\xa9\xff'
cp "$wl/hot" "$weird"
"$cli" record -q -g -e cpu-clock -F 1000 -o "$tmp/weird.data" -- "$weird" 0.2 || fail "record weird name"
export_ok "$tmp/weird.data" chrome "$tmp/weird.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = {e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M"}
want = "q\"b\\<&>\u00e9\u00ff"
sys.exit(0 if want in names else f"{want!r} not in {names}")
' "$tmp/weird.json" || fail "weird.json: the escaped comm did not come back"
export_ok "$tmp/weird.data" svg "$tmp/weird.svg" --title $'t\xff<'
xml_ok "$tmp/weird.svg"
export_ok "$tmp/weird.data" folded "$tmp/weird.folded"
[ "$(folded_total "$tmp/weird.folded")" = "$(samples_in "$tmp/weird.data")" ] || fail "weird folded total"
echo "escaping: ok"

# 6. A damaged file: what comes before the damage is still well-formed.
# Cut inside a record: records are whole multiples of 8 bytes, so 4 past an
# 8-byte boundary never ends one (a stream cut between two records is a
# complete stream: half the size landed on a boundary in 2 of 101 tries).
sz=$(stat -c %s "$tmp/pipe.data")
head -c $((sz / 2 / 8 * 8 + 4)) "$tmp/pipe.data" >"$tmp/cut.data"
"$cli" export -i - -f chrome <"$tmp/cut.data" >"$tmp/cut.json" 2>/dev/null && fail "a truncated stream exported without an error"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/cut.json" || fail "truncated input: the JSON is not complete"
"$cli" export -i - -f svg <"$tmp/cut.data" >"$tmp/cut.svg" 2>/dev/null
xml_ok "$tmp/cut.svg"
echo "damaged input: complete output, error status"
echo "export: all checks passed"
