#!/usr/bin/env bash
# perfring script/report --header, --header-only and -I judged by perf 6.1
# on the same files: perf's own (a system-wide tracepoint with call
# graphs; -k, -z and an event group; -s), perfring record's (the same
# kinds, and the pipe format read from standard input).  The header block
# is compared whole, every line ("captured on" is the input's mtime in
# perf, so both print the same time).  perf script --header is compared
# whole; perf report --header's block is, and the report after it must
# be our plain report's (the table's equal-weight order is report_opts.sh's
# business).  report -T: the per-thread READ counters of a perf record -s
# file and of a perfring record -s file, against perf report -T.
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 300
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
asan=${PERFRING_ASAN_CLI:-}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
[ -n "$asan" ] && asan=$(realpath "$asan")
cd "$tmp" || fail "cd $tmp"

need_perf_events

# A workload with children that exit (their READ records for -s).
kids='for i in 1 2 3; do ls -R /usr/share/doc >/dev/null & done; wait'

perf record -q -o perf-a.data -e sched:sched_switch -g -a -- sleep 0.2 ||
	fail "perf record -a"
perf record -q -k mono -z -o perf-g.data -e '{task-clock,page-faults}' \
	-e sched:sched_switch -g -- sh -c "$kids" || fail "perf record -k -z group"
perf record -q -s -o perf-s.data -e sched:sched_switch -e task-clock \
	-- sh -c "$kids" || fail "perf record -s"
"$cli" record -q -o ours-a.data -e sched:sched_switch -g -a -- sleep 0.2 ||
	fail "perfring record -a"
"$cli" record -q -k mono -z3 -o ours-g.data -e '{task-clock,page-faults}' \
	-e sched:sched_switch -g -- sh -c "$kids" || fail "perfring record -k -z group"
"$cli" record -q -s -o ours-s.data -e sched:sched_switch -e task-clock \
	-- sh -c "$kids" || fail "perfring record -s"
"$cli" record -q -o - -e sched:sched_switch -- sh -c "$kids" >ours.pipe ||
	fail "perfring record -o -"
perf record -q -o - -e sched:sched_switch -- sh -c "$kids" >perf.pipe ||
	fail "perf record -o -"

same() {
	local what=$1
	if ! cmp -s perf.txt ours.txt; then
		diff perf.txt ours.txt | head -10 >&2
		fail "$what: differs from perf"
	fi
	echo "$what: $(wc -l <ours.txt) lines as perf"
}

# The block: up to its closing "# ========" and "#".
block() { awk '{ print } /^# ========$/ && n++ { getline; print; exit }'; }

for f in perf-a perf-g perf-s ours-a ours-g ours-s; do
	for opt in --header-only "--header-only -I"; do
		# shellcheck disable=SC2086
		perf report $opt -i $f.data >perf.txt 2>/dev/null ||
			fail "perf report $opt $f"
		# shellcheck disable=SC2086
		"$cli" report $opt -i $f.data >ours.txt 2>ours.err ||
			fail "report $opt $f: $(cat ours.err)"
		grep -q '^# event : name = ' ours.txt || fail "$f: no event lines"
		same "report $opt $f"
		# shellcheck disable=SC2086
		perf script $opt -i $f.data >perf.txt 2>/dev/null
		# shellcheck disable=SC2086
		"$cli" script $opt -i $f.data >ours.txt 2>ours.err ||
			fail "script $opt $f: $(cat ours.err)"
		same "script $opt $f"
	done
	# script --header: the block, then exactly what script prints; the
	# whole text as perf's for the files of one workload (a system-wide
	# file's samples are script.sh's business).
	perf script --header -i $f.data >perf.txt 2>/dev/null
	"$cli" script --header -i $f.data >full.txt 2>ours.err ||
		fail "script --header $f: $(cat ours.err)"
	[ "$(wc -l <full.txt)" -gt 40 ] || fail "script --header $f: no samples"
	"$cli" script -i $f.data >plain.txt 2>/dev/null
	block <full.txt >ours.txt
	tail -n +"$(($(wc -l <ours.txt) + 1))" full.txt >rest.txt
	cmp -s plain.txt rest.txt || fail "script --header $f: the samples after the block differ from script's"
	if [ "${f#*-}" = a ]; then
		block <perf.txt >perf-block.txt
		mv perf-block.txt perf.txt
		same "script --header $f (block)"
	else
		cp full.txt ours.txt
		same "script --header $f"
	fi
	perf report --header --stdio -i $f.data 2>/dev/null | block >perf.txt
	"$cli" report --header -i $f.data >full.txt 2>ours.err ||
		fail "report --header $f: $(cat ours.err)"
	block <full.txt >ours.txt
	same "report --header $f (block)"
	"$cli" report -i $f.data 2>/dev/null | sed 1,2d >plain.txt
	tail -n +"$(($(wc -l <ours.txt) + 1))" full.txt >rest.txt
	cmp -s plain.txt rest.txt || fail "report --header $f: the report after the block differs from report's"
