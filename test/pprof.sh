#!/usr/bin/env bash
# perfring export -f pprof and record --pprof, judged by `go tool pprof`:
# its -top must list the functions perfring report --no-children --sort sym
# lists, with the same flat sample counts, and its -traces the stacks of
# the folded export, for a -g file of perfring record and one of the real
# perf record.  Skips (77) only if the kernel refuses perf_event_open;
# go missing is a failure (scripts/deps.sh installs golang-go).
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
need_cmd go golang-go
for tool in perf python3; do
	command -v $tool >/dev/null || fail "$tool is not installed"
done
# go tool pprof wants a writable home and build cache.
export HOME=$tmp/home GOCACHE=$tmp/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$HOME"
pprof() { timeout 120 go tool pprof -symbolize=none "$@" 2>"$tmp/pprof.err"; }

need_perf_events "$cli"

# check NAME DATA [PROGRAM]: pprof export of DATA against report and
# folded (PROGRAM: the executable's name, hot by default).
check() {
	local name=$1 data=$2 prog=${3:-hot} pb=$tmp/$1.pb.gz
	"$cli" export -i "$data" -f pprof -o "$pb" 2>"$tmp/export.err" || fail "$name: export -f pprof: $(cat "$tmp/export.err")"
	[ ! -s "$tmp/export.err" ] || fail "$name: export -f pprof said: $(head -3 "$tmp/export.err")"
	gzip -t "$pb" || fail "$name: not gzip"
	"$cli" report -i "$data" --no-children --sort sym -n --stdio >"$tmp/$name.report" 2>/dev/null || fail "$name: report"
	"$cli" export -i "$data" -f folded -o "$tmp/$name.folded" || fail "$name: export -f folded"
	pprof -sample_index=samples -top -nodecount=20 -nodefraction=0 "$pb" >"$tmp/$name.top" || fail "$name: go tool pprof -top: $(head -5 "$tmp/pprof.err")"
	pprof -sample_index=samples -traces "$pb" >"$tmp/$name.traces" || fail "$name: go tool pprof -traces: $(head -5 "$tmp/pprof.err")"
	pprof -raw "$pb" >"$tmp/$name.raw" || fail "$name: go tool pprof -raw: $(head -5 "$tmp/pprof.err")"
	python3 - "$name" "$tmp/$name.report" "$tmp/$name.top" "$tmp/$name.folded" "$tmp/$name.traces" "$tmp/$name.raw" "$prog" <<'EOF' || exit 1
import collections, re, sys
name, report, top, folded, traces, raw, prog = sys.argv[1:]
def die(msg):
    print(f"FAILED: {name}: {msg}", file=sys.stderr)
    sys.exit(1)
# perfring report: "  99.34%  600  [.] hot_loop"; one name may be both a
# kernel and a user symbol: pprof merges functions by name.
rep = collections.Counter()
total = None
for line in open(report, errors="replace"):
    m = re.match(r"# Samples: (\d+)", line)
    if m:
        total = int(m.group(1))
    m = re.match(r"^\s+[\d.]+%\s+(\d+)\s+\[.\]\s+(.*?)\s*$", line)
    if m:
        rep[m.group(2)] += int(m.group(1))
if not rep or total is None:
    die(f"no symbols in perfring report's output")
unresolved = lambda n: re.match(r"^(0x)?[0-9a-f]+$", n) or n.startswith("[")
ptotal = None
flat = {}
for line in open(top, errors="replace"):
    m = re.search(r"of (\d+) total", line)
    if m:
        ptotal = int(m.group(1))
    m = re.match(r"^\s+(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*?)\s*$", line)
    if m:
        flat[m.group(3)] = int(m.group(1))
if ptotal != total:
    die(f"pprof total {ptotal} samples, report {total}")
named = {n: c for n, c in flat.items() if c and not unresolved(n)}
if not named:
    die(f"pprof -top lists no named function: {open(top).read()[:500]}")
for n, c in named.items():
    if rep.get(n) != c:
        die(f"{n}: pprof flat {c}, report {rep.get(n)}")
least = min(named.values())
for n, c in rep.items():
    if c > least and not unresolved(n) and n not in named:
        die(f"{n} ({c} samples) is in report's list but not in pprof's top 20")
# Stacks: pprof -traces against the folded export (kernel frames' "_[k]"
# dropped; stacks with unresolved frames left out on both sides).
fold = collections.Counter()
ftotal = 0
for line in open(folded, errors="replace"):
    k, _, c = line.rstrip("\n").rpartition(" ")
    ftotal += int(c)
    frames = k.split(";")
    if any(f.startswith("[") for f in frames[1:]):
        continue
    fold[";".join([frames[0]] + [f[:-4] if f.endswith("_[k]") else f for f in frames[1:]])] += int(c)
trc = collections.Counter()
ttotal = 0
for block in open(traces, errors="replace").read().split("-----------+")[1:]:
    comm, count, frames = None, None, []
    for line in block.split("\n")[1:]:
        m = re.match(r"^\s+comm:\s+(.*)$", line)
        if m:
            comm = m.group(1).replace(" ", "_")
            continue
        if re.match(r"^\s+\w+:\s", line):
            continue
        m = re.match(r"^\s+(\d+)\s+(\S.*)$", line)
        if m and count is None:
            count = int(m.group(1))
            frames.append(m.group(2))
            continue
        m = re.match(r"^\s{13}(\S.*)$", line)
        if m:
            frames.append(m.group(1))
    if count is None:
        continue
    ttotal += count
    if comm is None:
        die(f"a -traces sample without a comm label: {block[:300]}")
    if any(unresolved(f) or f == "<unknown>" for f in frames):
        continue
    trc[";".join([comm] + frames[::-1])] += count
if ttotal != ftotal or ttotal != total:
    die(f"-traces {ttotal} samples, folded {ftotal}, report {total}")
if trc != fold:
    diff = [(k, trc.get(k), fold.get(k)) for k in set(trc) | set(fold) if trc.get(k) != fold.get(k)]
    die(f"-traces and folded stacks differ (pprof, folded): {diff[:3]}")
r = open(raw, errors="replace").read()
for want in ("PeriodType: cpu-clock nanoseconds", "samples/count cpu-clock/nanoseconds", "Time: ", "Duration: "):
    if want not in r:
        die(f"-raw has no {want!r}")
if not re.search(r"^\d+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ \S*/" + re.escape(prog) + r" [0-9a-f]{40} \[FN\]", r, re.M):
    die(f"-raw: no mapping of the {prog} binary with a build-id: {r[r.find('Mappings'):][:400]}")
for lab in ("pid:", "tid:", "cpu:", "comm:"):
    if lab not in r:
        die(f"-raw: samples without a {lab} label")
print(f"{name}: {len(named)} functions, {len(trc)} stacks, {total} samples as report and folded give")
EOF
}

