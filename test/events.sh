#!/usr/bin/env bash
# Event strings as perf parses them: the same -e given to perf record and to
# perfring record must give the same attrs (perf evlist -v) and the same
# events in perf script; errors name the wrong part of the string.
# Skips (77) only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf

need_perf_events "$cli"

# perf must read our file without complaint.
perf_ok() {
	local out
	out=$(perf script -i "$1" 2>&1 >/dev/null) || fail "perf script failed on $1: $out"
	grep -Eiq 'warning|error|incompatible|failed' <<<"$out" && fail "perf script complained about $1: $(head -3 <<<"$out")"
	return 0
}

# both NAME ARGS... -- COMMAND: records with both, compares attrs.
n=0
both() {
	local tag=$1
	shift
	n=$((n + 1))
	perf record -q -o "$tmp/perf-$n.data" "$@" 2>"$tmp/perf-$n.err" >/dev/null ||
		fail "$tag: perf record $*: $(cat "$tmp/perf-$n.err")"
	"$cli" record -q -o "$tmp/ours-$n.data" "$@" 2>"$tmp/ours-$n.err" >/dev/null ||
		fail "$tag: perfring record $*: $(cat "$tmp/ours-$n.err")"
	# (-F max samples at the kernel's limit: either side may lose some
	# under load, which perf script reports; the attrs are what count)
	[ "$tag" = "-F max" ] || perf_ok "$tmp/ours-$n.data"
	evlist_attrs "$tmp/perf-$n.data" >"$tmp/perf-$n.attrs"
	evlist_attrs "$tmp/ours-$n.data" >"$tmp/ours-$n.attrs"
	[ -s "$tmp/perf-$n.attrs" ] || fail "$tag: perf evlist shows nothing for perf's file"
	diff -u "$tmp/perf-$n.attrs" "$tmp/ours-$n.attrs" >"$tmp/diff" ||
		fail "$tag: attrs differ from perf's (-perf +ours): $(cat "$tmp/diff")"
	echo "ok: $tag: $(wc -l <"$tmp/ours-$n.attrs") event(s) as perf"
}

# Event names in perf script, sorted and counted once each.
script_events() { perf script -i "$1" -F event 2>/dev/null | sed 's/[[:space:]]//g; s/:$//' | sort -u; }

# 1. Modifiers, alone and combined.
for e in cpu-clock:u cpu-clock:k cpu-clock:h cpu-clock:p cpu-clock:pp cpu-clock:ppp \
	cpu-clock:upp page-faults:uk cpu-clock:G cpu-clock:H cpu-clock:I cpu-clock:D \
	cpu-clock:e cpu-clock:P cs:k; do
	both "$e" -e "$e" -- true
done

# 2. Lists and groups, leader sampling ({a,b}:S): only the leader samples
# and each sample reads the group.
both "a,b" -e cpu-clock,page-faults -- true
both "{a,b}" -e '{cpu-clock,page-faults}' -- true
both "{a,b}:u" -e '{cpu-clock,page-faults:k}:u' -- true
both "{a,b}:S" -e '{cpu-clock,page-faults}:S' -- "$wl/faults" 300
[ "$(script_events "$tmp/ours-$n.data")" = "$(script_events "$tmp/perf-$n.data")" ] ||
	fail "{a,b}:S: perf script shows events '$(script_events "$tmp/ours-$n.data" | tr '\n' ' ')', perf's file '$(script_events "$tmp/perf-$n.data" | tr '\n' ' ')'"
pf=$(perf script -i "$tmp/ours-$n.data" -F event 2>/dev/null | grep -c page-faults)
cc=$(perf script -i "$tmp/ours-$n.data" -F event 2>/dev/null | grep -c cpu-clock)
# perf script prints a member's read when its count moved: at most one per
# leader sample.
[ "$pf" -gt 0 ] && [ "$pf" -le "$cc" ] || fail "{a,b}:S: $cc leader samples but $pf member reads"

# 3. Tracepoint globs in perf.data mode.
# The command blocks on a pipe, so sched_switch is there in both files.
both "sched:sched_sw*" -e 'sched:sched_sw*' -- "$wl/pingpong" 200
script_events "$tmp/ours-$n.data" | grep -qx 'sched:sched_switch' ||
	fail "glob: perf script shows no sched_switch in our file: $(script_events "$tmp/ours-$n.data")"
both "sched:*" -e 'sched:*' -- true

# 4. --filter on the tracepoint before it (PERF_EVENT_IOC_SET_FILTER).
# The command execs /bin/true then /bin/echo: the filter keeps only one.
both "--filter" -e sched:sched_process_exec --filter 'filename == "/bin/true"' -e page-faults -- \
	sh -c '/bin/true; /bin/echo x >/dev/null'
