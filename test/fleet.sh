#!/usr/bin/env bash
# record --push: a fleet on one machine.  Our own clickhouse-server (free
# local ports, a temp dir), recorders with different host labels pushing
# into it, a local HTTP receiver standing for Pyroscope and for Parca:
#  1. ten short processes, --push clickhouse= --push pyroscope=
#     --push-every 1 --label service=S: ClickHouse holds samples of all
#     ten over several seconds whose top leaf is hot_loop; /ingest came at
#     least once a second with name/from/until/format/sampleRate, and
#     go tool pprof reads its pprof; SQL and report --from against report
#     -i of the same recording, line by line;
#  2. three recorders (hosts h1..h3) at once: the rows per host are each
#     recorder's samples, report --from --where host=... is its report -i,
#     export -f folded --from its export -f folded; -f pprof --from reads;
#  3. Parca's WriteRaw over Connect: the labels and a pprof go tool reads;
#  4. sinks down: the intervals wait in --spool, perfring push --spool
#     delivers them (ClickHouse and Pyroscope); a failing store is named
#     with its HTTP status; -o /dev/null keeps no file;
#  5. a JIT's code named from its /tmp/perf-PID.map;
#  6. a process in another mount namespace (unshare -m, its binary on a
#     tmpfs the host does not see): symbols through /proc/PID/root, with
#     the binary's build-id.
# Skips (77) only if the kernel refuses perf_event_open; clickhouse-server
# or go missing is a failure (scripts/deps.sh installs them).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh
cli=${PERFRING_CLI:-build/perfring}
# h3's recorder and its report --from run under ASan+UBSan when built
asan_cli=${PERFRING_ASAN_CLI:-build/asan/perfring}
wl=${WORKLOADS:-build/workloads}
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
case $asan_cli in /*) ;; *) asan_cli=$PWD/$asan_cli ;; esac
[ -x "$asan_cli" ] || asan_cli=$cli
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
case $wl in /*) ;; *) wl=$PWD/$wl ;; esac
make_tmp
. test/fleet_lib.sh
cleanup() { stop_receiver; stop_clickhouse; }
need_cmd go golang-go
export HOME=$tmp/home GOCACHE=$tmp/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$HOME"
pprof() { timeout 120 go tool pprof -symbolize=none "$@" 2>"$tmp/pprof.err"; }
need_perf_events "$cli"
start_clickhouse
echo "clickhouse $(ch_query 'SELECT version()') at $CH_URL"

# report_rows FILE: the table's entries (no comment lines).
report_rows() { grep -v '^#' "$1" | grep -v '^$'; }

# 1. Ten short processes, ClickHouse and Pyroscope.
start_receiver "$tmp/pyro"
pyro_url=$RECV_URL
cat >"$tmp/ten.sh" <<SH
for i in 1 2 3 4 5 6 7 8 9 10; do "$wl/hot" 0.3; done
SH
start=$(date +%s.%N)
"$cli" record -g -F 499 -o "$tmp/ten.data" --push "clickhouse=$CH_URL" --push "pyroscope=$pyro_url" \
	--push-every 1 --label service=S --label host=h0 -- sh "$tmp/ten.sh" 2>"$tmp/ten.err" ||
	fail "record --push: $(cat "$tmp/ten.err")"
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a }')
stop_receiver
grep -q 'push: clickhouse=.*delivered' "$tmp/ten.err" || fail "no push summary: $(cat "$tmp/ten.err")"
pids=$(ch_query "SELECT uniqExact(pid) FROM perfring.samples WHERE host = 'h0' AND comm = 'hot'")
[ "$pids" -ge 10 ] || fail "ClickHouse has samples of $pids hot processes, not 10"
span=$(ch_query "SELECT intDiv(max(time_ns) - min(time_ns), 1000000) FROM perfring.samples WHERE host = 'h0'")
[ "$span" -ge 2000 ] || fail "the samples span ${span} ms, not several seconds"
top=$(ch_query "SELECT stack[1] FROM perfring.samples WHERE host = 'h0' AND comm = 'hot' GROUP BY stack[1] ORDER BY count() DESC LIMIT 1")
[ "$top" = hot_loop ] || fail "top leaf function in ClickHouse: $top"
labels=$(ch_query "SELECT labels.key, labels.value FROM perfring.samples WHERE host = 'h0' LIMIT 1")
[[ $labels == *service*S* ]] || fail "labels: $labels"
rows=$(ch_query "SELECT count() FROM perfring.samples WHERE host = 'h0'")
"$cli" report -i "$tmp/ten.data" --no-children -g none -n --sort comm,dso,sym >"$tmp/ten.local" 2>/dev/null || fail "report -i"
"$cli" report --from "clickhouse=$CH_URL" --where "host = 'h0'" -n --sort comm,dso,sym >"$tmp/ten.fleet" 2>"$tmp/ten.ferr" ||
	fail "report --from: $(cat "$tmp/ten.ferr")"
# (the header rounds past 1000: "1K"; the Samples column does not)
total=$(report_rows "$tmp/ten.local" | awk '{ n += $2 } END { print n + 0 }')
[ "$rows" = "$total" ] || fail "ClickHouse has $rows rows of h0, report -i counts $total samples"
# (the vDSO's rows apart: the recorder names its symbols from the running
# kernel's image, a file's reader as perf does, from perf's build-id cache
# or by address)
novdso() { grep -v '\[vdso\]'; }
if ! diff <(report_rows "$tmp/ten.local" | novdso) <(report_rows "$tmp/ten.fleet" | novdso) >"$tmp/diff"; then
	head "$tmp/diff" >&2
	fail "report --from differs from report -i of the same recording"
fi
# --where on the labels and the time (the README's forms): the same table
"$cli" report --from "clickhouse=$CH_URL" -n --sort comm,dso,sym \
	--where "has(labels.value, 'S') AND time_ns > toUInt64(now() - 3600) * 1000000000" >"$tmp/ten.fleet2" ||
	fail "report --from --where labels and time"
diff <(report_rows "$tmp/ten.local") <(report_rows "$tmp/ten.fleet2") >/dev/null ||
	fail "report --from with a label and a time range differs"
n=$(requests "$tmp/pyro")
[ "$n" -ge "$secs" ] && [ "$n" -ge 2 ] || fail "$n /ingest requests in $secs s: fewer than one a second"
python3 - "$tmp/pyro" <<'PY' || exit 1
import glob, json, sys, urllib.parse
for j in sorted(glob.glob(sys.argv[1] + "/*.json")):
    r = json.load(open(j))
    u = urllib.parse.urlparse(r["path"])
    q = urllib.parse.parse_qs(u.query)
    def need(c, m):
        if not c:
            print(f"FAILED: pyroscope request {r['path']}: {m}", file=sys.stderr)
            sys.exit(1)
    need(u.path == "/ingest", "not /ingest")
    need(q.get("name", [""])[0].startswith("S.cpu{host=h0"), "name")
    need(q.get("format") == ["pprof"] and q.get("sampleRate") == ["499"], "format/sampleRate")
    f, t = int(q["from"][0]), int(q["until"][0])
    need(0 < f < t, "from/until")
    body = open(j[:-5] + ".body", "rb").read()
    need(body[:2] == b"\x1f\x8b", "the body is no gzip")
PY
first=$(ls "$tmp/pyro"/*.body | sed -n 2p)
pprof -top -sample_index=samples "$first" >"$tmp/pyro.top" || fail "go tool pprof of an /ingest body: $(head -3 "$tmp/pprof.err")"
grep -q 'hot_loop' "$tmp/pyro.top" || fail "go tool pprof -top of an interval: $(head -20 "$tmp/pyro.top")"
echo "1: $pids processes over ${span} ms in ClickHouse ($rows rows, the same table as report -i), $n /ingest requests in ${secs}s"

# 2. Three recorders at once, hosts h1..h3 (h3's under ASan+UBSan).
for h in 1 2 3; do
	rc=$cli
	[ $h = 3 ] && rc=$asan_cli
	"$rc" record -F 299 -g -o "$tmp/h$h.data" --push "clickhouse=$CH_URL" --push-every 0.5 --label host=h$h \
		-- "$wl/hot" 1.5 2>"$tmp/h$h.err" &
	eval "rec$h=\$!"
done
for h in 1 2 3; do
	eval "wait \$rec$h" || fail "recorder h$h: $(cat "$tmp/h$h.err")"
done
for h in 1 2 3; do
	"$cli" report -i "$tmp/h$h.data" --no-children -g none -n -q --sort comm,dso,sym >"$tmp/h$h.local" 2>/dev/null
	rc=$cli
	[ $h = 3 ] && rc=$asan_cli
	"$rc" report --from "clickhouse=$CH_URL" --where "host = 'h$h'" -n -q --sort comm,dso,sym >"$tmp/h$h.fleet" ||
		fail "report --from h$h"
	diff <(novdso <"$tmp/h$h.local") <(novdso <"$tmp/h$h.fleet") >"$tmp/h$h.diff" ||
		{ head "$tmp/h$h.diff" >&2; fail "h$h: report --from differs"; }
	"$cli" export -i "$tmp/h$h.data" -f folded -o "$tmp/h$h.lfold" || fail "export -f folded h$h"
	"$cli" export --from "clickhouse=$CH_URL" --where "host = 'h$h'" -f folded -o "$tmp/h$h.ffold" || fail "export --from h$h"
	cmp -s "$tmp/h$h.lfold" "$tmp/h$h.ffold" || { diff "$tmp/h$h.lfold" "$tmp/h$h.ffold" | head >&2; fail "h$h: export -f folded --from differs"; }
done
ch_query "SELECT host, count() FROM perfring.samples WHERE host IN ('h1','h2','h3') GROUP BY host ORDER BY host" >"$tmp/hosts"
[ "$(wc -l <"$tmp/hosts")" = 3 ] || fail "hosts: $(cat "$tmp/hosts")"
"$cli" export --from "clickhouse=$CH_URL" --where "host LIKE 'h_'" -f pprof -o "$tmp/fleet.pb.gz" || fail "export -f pprof --from"
pprof -top -sample_index=samples "$tmp/fleet.pb.gz" >"$tmp/fleet.top" || fail "go tool pprof of export --from: $(head -3 "$tmp/pprof.err")"
grep -q hot_loop "$tmp/fleet.top" || fail "export -f pprof --from: $(head "$tmp/fleet.top")"
"$cli" export --from "clickhouse=$CH_URL" --where "host LIKE 'h_'" -f svg -o "$tmp/fleet.svg" || fail "export -f svg --from"
grep -q 'hot_loop' "$tmp/fleet.svg" || fail "the flame graph has no hot_loop"
# The README's queries, through a Distributed table.
ch_query "CREATE TABLE perfring.samples_all AS perfring.samples ENGINE = Distributed(one_shard, perfring, samples, cityHash64(host))" ||
	fail "Distributed table"
ch_query "SELECT stack[1] AS func, count() AS samples FROM perfring.samples_all WHERE time_ns >= toUInt64(toDateTime('2026-11-24 10:00:00')) * 1000000000 GROUP BY func ORDER BY samples DESC LIMIT 20" >"$tmp/topf" ||
	fail "the README's top functions"
[ "$(head -1 "$tmp/topf" | cut -f1)" = hot_loop ] || fail "the fleet's top function: $(head -3 "$tmp/topf")"
ch_query "SELECT concat(comm, ';', arrayStringConcat(arrayReverse(stack), ';'), ' ', toString(count())) FROM perfring.samples_all WHERE host LIKE 'h_' GROUP BY comm, stack FORMAT TSVRaw" >"$tmp/sqlfold" ||
	fail "the README's flame graph query"
grep -q '^hot;.*;hot_loop [0-9]*$' "$tmp/sqlfold" || fail "the README's folded stacks: $(head -3 "$tmp/sqlfold")"
echo "2: three hosts $(tr '\n\t' ' :' <"$tmp/hosts"); report and folded --from as -i"

# 3. Parca.
start_receiver "$tmp/parca"
"$cli" record -q -g -F 499 -o /dev/null --push "parca=$RECV_URL" --push-every 0.5 --label host=p1 --label team=x \
	-- "$wl/hot" 1 2>"$tmp/parca.err" || fail "record --push parca: $(cat "$tmp/parca.err")"
stop_receiver
[ ! -e /dev/null.old ] || fail "-o /dev/null"
[ "$(requests "$tmp/parca")" -ge 1 ] || fail "no WriteRaw request"
python3 - "$tmp/parca" <<'PY' || exit 1
import glob, json, sys
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, s = 0, 0
        while True:
            c = b[i]; i += 1; k |= (c & 0x7f) << s; s += 7
            if c < 0x80: break
        f, wt = k >> 3, k & 7
        if wt == 0:
            v, s = 0, 0
            while True:
                c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
                if c < 0x80: break
        elif wt == 2:
            n, s = 0, 0
            while True:
                c = b[i]; i += 1; n |= (c & 0x7f) << s; s += 7
                if c < 0x80: break
            v = b[i:i + n]; i += n
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, v))
    return out
j = sorted(glob.glob(sys.argv[1] + "/*.json"))[0]
r = json.load(open(j))
h = {k.lower(): v for k, v in r["headers"].items()}
assert r["path"] == "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw", r["path"]
assert h.get("content-type") == "application/proto", h
assert h.get("connect-protocol-version") == "1", h
series = [v for f, v in fields(open(j[:-5] + ".body", "rb").read()) if f == 2]
assert len(series) == 1
labels, raw = {}, None
for f, v in fields(series[0]):
    if f == 1:
        for lf, lv in fields(v):
            kv = dict(fields(lv))
            labels[kv[1].decode()] = kv[2].decode()
    if f == 2:
        raw = dict(fields(v))[1]
assert labels.get("__name__") == "process_cpu" and labels.get("host") == "p1" and labels.get("team") == "x", labels
open(sys.argv[1] + "/raw.pb.gz", "wb").write(raw)
PY
pprof -top -sample_index=samples "$tmp/parca/raw.pb.gz" >"$tmp/parca.top" || fail "go tool pprof of WriteRaw's profile: $(head -3 "$tmp/pprof.err")"
grep -q hot_loop "$tmp/parca.top" || fail "Parca's profile: $(head "$tmp/parca.top")"
echo "3: Parca WriteRaw with labels, its pprof read by go tool pprof"

# 4. Sinks down: the spool, then perfring push.
down=$(free_port)
"$cli" record -q -F 299 -o /dev/null --push "clickhouse=http://127.0.0.1:$down" --push "pyroscope=http://127.0.0.1:$down" \
	--push-every 0.2 --label host=s1 --spool "$tmp/spool" -- "$wl/hot" 1.5 2>"$tmp/down.err" ||
	fail "record with the sinks down: $(cat "$tmp/down.err")"
grep -q "push: clickhouse=http://127.0.0.1:$down: Connection refused" "$tmp/down.err" || fail "the down sink is not named: $(cat "$tmp/down.err")"
nch=$(ls "$tmp/spool"/clickhouse-*/ | grep -c '\.req$')
npy=$(ls "$tmp/spool"/pyroscope-*/ | grep -c '\.req$')
[ "$nch" -ge 2 ] && [ "$npy" = "$nch" ] || fail "spooled: $nch for ClickHouse, $npy for Pyroscope"
"$cli" push --spool "$tmp/spool" "clickhouse=$CH_URL" 2>"$tmp/push.err" || fail "push --spool: $(cat "$tmp/push.err")"
[ "$(ch_query "SELECT count() > 0 FROM perfring.samples WHERE host = 's1'")" = 1 ] || fail "push --spool: no rows of s1"
[ -z "$(ls "$tmp/spool"/clickhouse-*/)" ] || fail "push left: $(ls "$tmp/spool"/clickhouse-*/)"
start_receiver "$tmp/late500" 500
"$cli" push --spool "$tmp/spool" "pyroscope=$RECV_URL" 2>"$tmp/push500.err" && fail "push into a failing store succeeded"
grep -q "pyroscope=$RECV_URL: HTTP 500: receiver says no" "$tmp/push500.err" || fail "the failure does not name the sink and status: $(cat "$tmp/push500.err")"
stop_receiver
start_receiver "$tmp/late"
"$cli" push --spool "$tmp/spool" "pyroscope=$RECV_URL" 2>"$tmp/push.err" || fail "push --spool pyroscope: $(cat "$tmp/push.err")"
stop_receiver
[ "$(requests "$tmp/late")" = "$npy" ] || fail "pyroscope got $(requests "$tmp/late") requests of $npy spooled"
echo "4: $nch intervals spooled per sink while down, delivered by perfring push"