# 1. perfring record -g.
"$cli" record -q -g -e cpu-clock -F 2000 -o "$tmp/ours.data" -- "$wl/hot" 0.4 || fail "record -g hot"
check ours "$tmp/ours.data"
grep -q 'hot_loop' "$tmp/ours.top" || fail "ours: no hot_loop in pprof -top"

# 2. The real perf record -g.
perf record -q -g -e cpu-clock -F 2000 -o "$tmp/perf.data" -- "$wl/hot" 0.4 >/dev/null 2>&1 || fail "perf record -g"
check perf "$tmp/perf.data"
grep -q 'hot_loop' "$tmp/perf.top" || fail "perf: no hot_loop in pprof -top"

# 2b. --call-graph dwarf: the unwound user frames are the pprof stacks too.
"$cli" record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/dwarf.data" -- "$wl/nofp" 0.3 || fail "record --call-graph dwarf"
check dwarf "$tmp/dwarf.data" nofp
grep -q 'chain_inner' "$tmp/dwarf.traces" || fail "dwarf: no chain_inner in pprof -traces"

# 3. Other events count: page-faults (with -c 1, each sample one fault,
# as many as perf report counts, most in touch_first), and a tracepoint.
"$cli" record -q -g -e page-faults -c 1 -o "$tmp/pf.data" -- "$wl/faults" 2000 || fail "record page-faults"
"$cli" export -i "$tmp/pf.data" -f pprof -o "$tmp/pf.pb.gz" || fail "export page-faults"
pprof -raw "$tmp/pf.pb.gz" >"$tmp/pf.raw" || fail "pf: go tool pprof -raw: $(head -5 "$tmp/pprof.err")"
grep -q 'samples/count page-faults/count' "$tmp/pf.raw" || fail "page-faults: sample types: $(grep -m1 -A1 Samples: "$tmp/pf.raw")"
pprof -sample_index=page-faults -top "$tmp/pf.pb.gz" >"$tmp/pf.top" || fail "pf: -top: $(head -5 "$tmp/pprof.err")"
want=$(perf report -i "$tmp/pf.data" --stdio 2>/dev/null | awk '/Event count/ {print $NF; exit}')
grep -q "of ${want:-x} total" "$tmp/pf.top" || fail "page-faults: pprof total is not perf report's event count ${want:-?}: $(grep total "$tmp/pf.top")"
grep -Eq '^ +[0-9]+ +[0-9.]+% .* touch_first$' "$tmp/pf.top" || fail "page-faults: no touch_first: $(head -12 "$tmp/pf.top")"
"$cli" record -q -e sched:sched_switch -o "$tmp/tp.data" -- "$wl/pingpong" 200 || fail "record sched_switch"
"$cli" export -i "$tmp/tp.data" -f pprof -o "$tmp/tp.pb.gz" || fail "export sched_switch"
pprof -raw "$tmp/tp.pb.gz" >"$tmp/tp.raw" || fail "tp: go tool pprof -raw: $(head -5 "$tmp/pprof.err")"
grep -q 'samples/count sched:sched_switch/count' "$tmp/tp.raw" || fail "sched_switch: sample types: $(grep -m1 -A1 Samples: "$tmp/tp.raw")"
echo "page-faults: $want faults as perf report counts; sched_switch counts"