execs=$(perf script -i "$tmp/ours-$n.data" 2>/dev/null | grep -o 'filename=[^ ]*' | sort | uniq -c | tr -s ' ')
[ "$execs" = " 1 filename=/bin/true" ] || fail "--filter 'filename == \"/bin/true\"': execs recorded: $execs"
"$cli" record -q -o "$tmp/nofilter.data" -e sched:sched_process_exec -- sh -c '/bin/true; /bin/echo x >/dev/null' ||
	fail "record exec without a filter"
perf script -i "$tmp/nofilter.data" 2>/dev/null | grep -q 'filename=/bin/echo' || fail "without --filter, the echo exec is not there"
"$cli" record -q -e sched:sched_switch --filter 'no_such_field > 0' -o "$tmp/bad.data" -- true 2>"$tmp/err" &&
	fail "a filter the kernel refuses was accepted"
grep -q 'failed to set filter "no_such_field > 0" on event sched:sched_switch' "$tmp/err" ||
	fail "bad filter message: $(cat "$tmp/err")"
"$cli" record -q -e cpu-clock --filter 'x > 0' -o "$tmp/bad.data" -- true 2>"$tmp/err" &&
	fail "--filter after a non-tracepoint was accepted"
echo "ok: --filter"

# 5. sysfs PMU syntax (type from /sys/bus/event_source/devices/*/type), and
# terms on named events.
both "software/config=2,period=1000/" -e 'software/config=2,period=1000/' -- "$wl/faults" 100
both "cpu-clock/period=100000/" -e 'cpu-clock/period=100000/' -- true
both "software/config=0/u" -e 'software/config=0/u' -- true
# The tracepoint PMU by id: perf samples it as any PMU event (-F's
# default, no RAW), with or without -c.
tfs=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
if [ -n "$tfs" ] && [ -r "$tfs/events/sched/sched_switch/id" ]; then
	tpid=$(cat "$tfs/events/sched/sched_switch/id")
	both "tracepoint/config=ID/" -e "tracepoint/config=$tpid/" -- "$wl/pingpong" 50
	both "tracepoint/config=ID/ -c 1" -c 1 -e "tracepoint/config=$tpid/" -- "$wl/pingpong" 50
