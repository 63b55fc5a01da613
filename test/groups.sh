#!/usr/bin/env bash
# test-parallel: yes
# Event groups and leader sampling, judged by perf 6.1 on files recorded
# by perf record and by perfring record with the same events:
#   1. {a,b} groups: perfring record writes HEADER_GROUP_DESC, so perf
#      evlist -g, perf report --header-only and perf report (grouped by
#      default) see the groups on our file as on perf's; perfring report,
#      --group and --no-group print what perf report prints on both files
#      (also a file without groups, which --group forces into one, and
#      our pipe output).
#   2. {a,b}:S: perfring script and report print what perf script and
#      perf report print on both files (a sample per member, its period
#      the growth of the member's count); perf script on our file shows
#      the members' samples as on perf's.
#   3. -F callindent and -F +callindent: perfring script as perf script
#      (nothing for samples without branch data).
#   4. :ppp, :pp, :P: the attr's precise_ip in perf evlist -v is perf's
#      (perf 6.1 lowers precise_ip only for :P and only when the kernel
#      refuses it, which software events here never do); modifiers after
#      a breakpoint's access (mem:ADDR:ppp, mem:ADDR:wu, mem:ADDR:rw:u).
# perf report's first line (its --header hint, our dump hint) and closing
# tip are left out of the comparison.
# Skips (77) only if the kernel refuses perf_event_open.
# test-timeout: 300
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_ASAN_CLI:-${PERFRING_CLI:-build/perfring}}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
wl=$(realpath "$wl")

need_perf_events

# $1 file (or - with $2 the stream), then report options.
compare_report() {
	local f=$1
	shift
	perf report --stdio -i "$f" "$@" 2>/dev/null | sed 1d |
		awk '{ l[NR] = $0 } END { n = NR; if (l[n - 1] ~ /^# \(Tip:/) n -= 3; for (i = 1; i <= n; i++) print l[i] }' \
			>"$tmp/perf.txt"
	"$cli" report -i "$f" "$@" 2>"$tmp/ours.err" | sed 1d >"$tmp/ours.txt" ||
		fail "$(basename "$f") $*: perfring report failed: $(cat "$tmp/ours.err")"
	grep -q '%' "$tmp/perf.txt" || fail "$(basename "$f") $*: perf report shows no entries"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "$(basename "$f") $*: perfring report differs from perf report --stdio"
	fi
}

compare_script() {
	local f=$1
	shift
	perf script -i "$f" "$@" >"$tmp/perf.txt" 2>/dev/null || fail "$(basename "$f") $*: perf script failed"
	"$cli" script -i "$f" "$@" >"$tmp/ours.txt" 2>"$tmp/ours.err" ||
		fail "$(basename "$f") $*: perfring script failed: $(cat "$tmp/ours.err")"
	[ -s "$tmp/perf.txt" ] || fail "$(basename "$f") $*: perf script printed nothing"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "$(basename "$f") $*: perfring script differs from perf script"
	fi
}

# ---- 1. groups ----------------------------------------------------------
ev=(-e '{cpu-clock,task-clock}' -e page-faults -e '{cs,major-faults}')
perf record -q "${ev[@]}" -o "$tmp/perf.data" -- "$wl/hot" 0.3 2>/dev/null ||
	fail "perf record ${ev[*]}"
"$cli" record -q "${ev[@]}" -o "$tmp/ours.data" -- "$wl/hot" 0.3 ||
	fail "perfring record ${ev[*]}"
perf evlist -g -i "$tmp/perf.data" >"$tmp/perf.evl" 2>/dev/null
perf evlist -g -i "$tmp/ours.data" >"$tmp/ours.evl" 2>/dev/null
grep -qx '{cpu-clock,task-clock}' "$tmp/perf.evl" || fail "perf evlist -g on perf's file: $(cat "$tmp/perf.evl")"
cmp -s "$tmp/perf.evl" "$tmp/ours.evl" ||
	fail "perf evlist -g: ours $(tr '\n' ' ' <"$tmp/ours.evl"), perf's $(tr '\n' ' ' <"$tmp/perf.evl")"
for f in perf ours; do
	perf report --header-only -i "$tmp/$f.data" 2>/dev/null | grep '^# group:' >"$tmp/$f.hdr"
done
[ "$(wc -l <"$tmp/ours.hdr")" = 2 ] && cmp -s "$tmp/perf.hdr" "$tmp/ours.hdr" ||
	fail "perf report --header-only groups: ours $(cat "$tmp/ours.hdr"), perf's $(cat "$tmp/perf.hdr")"
perf report --stdio -i "$tmp/ours.data" 2>/dev/null |
	grep -q "of events 'anon group { cpu-clock, task-clock }'" ||
	fail "perf report on our file does not show the group"
for f in perf ours; do
	for o in "" --group --no-group; do
		compare_report "$tmp/$f.data" $o
	done
done
echo "groups: perf evlist -g, --header-only and perf report see ours as perf's; perfring report [--group|--no-group] as perf report on both"