done

# perf-g has the group, clock and compression lines; perf-s the stat one
# is not (perf record -s does not set HEADER_STAT): check they were seen.
"$cli" report --header-only -i perf-g.data | grep -q '^# group: {task-clock,page-faults}$' ||
	fail "perf-g: no group line"
"$cli" report --header-only -i perf-g.data | grep -q '^# clockid: monotonic (1)$' ||
	fail "perf-g: no clockid line"
"$cli" report --header-only -i ours-g.data | grep -q '^# compressed : Zstd, level = 3' ||
	fail "ours-g: no compressed line"
"$cli" report --header-only -I -i perf-a.data | grep -q '^# sibling threads : ' ||
	fail "perf-a -I: no topology"

# perf stat record's file: "# contains stat data" among the sections.
perf stat record -o perf-st.data -e task-clock -- true >/dev/null 2>&1 ||
	fail "perf stat record"
perf report --header-only -i perf-st.data >perf.txt 2>/dev/null
"$cli" report --header-only -i perf-st.data >ours.txt 2>ours.err ||
	fail "report --header-only perf-st: $(cat ours.err)"
grep -q '^# contains stat data$' ours.txt || fail "perf-st: no stat line"
same "report --header-only perf-st (perf stat record)"

# The pipe format from standard input: the opening block (its mtime is
# the file's), then each feature as its record comes.
for f in perf ours; do
	for cmd in "report --header-only" "script --header-only" "script --header" "report --header-only -I"; do
		# shellcheck disable=SC2086
		perf $cmd -i - <$f.pipe >perf.txt 2>/dev/null
		# shellcheck disable=SC2086
		"$cli" $cmd -i - <$f.pipe >ours.txt 2>ours.err ||
			fail "$cmd $f.pipe: $(cat ours.err)"
		same "$cmd < $f.pipe"
	done
done

# -T: perf's table after the report (its tip before it left out).
for f in perf-s ours-s; do
	perf report -T --stdio -i $f.data 2>/dev/null | sed -n '/^#  *PID  *TID/,$p' >perf.txt
	"$cli" report -T -i $f.data 2>ours.err | sed -n '/^#  *PID  *TID/,$p' >ours.txt ||
		fail "report -T $f: $(cat ours.err)"
	[ "$(wc -l <ours.txt)" -ge 4 ] || fail "report -T $f: fewer than 3 threads: $(cat ours.txt)"
	grep -q 'task-clock' ours.txt || fail "report -T $f: no task-clock column"
	same "report -T $f"
done
perf report -T --stdio -i perf-a.data 2>/dev/null | sed -n '/^#  *PID  *TID/,$p' >perf.txt
"$cli" report -T -i perf-a.data 2>/dev/null | sed -n '/^#  *PID  *TID/,$p' >ours.txt
same "report -T without READ records"
# The section parsers under ASan/UBSan on every file (make check).
if [ -n "$asan" ]; then
	for f in perf-a perf-g perf-s ours-a ours-g ours-s; do
		"$asan" report --header-only -I -T -i $f.data >asan.txt 2>asan.err ||
			fail "asan report --header-only -I $f: $(tail -5 asan.err)"
		cmp -s asan.txt <("$cli" report --header-only -I -i $f.data 2>/dev/null) ||
			fail "asan report --header-only -I $f differs"
	done
	"$asan" report --header-only -I -i - <perf.pipe >/dev/null 2>asan.err ||
		fail "asan report --header-only -I perf.pipe: $(tail -5 asan.err)"
	echo "asan: header blocks of every file clean"
fi
echo "header: all as perf"
