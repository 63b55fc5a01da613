#!/usr/bin/env bash
# perfring record --switch-output=SIZE|TIME|signal with application events
# (test/apps/apptrace) and kernel events (sched:sched_switch): every file
# is a perf.data perf report and perf script read without a warning; the
# application events are split across the files with none lost and none
# twice (each thread's apptest:tick sequence, concatenated in file order,
# is 0..N-1 exactly; the program's own count agrees) and the kernel's
# samples add up to what the recorder wrote, none in two files.  Skips
# (77) only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
make_tmp
bg=()
cleanup() {
	for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
}
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $apps in /*) ;; *) apps=$PWD/$apps ;; esac
app=$apps/apptrace
T="timeout 120"
for tool in perf python3; do
	command -v $tool >/dev/null || fail "$tool is not installed"
done
[ -x "$app" ] || fail "$app is not built (make $app)"
if ! "$cli" record -q -e sched:sched_switch -o "$tmp/probe.data" -- true 2>"$tmp/probe.err"; then
	grep -q 'no permission' "$tmp/probe.err" && skip "kernel refuses perf_event_open: $(cat "$tmp/probe.err")"
	fail "record -- true: $(cat "$tmp/probe.err")"
fi

perf_ok() {
	local out
	out=$(perf report --stats -i "$1" 2>&1) || fail "perf report --stats failed on $1: $out"
	grep -Eiq 'warning|error|incompatible|failed|unsupported' <<<"$out" &&
		fail "perf report --stats complained about $1: $(grep -Ei 'warning|error|incompatible|failed|unsupported' <<<"$out" | head -3)"
	out=$(perf script -i "$1" 2>&1 >/dev/null) || fail "perf script failed on $1: $out"
	grep -Eiq 'warning|error|incompatible|failed' <<<"$out" && fail "perf script complained about $1: $(head -3 <<<"$out")"
	return 0
}

# check NAME THREADS EVENTS RUNS MINFILES: the files $tmp/NAME.*, from
# RUNS runs of apptrace THREADS EVENTS (their "emitted" lines in
# $tmp/NAME.app), against the recorder's summary in $tmp/NAME.err.
check() {
	local name=$1 threads=$2 events=$3 runs=$4 minfiles=$5 files f
	# <output>.YYYYmmddHHMMSScc[.N], in the order they were written
	mapfile -t files < <(printf '%s\n' "$tmp/$name".[0-9]* | grep -E '\.[0-9]{16}(\.[0-9]+)?$' | sort -V)
	[ "${#files[@]}" -ge "$minfiles" ] || fail "$name: ${#files[@]} files (${files[*]}), want $minfiles or more"
	[ -e "$tmp/$name" ] && fail "$name: $tmp/$name left unrenamed"
	for f in "${files[@]}"; do
		perf_ok "$f"
		perf script -i "$f" -F pid,cpu,time,event,trace --ns >"$f.txt" 2>/dev/null || fail "perf script -i $f"
		perf report --stats -i "$f" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}' >"$f.n"
	done
	python3 - "$name" "$threads" "$events" "$runs" "$tmp/$name.app" "$tmp/$name.err" "${files[@]}" <<'EOF' || fail "$name: events split wrongly"
import re, sys
name, threads, events, runs, appout, recerr = sys.argv[1:7]
threads, events, runs = int(threads), int(events), int(runs)
files = sys.argv[7:]
emitted = [int(m[1]) for m in re.finditer(r"emitted (\d+) lost (\d+)", open(appout).read())]
lost = [int(m[1]) for m in re.finditer(r"emitted \d+ lost (\d+)", open(appout).read())]
if len(emitted) != runs or any(lost):
    sys.exit(f"the program said: {open(appout).read()!r}")
seqs = {}
kernel = set()
apps_total = 0
samples_total = 0
per_file = []
for f in files:
    n_app = n_k = 0
    for l in open(f + ".txt", errors="replace"):
        m = re.match(r"\s*(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\S+):\s*(.*)", l)
        if not m:
            continue
        pid, cpu, t, ev, rest = m.groups()
        if ev.startswith("apptest:"):
            apps_total += 1
            n_app += 1
            if ev == "apptest:tick":
                s = re.search(r"seq=(\d+) thread=(\d+)", rest)
                seqs.setdefault((pid, s[2]), []).append(int(s[1]))
        elif ev == "sched:sched_switch":
            key = (cpu, t, rest)
            if key in kernel:
                sys.exit(f"{f}: a sched_switch twice: {l.strip()}")
            kernel.add(key)
            n_k += 1
    samples_total += int(open(f + ".n").read() or 0)
    per_file.append((n_app, n_k))
if len(seqs) != threads * runs:
    sys.exit(f"{len(seqs)} threads' ticks, want {threads * runs}")
for k, v in seqs.items():
    if v != list(range(events)):
        missing = sorted(set(range(events)) - set(v))
        sys.exit(f"thread {k}: {len(v)} ticks, {len(missing)} missing, {len(v) - len(set(v))} twice, in order: {v == sorted(v)}")
# Every application event the programs emitted (ticks, msgs, begin/end).
if apps_total != sum(emitted):
    sys.exit(f"{apps_total} application events in the files, the programs emitted {sum(emitted)}")
# The recorder's count of samples: kernel's and application's.
m = re.search(r"\((\d+) samples,", open(recerr).read())
if not m or int(m[1]) != samples_total:
    sys.exit(f"the files hold {samples_total} samples, the recorder says {m and m[1]}")
if samples_total != apps_total + len(kernel):
    sys.exit(f"{samples_total} samples, {apps_total} application + {len(kernel)} sched_switch")
split = sum(1 for a, _ in per_file if a)
print(f"{name}: {len(files)} files, {apps_total} application events in {split} of them, {len(kernel)} sched_switch, none lost or twice")
EOF
}

# SIZE: about every 64 KiB of data.
$T "$cli" record -e sched:sched_switch --switch-output=64K -o "$tmp/size" -- \
	"$app" 2 20000 --rate 20000 >"$tmp/size.app" 2>"$tmp/size.err" || fail "record --switch-output=64K: $(cat "$tmp/size.err")"
check size 2 20000 1 3

# TIME: every second, over about 2.5 s.
$T "$cli" record -e sched:sched_switch --switch-output=1s -o "$tmp/time" -- \
	"$app" 2 5000 --rate 2000 >"$tmp/time.app" 2>"$tmp/time.err" || fail "record --switch-output=1s: $(cat "$tmp/time.err")"
check time 2 5000 1 2

# signal: a first run of the program, SIGUSR2, a second run: each run's
# events in its own file, whole.
"$cli" record -e sched:sched_switch --switch-output -o "$tmp/sig" -- sh -c "
	echo \"\$PERFRING_SESSION\" >\"$tmp/session\"
	\"$app\" 2 3000; touch \"$tmp/first\"
	until [ -e \"$tmp/go\" ]; do sleep 0.01; done
	\"$app\" 2 3000" >"$tmp/sig.app" 2>"$tmp/sig.err" &
rp=$!
bg+=("$rp")
wait_until "$WAIT_S" test -e "$tmp/first" || fail "signal: the first run did not end"
# Its two rings attached (mapped by the recorder: the snapshot before the
# switch reads them to their end), or already read and released (their
# files removed from the session directory).
rings_taken() {
	[ "$(awk '/\.ring$/ {print $6}' "/proc/$rp/maps" 2>/dev/null | sort -u | wc -l)" -ge 2 ] ||
		! compgen -G "$(cat "$tmp/session")/*.ring" >/dev/null
}
wait_until "$WAIT_S" rings_taken || fail "signal: the first run's rings were never attached"
wait_until "$WAIT_S" catches "$rp" USR2 || fail "the recorder does not catch SIGUSR2"
kill -USR2 "$rp"
wait_until "$WAIT_S" compgen -G "$tmp/sig.[0-9]*" >/dev/null || fail "SIGUSR2 made no file"
touch "$tmp/go"
wait "$rp" || fail "record --switch-output (signal): $(cat "$tmp/sig.err")"
check sig 2 3000 2 2
first=$(printf '%s\n' "$tmp"/sig.[0-9]* | grep -E '\.[0-9]{16}(\.[0-9]+)?$' | sort -V | head -1)
[ "$(grep -c 'apptest:tick' "$first.txt")" = 6000 ] || fail "signal: the first file holds $(grep -c 'apptest:tick' "$first.txt") ticks, not the first run's 6000"
echo "signal: the first run's events in the first file, the second's after"
exit 0