# Without GROUP_DESC, --group puts every event in one (and --no-group
# still names the first "events").
perf record -q -e cpu-clock -e task-clock -o "$tmp/plain.data" -- "$wl/hot" 0.2 2>/dev/null ||
	fail "perf record without groups"
for o in "" --group --no-group; do
	compare_report "$tmp/plain.data" $o
done
# Our pipe output carries the group as a FEATURE record.
"$cli" record -q -e '{cpu-clock,task-clock}' -o - -- "$wl/hot" 0.2 >"$tmp/pipe.data" ||
	fail "perfring record -o -"
perf report --stdio -i - <"$tmp/pipe.data" 2>/dev/null | sed 1d |
	awk '{ l[NR] = $0 } END { n = NR; if (l[n - 1] ~ /^# \(Tip:/) n -= 3; for (i = 1; i <= n; i++) print l[i] }' >"$tmp/perf.txt"
grep -q "anon group { cpu-clock, task-clock }" "$tmp/perf.txt" || fail "perf report on our pipe output: no group"
"$cli" report -i - <"$tmp/pipe.data" | sed 1d >"$tmp/ours.txt" || fail "perfring report -i - failed"
cmp -s "$tmp/perf.txt" "$tmp/ours.txt" || fail "pipe: perfring report differs from perf report"
echo "groups: a file without groups (--group, --no-group) and our pipe output as perf report"

# ---- 2. leader sampling -----------------------------------------------------
ev=(-e '{cpu-clock,task-clock,page-faults}:S')
perf record -q "${ev[@]}" -o "$tmp/perf-s.data" -- "$wl/hot" 0.3 2>/dev/null ||
	fail "perf record ${ev[*]}"
"$cli" record -q "${ev[@]}" -o "$tmp/ours-s.data" -- "$wl/hot" 0.3 ||
	fail "perfring record ${ev[*]}"
for f in perf-s ours-s; do
	compare_script "$tmp/$f.data"
	compare_script "$tmp/$f.data" -F comm,tid,time,period,event,ip,sym
	compare_report "$tmp/$f.data"
	compare_report "$tmp/$f.data" --no-group
	# Members' samples, their periods the counts' growth (not one value).
	perf script -i "$tmp/$f.data" -F event,period 2>/dev/null >"$tmp/ev.txt"
	tc=$(grep -c 'task-clock' "$tmp/ev.txt")
	[ "$tc" -gt 5 ] || fail "$f: perf script shows $tc task-clock samples"
	[ "$(grep task-clock "$tmp/ev.txt" | awk '{ print $1 }' | sort -u | wc -l)" -gt 1 ] ||
		fail "$f: task-clock periods are all the same"
	grep -q 'page-faults' "$tmp/ev.txt" || fail "$f: no page-faults samples"
done
echo "leader sampling: perfring script and report as perf's on both files; members sampled with their deltas"

# ---- 3. callindent ------------------------------------------------------------
for f in perf ours perf-s ours-s; do
	for F in callindent +callindent comm,callindent,ip ip,sym,callindent,dso; do
		compare_script "$tmp/$f.data" -F "$F"
	done
done
echo "callindent: perfring script -F [+]callindent as perf script on both files"

# ---- 4. precise_ip ------------------------------------------------------------
for m in ppp pp P; do
	perf record -q -e "cpu-clock:$m" -o "$tmp/perf-p.data" -- true 2>/dev/null ||
		fail "perf record -e cpu-clock:$m"
	"$cli" record -q -e "cpu-clock:$m" -o "$tmp/ours-p.data" -- true ||
		fail "perfring record -e cpu-clock:$m"
	p=$(perf evlist -v -i "$tmp/perf-p.data" 2>/dev/null | grep -o 'precise_ip: [0-9]')
	o=$(perf evlist -v -i "$tmp/ours-p.data" 2>/dev/null | grep -o 'precise_ip: [0-9]')
	[ -n "$p" ] && [ "$p" = "$o" ] || fail "cpu-clock:$m: perf's attr has '$p', ours '$o'"
	echo "cpu-clock:$m: $o as perf"
done
# Modifiers after a breakpoint's access (or in its place), as perf's lexer
# takes them: the attr fields they set are perf's.
for e in mem:0x1000:ppp mem:0x1000:wu mem:0x1000:rw:u mem:0x1000/4:k; do
	perf record -q -e "$e" -o "$tmp/perf-p.data" -- true 2>/dev/null || fail "perf record -e $e"
	"$cli" record -q -e "$e" -o "$tmp/ours-p.data" -- true || fail "perfring record -e $e"
	fields='precise_ip: [0-9]|exclude_[a-z]*: 1|bp_type: [0-9]*|bp_len, config2 }: 0x[0-9a-f]*'
	p=$(perf evlist -v -i "$tmp/perf-p.data" 2>/dev/null | grep -oE "$fields" | tr '\n' ' ')
	o=$(perf evlist -v -i "$tmp/ours-p.data" 2>/dev/null | grep -oE "$fields" | tr '\n' ' ')
	[ -n "$p" ] && [ "$p" = "$o" ] || fail "$e: perf's attr has '$p', ours '$o'"
done
echo "breakpoint modifiers: precise_ip, exclude_*, bp_type and bp_len as perf"
