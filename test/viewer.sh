#!/usr/bin/env bash
# perfring export -f chrome in a real viewer: speedscope (npm, installed
# into a cache under build/ on first use) in headless Chromium loads the
# export of a perfring record -g file and must show the thread, every frame
# of its stacks (the sandwich view's table), self time where the samples
# end, hot_loop on top, and self times adding up to the samples' span.  Skips
# (77) only when the kernel refuses perf_event_open; chromium missing is a
# failure (scripts/deps.sh installs it).  SCREENSHOT=FILE keeps the flame chart's picture.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
modules_dir=${VIEWER_CACHE:-build/viewer}
make_tmp
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
case $modules_dir in /*) ;; *) modules_dir=$PWD/$modules_dir ;; esac
here=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || fail "chromium is not installed (scripts/deps.sh installs it)"
export CHROMIUM
for tool in node npm python3; do
	command -v $tool >/dev/null || fail "$tool is not installed (scripts/deps.sh installs npm)"
done

# The viewer and the browser driver, pinned, once per build directory.
speedscope=1.25.0 puppeteer=24.43.1
have() { node -e "process.exit(require('$modules_dir/node_modules/$1/package.json').version === '$2' ? 0 : 1)" 2>/dev/null; }
if ! have speedscope $speedscope || ! have puppeteer-core $puppeteer; then
	mkdir -p "$modules_dir"
	timeout 600 npm install --prefix "$modules_dir" --no-audit --no-fund --loglevel=error \
		"speedscope@$speedscope" "puppeteer-core@$puppeteer" >"$tmp/npm.log" 2>&1 ||
		fail "npm install speedscope puppeteer-core: $(tail -5 "$tmp/npm.log")"
fi

need_perf_events "$cli"

"$cli" record -q -g -e cpu-clock -F 2000 -o "$tmp/hot.data" -- "$wl/hot" 0.3 || fail "record -g hot"
"$cli" export -i "$tmp/hot.data" -f chrome -o "$tmp/hot.json" || fail "export -f chrome"
timeout 300 node "$here/viewer-speedscope.cjs" "$modules_dir/node_modules" "$tmp/hot.json" "$tmp/shot.png" \
	>"$tmp/page.json" 2>"$tmp/node.err" || fail "speedscope in chromium: $(tail -5 "$tmp/node.err")"
python3 - "$tmp/hot.json" "$tmp/page.json" <<'EOF' || exit 1
import collections, json, re, sys
d = json.load(open(sys.argv[1]))
page = json.load(open(sys.argv[2]))
def die(msg):
    print(f"FAILED: speedscope: {msg}", file=sys.stderr)
    sys.exit(1)
if page.get("errors"):
    die(f"page errors: {page['errors'][:3]}")
# The thread speedscope opens first: the lowest pid/tid with samples.
by = collections.defaultdict(list)
for s in d["samples"]:
    by[(s["pid"], s["tid"])].append(s)
pid, tid = min(by)
samples = by[(pid, tid)]
if f"(pid {pid})" not in page["text"] or f"(tid {tid})" not in page["text"]:
    die(f"the page does not name pid {pid} tid {tid}: {page['text'][:200]!r}")
frames = d["stackFrames"]
def stack(sf):
    out = []
    while sf is not None:
        out.append(sf)
        sf = frames[sf].get("parent")
    return out
# speedscope weighs a sample by the time to the thread's next one (the
# last weighs nothing): the frames of samples with weight are shown.
weighed = [s for s, nxt in zip(samples, samples[1:]) if nxt["ts"] > s["ts"]]
keys = {(frames[f]["name"], frames[f]["category"]) for s in weighed for f in stack(s["sf"])}
rows = page["rows"]
names = sorted(r[2] for r in rows)
if names != sorted(n for n, _ in keys):
    die(f"{len(rows)} frames shown, {len(keys)} in the stacks: {sorted(set(names) ^ {n for n, _ in keys})[:5]}")
leaves = {frames[s["sf"]]["name"] for s in weighed}
unit = {"ns": 1e-3, "µs": 1, "us": 1, "ms": 1e3, "s": 1e6}
def us(cell):
    m = re.match(r"([\d.]+)(ns|µs|us|ms|s)\b", cell)
    return float(m.group(1)) * unit[m.group(2)] if m else None
selfs = {r[2] for r in rows if us(r[1])}
if selfs != leaves:
    die(f"frames with self time {sorted(selfs)[:5]}, samples end in {sorted(leaves)[:5]}")
span = samples[-1]["ts"] - samples[0]["ts"]
self_sum = sum(us(r[1]) for r in rows)
if abs(self_sum - span) > max(0.01 * span, 1):
    die(f"the self times add up to {self_sum:.1f} us, the samples span {span:.1f} us")
hot = [r for r in rows if r[2] == "hot_loop"]
if not hot or us(hot[0][1]) < 0.8 * span:
    die(f"hot_loop's self time is not most of the profile: {hot}")
print(f"speedscope: pid {pid} tid {tid}, {len(samples)} samples over {span / 1000:.1f} ms, {len(rows)} frames shown as exported")
EOF
file "$tmp/shot.png" | grep -q 'PNG image data, 1000 x 420' || fail "no screenshot: $(file "$tmp/shot.png")"
[ -z "${SCREENSHOT:-}" ] || cp "$tmp/shot.png" "$SCREENSHOT"
echo "viewer: all checks passed"