# 5. A JIT's code named by its /tmp/perf-PID.map, as today.
"$cli" record -q -F 499 -o /dev/null --push "clickhouse=$CH_URL" --push-every 0.5 --label host=j1 -- \
	"$wl/jit" 0.5 2>"$tmp/jit.err"
jrc=$?
ch_query "SELECT DISTINCT pid FROM perfring.samples WHERE host = 'j1'" | while read -r p; do rm -f "/tmp/perf-$p.map"; done
if [ $jrc = 3 ]; then
	echo "5: no JIT code for this architecture"
else
	[ $jrc = 0 ] || fail "record of the JIT: $(cat "$tmp/jit.err")"
	top=$(ch_query "SELECT stack[1] FROM perfring.samples WHERE host = 'j1' AND comm = 'jit' GROUP BY stack[1] ORDER BY count() DESC LIMIT 1")
	[ "$top" = jit_spin_loop ] || fail "the JIT's top frame: $top"
	echo "5: JIT code named from its perf map: $top"
fi

# 6. A process in its own mount namespace.
if unshare -m true 2>/dev/null; then
	mkdir -p "$tmp/ctr"
	cp "$wl/hot" "$tmp/hot-ctr"
	"$cli" record -q -F 499 -o /dev/null --push "clickhouse=$CH_URL" --push-every 0.5 --label host=c1 -- \
		unshare -m sh -c "mount -t tmpfs none '$tmp/ctr' && cp '$tmp/hot-ctr' '$tmp/ctr/hot-ctr' && exec '$tmp/ctr/hot-ctr' 1" \
		2>"$tmp/ctr.err" || fail "record of a container: $(cat "$tmp/ctr.err")"
	[ ! -e "$tmp/ctr/hot-ctr" ] || fail "the host sees the container's binary"
	got=$(ch_query "SELECT stack[1], dsos[1], build_ids[1] FROM perfring.samples WHERE host = 'c1' AND comm = 'hot-ctr' GROUP BY stack[1], dsos[1], build_ids[1] ORDER BY count() DESC LIMIT 1")
	bid=$(readelf -n "$tmp/hot-ctr" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	[ "$got" = "$(printf 'hot_loop\t%s\t%s' "$tmp/ctr/hot-ctr" "$bid")" ] ||
		fail "container: top frame '$got', want hot_loop in $tmp/ctr/hot-ctr ($bid)"
	echo "6: a mount namespace's binary resolved through /proc/PID/root, build-id $bid"
else
	echo "6: skipped: unshare -m is refused here"
fi