fi
# An alias from a PMU's events/ directory resolves to its format's bits
# (msr/tsc/ does not sample: perf and we both refuse to open it).
for d in /sys/bus/event_source/devices/*/events; do
	pmu=$(basename "$(dirname "$d")")
	alias=$(ls "$d" | grep -v '\.' | head -1)
	[ -n "$alias" ] || continue
	"$cli" record -q -a -e "$pmu/$alias/" -o "$tmp/alias.data" -- true 2>"$tmp/err"
	grep -q 'event syntax error' "$tmp/err" && fail "$pmu/$alias/: $(cat "$tmp/err")"
	echo "ok: $pmu/$alias/ parsed ($(head -1 "$tmp/err"))"
	break
done
# Hardware breakpoints (the breakpoint PMU): perf's mem:addr[/len][:rwx].
addr=0x1000 # a user address: the attrs are compared, nothing needs to hit it
both "mem:ADDR" -e "mem:$addr" -- true
both "mem:ADDR/8:w" -e "mem:$addr/8:w" -- true
both "mem:ADDR:x" -e "mem:$addr:x,cpu-clock" -- true
"$cli" record -q -e 'software/bogus=1/' -o "$tmp/bad.data" -- true 2>"$tmp/err" && fail "unknown term accepted"
grep -q "unknown term 'bogus' for pmu 'software'" "$tmp/err" || fail "unknown term message: $(cat "$tmp/err")"

# 6. Hardware events: cycles falls back to cpu-clock as in perf; without a
# PMU, others are refused as perf refuses them.
both "cycles" -e cycles -- true
both "cycles:u" -e cycles:u -- true
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	for e in instructions cache-misses branch-misses L1-dcache-load-misses r1a; do
		perf record -q -e "$e" -o "$tmp/p.data" -- true >/dev/null 2>&1 && fail "perf opened $e: this machine has a PMU after all"
		"$cli" record -q -e "$e" -o "$tmp/o.data" -- true 2>"$tmp/err" && fail "$e opened without a PMU"
		grep -q "The $e event is not supported" "$tmp/err" || fail "$e: $(cat "$tmp/err")"
	done
	"$cli" list | grep -q '^ *instructions ' && fail "list shows hardware events this machine does not have"
	# asked for, they are listed as perf names them, marked refused
	"$cli" list hw >"$tmp/hw"
	grep -q '^  instructions  *\[Hardware event, not supported here\]$' "$tmp/hw" &&
		grep -q '^  cpu-cycles OR cycles  *\[Hardware event, not supported here\]$' "$tmp/hw" ||
		fail "list hw does not show the hardware events this machine refuses: $(cat "$tmp/hw")"
	"$cli" list cache | grep -q '^  L1-dcache-load-misses  *\[Hardware cache event, not supported here\]$' ||
		fail "list cache does not show the cache events this machine refuses"
	echo "ok: hardware events refused as perf refuses them, listed as refused"
fi

# 7. Errors point at the wrong part of the string.
err_at() {
	local ev=$1 part=$2 want=$3
	"$cli" record -q -e "$ev" -o "$tmp/bad.data" -- true 2>"$tmp/err" && fail "'$ev' accepted"
	grep -q "$want" "$tmp/err" || fail "'$ev': expected '$want': $(cat "$tmp/err")"
	# The caret line's \___ starts under the wrong part.
	local line col expect
	line=$(grep -n 'event syntax error' "$tmp/err" | head -1 | cut -d: -f1)
	[ -n "$line" ] || fail "'$ev': no syntax error line: $(cat "$tmp/err")"
	col=$(sed -n "$((line + 2))p" "$tmp/err" | awk '{print index($0, "\\___")}')
	expect=$(awk -v s="$(sed -n "$((line + 1))p" "$tmp/err")" -v p="$ev" -v q="$part" \
		'BEGIN { print index(s, "'"'"'" p) + index(p, q) }')
	[ "$col" = "$expect" ] || fail "'$ev': error points at column $col, '$part' is at $expect: $(cat "$tmp/err")"
}
err_at cpu-clock:x x "unknown modifier 'x'"
err_at cpu-clock:pppp pppp "Bad modifier"
err_at cpu-clock:uu uu "given twice"
err_at 'sched:no_such_event' 'sched' "unknown tracepoint"
err_at 'no_such_pmu/config=1/' 'no_such_pmu' "Cannot find PMU"
err_at 'software/config=1,bogus/' 'bogus' "unknown term 'bogus'"
err_at '{cpu-clock,task-clock' '{' "no '}'"
err_at 'cpu-clock,' ',' "missing event"
echo "ok: errors point at the wrong part"

# 8. -F max reads the kernel's limit (and never writes it); -m rounds up.
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
"$cli" record -F max -e cpu-clock -o "$tmp/fmax.data" -- true 2>"$tmp/err" || fail "-F max: $(cat "$tmp/err")"
grep -q "Using a maximum frequency rate of $max Hz" "$tmp/err" || fail "-F max message: $(cat "$tmp/err")"
perf evlist -v -i "$tmp/fmax.data" | grep -q "sample_freq }: $max," || fail "-F max: sample_freq is not $max"
[ "$(cat /proc/sys/kernel/perf_event_max_sample_rate)" = "$max" ] || fail "-F max changed the limit"
both "-F max" -F max -e cpu-clock -- true
both "--user-regs" --user-regs=ax,bx,ip -e cpu-clock -- true
for m in 3 100K; do
	theirs=$(perf record -m "$m" -o "$tmp/p.data" -- true 2>&1 | grep rounding)
	ours=$("$cli" record -m "$m" -o "$tmp/o.data" -- true 2>&1 | grep rounding)
	[ -n "$theirs" ] && [ "$ours" = "$theirs" ] || fail "-m $m: perf says '$theirs', we say '$ours'"
done
echo "ok: -F max ($max Hz), -m rounding as perf"

# 9. perfring list filters as perf list does; every command answers --help.
for pat in sched 'sched:*wak*' sw; do
	theirs=$(perf list "$pat" 2>/dev/null | grep -E '\[(Tracepoint|Software) event\]' | awk '{print $1}' | sort)
	ours=$("$cli" list "$pat" | awk '{print $1}' | sort)
	[ -n "$ours" ] && [ "$ours" = "$theirs" ] || fail "list $pat: ours '$(echo $ours | head -c 200)', perf's '$(echo $theirs | head -c 200)'"
done
"$cli" list pmu | grep -q 'Kernel PMU event' || [ -z "$(ls /sys/bus/event_source/devices/*/events 2>/dev/null)" ] ||
	fail "list pmu shows no sysfs PMU event"
for c in record list demo ring-stat decode inject dump stats script report export top; do
	out=$("$cli" $c --help 2>&1) || fail "$c --help: exit $?: $out"
	{ grep -q "usage:" <<<"$out" && grep -q "perfring $c" <<<"$out"; } || fail "$c --help prints no usage: $(head -2 <<<"$out")"
done
[ ! -e ./--help ] || fail "ring-stat --help made a ring called --help"
echo "ok: list PATTERN as perf list, --help everywhere"
