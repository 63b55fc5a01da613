#!/usr/bin/env bash
# perfring report's options judged by perf report --stdio (6.1) with the
# same options on the same files (recorded by perf record and by perfring
# record): --sort with cpu, -n (its column width), --comm, --dsos,
# --symbols (absolute percentages, one-entry lists eliding the column),
# -g caller|callee|N and --percent-limit on the graphs, call-graph
# siblings and entries of equal weight in perf's order; and a trace.dat
# against trace-cmd report.
# The whole text is compared but for perf's first line (it points at its
# --header options, ours at perfring dump) and its random closing tip.
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 600
set -u
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
. "$(dirname "$0")/lib.sh"
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")

need_perf_events

# perf report and perfring report on one file, compared (test/lib.sh).
compare() { report_like_perf "$@"; }

# perf's call-graph lines that split among siblings of equal weight in
# @f with these options (so a test of their order cannot pass vacuously).
tied_branches() {
	local f=$1
	shift
	perf report --stdio -i "$f" "$@" 2>/dev/null | grep -o -- '--[0-9.]*%--' | sort | uniq -c |
		awk '$1 > 1 { n += $1 } END { print n + 0 }'
}

perf record -q -e sched:sched_switch -e cpu-clock -a -o "$tmp/perf-a.data" -- "$wl/pingpong" 2000 2>/dev/null ||
	fail "perf record -a"
"$cli" record -q -e sched:sched_switch -e cpu-clock -a -o "$tmp/ours-a.data" -- "$wl/pingpong" 2000 ||
	fail "perfring record -a"
perf record -q -g -o "$tmp/perf-g.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record -g"
"$cli" record -q -g -o "$tmp/ours-g.data" -- "$wl/hot" 0.3 || fail "perfring record -g"

for f in "$tmp/perf-g.data" "$tmp/ours-g.data"; do
	compare "$f" -n --no-children -g none
	compare "$f" --sort cpu,sym --no-children -g none
	compare "$f" --sort comm,dso -n --no-children -g none
	compare "$f" --comm hot --no-children -g none
	compare "$f" --symbols hot_loop,main --no-children -g none
	compare "$f" --symbols hot_loop --no-children -n -g none
	compare "$f" --dsos hot --no-children -g none
	compare "$f" --dsos hot,libc.so.6 --no-children -g none
	compare "$f" --no-children -g caller
	compare "$f" --no-children -g callee,2
	compare "$f" --no-children --percent-limit 0.2
	compare "$f" --percent-limit 3
	compare "$f"
	compare "$f" -g callee
	compare "$f" --sort dso,sym
	compare "$f" --children -n
done
# Siblings of equal weight: fanout's eight leaves, two callers and two
# libc entry points all carry the same number of getppid() calls (a
# tracepoint, period 1), so only perf's tie order (the callchain trees'
# match_chain() order, the output trees' insertion) places them.
perf record -q -g -e syscalls:sys_enter_getppid -o "$tmp/perf-f.data" -- "$wl/fanout" 40 2>/dev/null ||
	fail "perf record -g fanout"
"$cli" record -q -g -e syscalls:sys_enter_getppid -o "$tmp/ours-f.data" -- "$wl/fanout" 40 ||
	fail "perfring record -g fanout"
for f in "$tmp/perf-f.data" "$tmp/ours-f.data"; do
	n=$(tied_branches "$f" --sort comm,dso,sym)
	[ "$n" -ge 16 ] || fail "$(basename "$f"): only $n call-graph branches of equal weight"
	compare "$f"
	for g in caller callee; do
		compare "$f" --sort comm,dso,sym -g $g
		compare "$f" --sort comm,dso,sym --no-children -g $g
		compare "$f" --sort sym -g $g
		compare "$f" --sort pid,sym --no-children -g $g
	done
	compare "$f" --sort dso,sym -g callee,2