# 4. perfring record --pprof: the profile straight from the recording.
"$cli" record -q -g -e cpu-clock -F 1000 -o "$tmp/direct.data" --pprof "$tmp/direct.pb.gz" -- "$wl/hot" 0.3 || fail "record --pprof"
[ -s "$tmp/direct.pb.gz" ] || fail "record --pprof wrote nothing"
"$cli" export -i "$tmp/direct.data" -f pprof -o "$tmp/direct2.pb.gz" || fail "export direct.data"
pprof -sample_index=samples -top "$tmp/direct.pb.gz" >"$tmp/d1.top" || fail "record --pprof output: $(head -5 "$tmp/pprof.err")"
pprof -sample_index=samples -top "$tmp/direct2.pb.gz" >"$tmp/d2.top" || fail "export of direct.data: $(head -5 "$tmp/pprof.err")"
diff <(grep -v '^Time:' "$tmp/d1.top") <(grep -v '^Time:' "$tmp/d2.top") >/dev/null ||
	fail "record --pprof differs from export -f pprof of the same file"
grep -q hot_loop "$tmp/d1.top" || fail "record --pprof: no hot_loop"
echo "record --pprof: same profile as export -f pprof"

# 5. Damaged and hostile input: a cut file still gives a readable profile.
sz=$(stat -c %s "$tmp/ours.data")
head -c $((sz * 2 / 3)) "$tmp/ours.data" >"$tmp/cut.data"
"$cli" export -i "$tmp/cut.data" -f pprof -o "$tmp/cut.pb.gz" 2>/dev/null
[ -s "$tmp/cut.pb.gz" ] && { pprof -top "$tmp/cut.pb.gz" >/dev/null || fail "cut file: pprof cannot read the profile"; }
echo "pprof: all checks passed"
