#!/usr/bin/env bash
# The per-sample reader API (perfring_reader_*) through its Python
# bindings: examples/count_symbols.py's samples per symbol must equal
# `perfring report --no-children --sort sym -n`'s Samples column, on a file
# from perf record and one from perfring record; tracepoint fields read by
# name must equal what perf script prints.  Skips (77) only if the kernel
# refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
need_cmd python3 python3
cli=$(realpath "$cli")
wl=$(realpath "$wl")
here=$(cd "$(dirname "$0")/.." && pwd)
export PERFRING_TOOLS_LIB=${PERFRING_TOOLS_LIB:-$(dirname "$cli")/libperfring-tools.so}
[ -e "$PERFRING_TOOLS_LIB" ] || fail "no $PERFRING_TOOLS_LIB (make all)"

need_perf_events

# "count symbol" per line, summed by name, unknown symbols left out.
report_counts() {
	"$cli" report -i "$1" --no-children --sort sym -n -g none |
		awk '$1 ~ /%$/ && $4 !~ /^0x/ { n[$4] += $2 } END { for (s in n) print n[s], s }' | sort -k2
}
python_counts() {
	python3 "$here/examples/count_symbols.py" "$1" |
		awk '$3 != "[unknown]" { print $1, $3 }' | sort -k2
}
check_counts() {
	local f=$1 name=$2
	report_counts "$f" >"$tmp/r.txt" || fail "$name: perfring report failed"
	python_counts "$f" >"$tmp/p.txt" || fail "$name: count_symbols.py failed"
	[ -s "$tmp/r.txt" ] || fail "$name: report shows no symbols"
	if ! cmp -s "$tmp/r.txt" "$tmp/p.txt"; then
		diff "$tmp/r.txt" "$tmp/p.txt" | head -10 >&2
		fail "$name: count_symbols.py disagrees with perfring report -n"
	fi
	echo "$name: $(wc -l <"$tmp/r.txt") symbols, counts as perfring report -n"
}

perf record -q -g -o "$tmp/perf.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record"
check_counts "$tmp/perf.data" "perf record -g"
"$cli" record -q -g -o "$tmp/ours.data" -- "$wl/hot" 0.3 || fail "perfring record"
check_counts "$tmp/ours.data" "perfring record -g"

# Tracepoint fields by name, against perf script's text; callchains and
# filters through the same reader.
perf record -q -a -g -e sched:sched_switch -o "$tmp/sw.data" -- "$wl/pingpong" 500 2>/dev/null ||
	fail "perf record -e sched:sched_switch"
python3 - "$tmp/sw.data" "$here/python" >"$tmp/py.txt" <<'PY' || fail "reading tracepoint fields failed"
import sys
sys.path.insert(0, sys.argv[2])
import perfring
def on(s):
    chain = s.callchain[0].sym if s.callchain else "-"
    print("%s %d %d %s %d %s" % (s.field("prev_comm"), s.field("prev_pid"),
                                 s.field("next_pid"), s.comm, s.tid, chain))
perfring.Reader(sys.argv[1], comm="pingpong").run(on)
PY
perf script -i "$tmp/sw.data" --comm pingpong -F comm,tid,trace,ip,sym 2>/dev/null |
	awk '/sched:sched_switch|prev_comm=/ { split($0, a, "prev_comm="); split(a[2], b, " "); pc = b[1];
		split($0, c, "prev_pid="); split(c[2], d, " "); pp = d[1];
		split($0, e, "next_pid="); split(e[2], g, " "); np = g[1];
		comm = $1; tid = $2; getline; print pc, pp, np, comm, tid, $2 }' >"$tmp/perf.txt"
[ -s "$tmp/py.txt" ] || fail "no pingpong sched_switch samples read"
if ! cmp -s "$tmp/perf.txt" "$tmp/py.txt"; then
	diff "$tmp/perf.txt" "$tmp/py.txt" | head -10 >&2
	fail "tracepoint fields differ from perf script"
fi
echo "sched_switch fields by name: $(wc -l <"$tmp/py.txt") samples as perf script --comm pingpong"