done
# Two threads (pingpong's processes), kernel chains of sched_switch with
# many equal counts: perf's entry order among equal Children (the depth
# is compared within one thread only).  (PLT stubs, named by perf's
# symbol tree's shape, are judged by test/report_srcline.sh.)
perf record -q -g -e sched:sched_switch -o "$tmp/perf-p.data" -- "$wl/pingpong" 2000 2>/dev/null ||
	fail "perf record -g pingpong"
"$cli" record -q -g -e sched:sched_switch -o "$tmp/ours-p.data" -- "$wl/pingpong" 2000 ||
	fail "perfring record -g pingpong"
for f in "$tmp/perf-p.data" "$tmp/ours-p.data"; do
	compare "$f"
	compare "$f" -g callee
	compare "$f" --no-children
	compare "$f" --sort pid,sym
	compare "$f" --sort trace,sym
	compare "$f" --sort cpu,sym --no-children
	compare "$f" --comm pingpong --sort dso,sym
done
# System-wide: the workload's entries (other programs' C++ names may be
# demangled differently by perf), tracepoints sorted by CPU.
for f in "$tmp/perf-a.data" "$tmp/ours-a.data"; do
	compare "$f" --comm pingpong --sort comm,cpu -n -g none
	compare "$f" --sort cpu -g none
	compare "$f" --comm pingpong --dsos '[kernel.kallsyms]' --no-children -g none
	compare "$f" --comm pingpong --symbols schedule,__schedule --no-children -g none
	# no callchains: --children changes nothing (as in perf)
	compare "$f" --comm pingpong --dsos '[kernel.kallsyms]' --children
	# cpu-clock has no trace text: "N/A" where perf prints it
	compare "$f" --comm pingpong --sort comm,trace -g none
	grep -q '%  *N/A *$' "$tmp/ours.txt" || fail "--sort trace: no N/A entry for cpu-clock"
done
# --sort keys perf does not know are refused in perf's words; keys perf
# knows that perfring does not implement are refused naming them.
f=$tmp/perf-g.data
for k in foo syms 'comm,bar'; do
	bad=${k#comm,}
	theirs=$(perf report --stdio -i "$f" -s "$k" 2>&1 | grep -m1 'sort key')
	ours=$("$cli" report -i "$f" -s "$k" 2>&1 >/dev/null) && fail "--sort $k accepted"
	[ "$theirs" = "Unknown --sort key: \`$bad'" ] || fail "perf on --sort $k: $theirs"
	grep -qF "$theirs" <<<"$ours" || fail "--sort $k: perf says '$theirs', we '$ours'"
done
for k in parent weight 'dso,time'; do
	perf report --stdio -i "$f" -s "$k" -g none 2>/dev/null | grep -q '%' || fail "perf refuses --sort $k"
	ours=$("$cli" report -i "$f" -s "$k" 2>&1 >/dev/null) && fail "--sort $k accepted"
	grep -q 'does not implement' <<<"$ours" || fail "--sort $k: $ours"
done
echo "ok: --sort keys perf does not know, or perfring does not implement, refused"

# A trace.dat (record --tracefs-event): report lists it as trace-cmd
# report does, byte for byte.
need_cmd trace-cmd trace-cmd
"$cli" record -q -e cpu-clock --tracefs-event sched:sched_switch -o "$tmp/tr.data" -- "$wl/pingpong" 300 ||
	fail "perfring record --tracefs-event"
trace-cmd report -i "$tmp/tr.data.trace.dat" >"$tmp/tc.txt" 2>/dev/null || fail "trace-cmd report failed"
"$cli" report -i "$tmp/tr.data.trace.dat" >"$tmp/ours.txt" || fail "perfring report on a trace.dat failed"
grep -q sched_switch "$tmp/ours.txt" || fail "report on a trace.dat: no sched_switch events"
cmp -s "$tmp/tc.txt" "$tmp/ours.txt" || fail "report on a trace.dat differs from trace-cmd report"
echo "report on a trace.dat: $(wc -l <"$tmp/ours.txt") lines as trace-cmd report"
exit 0
