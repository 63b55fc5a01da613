#!/usr/bin/env bash
# test-timeout: 600
# perf record's idioms in perfring record, perf 6.1 the oracle: each option
# is given to `perf record` and to `perfring record` the same way, and what
# perf script / report / buildid-list print for the two files is compared.
# Also: build-ids of the DSOs hit, symbols of a stripped binary through its
# .gnu_debuglink, JIT symbols from /tmp/perf-PID.map, and no task lost
# while -a starts (a fork storm running).  Skips (77) only if the kernel
# refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
asan_cli=${PERFRING_ASAN_CLI:-$cli}
wl=${WORKLOADS:-build/workloads}
make_tmp
bg=()
jit_pids=()
cleanup() {
	{
		for p in "${bg[@]}"; do kill "$p"; done
		wait
	} 2>/dev/null
	for p in "${jit_pids[@]}"; do rm -f "/tmp/perf-$p.map"; done
}
need_cmd perf linux-perf
T="timeout 120"

# perf opens the file without a warning.
perf_ok() {
	local out
	out=$(perf report --stats -i "$1" 2>&1) || fail "perf report --stats failed on $1: $out"
	grep -Eiq 'warning|error|incompatible|failed|unsupported' <<<"$out" &&
		fail "perf report --stats complained about $1: $(grep -Ei 'warning|error|incompatible|failed|unsupported' <<<"$out" | head -3)"
	out=$(perf script -i "$1" 2>&1 >/dev/null) || fail "perf script failed on $1: $out"
	grep -Eiq 'warning|error|incompatible|failed' <<<"$out" && fail "perf script complained about $1: $(head -3 <<<"$out")"
	return 0
}
# record NAME ARGS...: perf record and perfring record, same options, into
# $tmp/NAME.perf and $tmp/NAME.ours.
record() {
	local name=$1
	shift
	$T perf record -q -o "$tmp/$name.perf" "$@" >"$tmp/$name.perf.out" 2>&1 || fail "perf record $*: $(cat "$tmp/$name.perf.out")"
	$T "$cli" record -q -o "$tmp/$name.ours" "$@" >"$tmp/$name.ours.out" 2>&1 || fail "perfring record $*: $(cat "$tmp/$name.ours.out")"
	perf_ok "$tmp/$name.ours"
}
top_sym() { perf report --stdio --no-children -i "$1" 2>/dev/null | awk '!/^#/ && NF {print $NF; exit}'; }
samples_of() { perf script -i "$1" -F comm 2>/dev/null | awk -v c="$2" '$1 == c' | wc -l; }
hdr() { perf report --header-only -i "$1" 2>/dev/null; }

need_perf_events "$cli"

# 1. -p PID -- COMMAND: the process for as long as the command runs.
"$wl/hot" 60 &
hp=$!
bg+=("$hp")
wait_until "$WAIT_S" has_exec "$hp" hot || fail "hot did not start"
start=$SECONDS
record p -F 999 -p "$hp" -- sleep 0.5
((SECONDS - start < 30)) || fail "-p -- sleep 0.5 did not end with the command"
for f in p.perf p.ours; do
	[ "$(samples_of "$tmp/$f" hot)" -gt 0 ] || fail "-p PID -- sleep: no sample of the process in $f"
	[ "$(top_sym "$tmp/$f")" = hot_loop ] || fail "-p: top symbol in $f is $(top_sym "$tmp/$f")"
	[ "$(samples_of "$tmp/$f" sleep)" = 0 ] || fail "-p PID -- sleep: the command itself was recorded in $f"
done
{
	kill "$hp"
	wait "$hp"
} 2>/dev/null
echo "-p PID -- sleep 0.5: $(samples_of "$tmp/p.perf" hot) samples by perf, $(samples_of "$tmp/p.ours" hot) by perfring"

# 2. -D/--delay MSECS: no sample in the first MSECS after the exec.
first_gap() { # ms from the exec COMM to the first sample
	perf script --show-task-events -i "$1" -F comm,pid,time,event 2>/dev/null |
		awk '/COMM exec/ && !e {sub(":", "", $3); e = $3; next}
		     e && /cpu-clock/ {sub(":", "", $3); printf "%d\n", ($3 - e) * 1000; exit}'
}
record delay -F 999 -D 300 -- "$wl/hot" 0.8
for f in delay.perf delay.ours; do
	gap=$(first_gap "$tmp/$f")
	[ -n "$gap" ] && [ "$gap" -ge 290 ] || fail "-D 300: first sample ${gap:-none} ms after the exec in $f"
	[ "$(top_sym "$tmp/$f")" = hot_loop ] || fail "-D: top symbol in $f is $(top_sym "$tmp/$f")"
done
perf evlist -i "$tmp/delay.ours" | grep -qx dummy || fail "-D: no tracking dummy event in our file"
echo "-D 300: first sample $(first_gap "$tmp/delay.perf") ms (perf), $(first_gap "$tmp/delay.ours") ms (perfring) after the exec"
# -D START-END,...: perf 6.1's windows (ms after the start), the events
# enabled in each only, the recording stopped after the last (hot 5 is
# ended).  Each sample's time after the exec falls in a window (wide
# margins: timers run late under load), both windows have samples.
sample_ms() { # each sample's ms after the exec COMM
	perf script --show-task-events -i "$1" -F comm,pid,time,event 2>/dev/null |
		awk '/COMM exec/ && !e {sub(":", "", $3); e = $3; next}
		     e && /cpu-clock/ {sub(":", "", $3); printf "%d\n", ($3 - e) * 1000}'
}
# (perf exits with the command's SIGTERM, 143; perfring with 0, as for
# any command a signal ends)
start=$SECONDS
$T perf record -q -o "$tmp/windows.perf" -F 999 -D 100-150,400-450 -- "$wl/hot" 5 >"$tmp/windows.out" 2>&1
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 143 ] || fail "perf record -D 100-150,400-450: exit $rc: $(cat "$tmp/windows.out")"
$T "$cli" record -q -o "$tmp/windows.ours" -F 999 -D 100-150,400-450 -- "$wl/hot" 5 ||
	fail "perfring record -D 100-150,400-450: exit $?"
((SECONDS - start < 8)) || fail "-D 100-150,400-450: the recordings did not stop after the last window"
perf_ok "$tmp/windows.ours"
for f in windows.perf windows.ours; do
	sample_ms "$tmp/$f" >"$tmp/$f.ms"
	in1=$(awk '$1 >= 80 && $1 < 300' "$tmp/$f.ms" | wc -l)
	in2=$(awk '$1 >= 380 && $1 < 650' "$tmp/$f.ms" | wc -l)
	out=$(awk '!($1 >= 80 && $1 < 300) && !($1 >= 380 && $1 < 650)' "$tmp/$f.ms" | head -3)
	[ "$in1" -gt 0 ] && [ "$in2" -gt 0 ] && [ -z "$out" ] ||
		fail "-D 100-150,400-450 in $f: $in1 and $in2 samples in the windows, outside: ${out//$'\n'/ } ms"
	echo "-D 100-150,400-450: $f: $in1 + $in2 samples, from $(head -1 "$tmp/$f.ms") to $(tail -1 "$tmp/$f.ms") ms after the exec"
done
# -D -1: the events start disabled (perf enables them through --control,
# which perfring has not): no sample, the side band recorded.
record disabled -F 999 -D -1 -- "$wl/hot" 0.2
for f in disabled.perf disabled.ours; do
	n=$(perf script -i "$tmp/$f" 2>/dev/null | wc -l)
	[ "$n" = 0 ] || fail "-D -1: $n samples in $f"
	perf script --show-task-events -i "$tmp/$f" 2>/dev/null | grep -q 'COMM exec: hot' || fail "-D -1: no exec COMM of hot in $f"
done
# -D -1 --control fifo:CTL,ACK: perf's commands, each acknowledged:
# "ping" once recording, then (200 ms on) "enable", 300 ms of samples,
# "disable", "stop" (hot 20 is ended).  The samples start well after the
# exec and span about the 300 ms.
ctl_say() { # COMMAND: written to the control FIFO, its ack read
	timeout 10 sh -c 'printf "%s\n" "$1" >"$2"' _ "$1" "$tmp/ctl" || fail "--control: cannot write '$1'"
	read -r -t 10 -u "$ack_fd" reply && [ "$reply" = ack ] || fail "--control: no ack of '$1' (${reply:-nothing})"
}
for tool in perf "$cli"; do
	f=$tmp/control.$(basename "$tool")
	rm -f "$tmp/ctl" "$tmp/ack"
	mkfifo "$tmp/ctl" "$tmp/ack"
	exec {ack_fd}<>"$tmp/ack"
	start=$SECONDS
	$T $tool record -q -o "$f" -F 999 -D -1 --control "fifo:$tmp/ctl,$tmp/ack" -- "$wl/hot" 20 >"$tmp/ctl.out" 2>&1 &
	rec=$!
	ctl_say ping
	sleep 0.2
	ctl_say enable
	sleep 0.3
	ctl_say disable
	ctl_say stop
	wait "$rec"
	rc=$?
	exec {ack_fd}<&-
	[ "$rc" = 0 ] || [ "$rc" = 143 ] || fail "$tool record -D -1 --control: exit $rc: $(cat "$tmp/ctl.out")"
	((SECONDS - start < 15)) || fail "--control stop: $tool record did not stop"
	sample_ms "$f" >"$f.ms"
	first=$(head -1 "$f.ms")
	last=$(tail -1 "$f.ms")
	[ -n "$first" ] && [ "$first" -ge 150 ] && [ $((last - first)) -le 800 ] ||
		fail "-D -1 --control in $f: samples from ${first:-none} to ${last:-none} ms after the exec"
	echo "-D -1 --control: $(basename "$tool"): $(wc -l <"$f.ms") samples, from $first to $last ms after the exec"
done
[ "$(samples_of "$tmp/control.$(basename "$cli")" hot)" -gt 0 ] || fail "--control enable: no samples"
for bad in -2 20-10 10-20,15-30 10-; do
	"$cli" record -D "$bad" -q -o "$tmp/bad.data" -- true 2>/dev/null && fail "-D $bad accepted"
done
echo "-D -1: no samples, side band recorded, by perf and perfring"
"$cli" record --duration 0.1 -a -o "$tmp/dur.data" -q || fail "--duration"
"$cli" record -D 0.1s -q -o "$tmp/dur.data" -- true 2>/dev/null && fail "-D took a duration: it is --delay MSECS"

# 3. -d/--data: sample addresses.
record data -d -e page-faults -c 1 -- "$wl/faults" 500
for f in data.perf data.ours; do
	st=$(perf evlist -v -i "$tmp/$f" | grep -o 'sample_type: [A-Z_|]*')
	grep -q '[:|]ADDR\b' <<<"$st" && grep -q '|DATA_SRC' <<<"$st" || fail "-d: $f's $st lacks ADDR or DATA_SRC"
	n=$(perf script -i "$tmp/$f" -F comm,addr 2>/dev/null | awk '$1 == "faults" && $2 !~ /^0+$/' | wc -l)
	[ "$n" -ge 500 ] || fail "-d: $n faults with an address in $f, 500 touched pages"
done
diff <(perf script -i "$tmp/data.ours" -F comm,addr 2>/dev/null) <("$cli" script -i "$tmp/data.ours" -F comm,addr) >/dev/null ||
	fail "-d: perfring script -F addr differs from perf script on our file"

# 4. -T (--timestamp), -N (--no-buildid-cache): accepted, perf's meaning
# (time is in every sample; no cache is kept).
record tn -T -N -F 999 -- "$wl/hot" 0.2
perf script -i "$tmp/tn.ours" -F time 2>/dev/null | head -1 | grep -q '[0-9]\.[0-9]' || fail "-T: no time"

# 5. --no-inherit: the children are not recorded.
sh_children="'$wl/hot' 0.3 & '$wl/hot' 0.3; wait"
record inh -F 999 -- sh -c "$sh_children"
record noinh -F 999 --no-inherit -- sh -c "$sh_children"
for f in inh.perf inh.ours; do
	[ "$(samples_of "$tmp/$f" hot)" -gt 0 ] || fail "inherit: no sample of the children in $f"
done
for f in noinh.perf noinh.ours; do
	[ "$(samples_of "$tmp/$f" hot)" = 0 ] || fail "--no-inherit: children recorded in $f"
done

# 6. -k/--clockid.
# (perf has no --no-app: the two commands by hand)
$T perf record -q -o "$tmp/clk.perf" -F 999 -k monotonic_raw -- "$wl/hot" 0.2 2>/dev/null || fail "perf -k"
$T "$cli" record -q -o "$tmp/clk.ours" -F 999 -k monotonic_raw --no-app -- "$wl/hot" 0.2 || fail "perfring -k"
perf_ok "$tmp/clk.ours"
for f in clk.perf clk.ours; do
	hdr "$tmp/$f" | grep -q 'clockid: monotonic_raw (4)' || fail "-k monotonic_raw: $f says $(hdr "$tmp/$f" | grep clockid:)"
	perf evlist -v -i "$tmp/$f" | grep -q 'clockid: 4' || fail "-k: attr clockid in $f"
done
"$cli" record -q -k realtime -o "$tmp/x.data" -- true 2>/dev/null && fail "-k realtime with application events (CLOCK_MONOTONIC) accepted"

# 7. -z: zstd COMPRESSED records, HEADER_COMPRESSED.
record z -F 4000 --compression-level=3 -- "$wl/hot" 0.5
for f in z.perf z.ours; do
	hdr "$tmp/$f" | grep -q 'compressed : Zstd, level = 3' || fail "-z3: $f says $(hdr "$tmp/$f" | grep compressed)"
	[ "$(top_sym "$tmp/$f")" = hot_loop ] || fail "-z: top symbol in $f is $(top_sym "$tmp/$f")"
done
"$cli" dump -i "$tmp/z.ours" | grep -q COMPRESSED || fail "-z: no COMPRESSED record in our file"
diff <(perf script -i "$tmp/z.ours" 2>/dev/null) <("$asan_cli" script -i "$tmp/z.ours") >"$tmp/z.diff" ||
	fail "-z: perfring script and perf script differ on our compressed file: $(head -5 "$tmp/z.diff")"
echo "-z3: $(perf script -i "$tmp/z.ours" 2>/dev/null | wc -l) samples, perf reads them as perfring does"

# 8. --max-size: recording stops once the file holds that much: perf's
# passes the limit by what it wrote last, ours stays within it (the
# records that do not fit are not written).
"$wl/hot" 60 &
hp=$!
bg+=("$hp")
for who in perf ours; do
	start=$SECONDS
	if [ $who = perf ]; then
		$T perf record -q -a -F 4000 --max-size 64K -o "$tmp/max.perf" -- sleep 30 >/dev/null 2>&1
	else
		$T "$cli" record -q -a -F 4000 --max-size 64K -o "$tmp/max.ours" -- sleep 30 >/dev/null 2>"$tmp/max.err"
		# it says why it stopped, as perf does
		grep -q 'warning: --max-size 65536: size limit reached ([0-9]* KB), stopping session' "$tmp/max.err" ||
			fail "--max-size 64K: no word that it stopped: $(cat "$tmp/max.err")"
	fi
	((SECONDS - start < 25)) || fail "--max-size 64K: $who recorded for $((SECONDS - start)) s"
	size=$(hdr "$tmp/max.$who" | awk '/data size/ {print $NF}')
	if [ $who = perf ]; then
		[ "${size:-0}" -ge 65536 ] && [ "$size" -lt $((4 << 20)) ] || fail "--max-size 64K: perf's data size is ${size:-?}"
	else
		# (what already runs is described from /proc even past the
		# limit: on a machine with many processes that alone can pass
		# 64K, and then no sample may follow it)
		samples=$("$cli" stats -i "$tmp/max.ours" 2>/dev/null | awk '/ SAMPLE events:/ {print $3}')
		if [ "${size:-0}" -gt 65536 ]; then
			[ "${samples:-0}" = 0 ] ||
				fail "--max-size 64K: ours's data size is $size with ${samples} samples past the limit"
		else
			[ "${size:-0}" -ge 49152 ] || fail "--max-size 64K: ours's data size is ${size:-?} (want 48K..64K)"
		fi
	fi
done
{
	kill "$hp"
	wait "$hp"
} 2>/dev/null
perf_ok "$tmp/max.ours"

# 8b. --switch-output: perf's timestamped files, each one whole.
mkdir "$tmp/sw"
for who in perf ours; do
	if [ $who = perf ]; then
		$T perf record -q --switch-output=1s -F 999 -o "$tmp/sw/$who" -- "$wl/hot" 2.5 >/dev/null 2>&1 || fail "perf --switch-output"
	else
		$T "$cli" record -q --no-app --switch-output=1s -F 999 -o "$tmp/sw/$who" -- "$wl/hot" 2.5 || fail "perfring --switch-output"
	fi
	files=("$tmp/sw/$who".*)
	[ "${#files[@]}" -ge 2 ] || fail "--switch-output=1s over 2.5 s: $who wrote ${files[*]}"
	[ -e "$tmp/sw/$who" ] && fail "--switch-output: $who left $tmp/sw/$who unrenamed"
	total=0
	for f in "${files[@]}"; do
		[[ $f =~ /$who\.[0-9]{16}(\.[0-9]+)?$ ]] || fail "--switch-output: $f is not named <output>.YYYYmmddHHMMSScc"
		[ $who = ours ] && perf_ok "$f"
		n=$(samples_of "$f" hot)
		[ "$(top_sym "$f")" = hot_loop ] || fail "--switch-output: $f's top symbol is $(top_sym "$f")"
		total=$((total + n))
	done
	echo "--switch-output=1s: $who wrote ${#files[@]} files, $total samples of hot"
done
"$cli" record -q --no-app --switch-output -a -o "$tmp/sw/sig" --duration 30 &
rp=$!
bg+=("$rp")
wait_until "$WAIT_S" catches "$rp" USR2 || fail "the recorder does not catch SIGUSR2"
wait_until "$WAIT_S" grown "$tmp/sw/sig" 1 || fail "no output"
kill -USR2 "$rp"
wait_until "$WAIT_S" compgen -G "$tmp/sw/sig.*" >/dev/null || fail "SIGUSR2 made no file"
kill -INT "$rp"
wait "$rp" || fail "record --switch-output -a ended with $?"
files=("$tmp/sw/sig".*)
[ "${#files[@]}" = 2 ] || fail "--switch-output (signal): one SIGUSR2 and the end, files ${files[*]}"
for f in "${files[@]}"; do perf_ok "$f"; done

# 9. Build-ids of the DSOs hit (HEADER_BUILD_ID), as perf buildid-list shows.
record bid -F 999 -- "$wl/hot" 0.3
perf buildid-list -i "$tmp/bid.ours" >"$tmp/bid.ours.list" 2>&1 || fail "buildid-list: $(cat "$tmp/bid.ours.list")"
perf buildid-list -i "$tmp/bid.perf" >"$tmp/bid.perf.list" 2>&1
hot_id=$(readelf -n "$wl/hot" | awk '/Build ID/ {print $3}')
hot_path=$(readlink -f "$wl/hot")
grep -qx "$hot_id $hot_path" "$tmp/bid.ours.list" || fail "buildid-list: no '$hot_id $hot_path' in $(cat "$tmp/bid.ours.list")"
grep -qx "$hot_id $hot_path" "$tmp/bid.perf.list" || fail "perf's own buildid-list lacks the workload: $(cat "$tmp/bid.perf.list")"
while read -r id path; do
	case $path in
	'[kernel.kallsyms]') want=$(perf buildid-list -k) ;;
	'[vdso]') want=$(awk '$2 == "[vdso]" {print $1}' "$tmp/bid.perf.list") ;;
	*) want=$(readelf -n "$path" 2>/dev/null | awk '/Build ID/ {print $3; exit}') ;;
	esac
	[ "$id" = "$want" ] || fail "buildid-list: $path has $id, its build-id is ${want:-none}"
done <"$tmp/bid.ours.list"
echo "build-ids: perfring $(wc -l <"$tmp/bid.ours.list") DSOs, perf $(wc -l <"$tmp/bid.perf.list"), every id right"

# 10. A stripped binary, its symbols in a separate file (.gnu_debuglink).
mkdir "$tmp/strip"
objcopy --only-keep-debug "$wl/hot" "$tmp/strip/hot.debug"
objcopy --strip-all --add-gnu-debuglink="$tmp/strip/hot.debug" "$wl/hot" "$tmp/strip/hot"
readelf -S "$tmp/strip/hot" | grep -q '\.symtab' && fail "objcopy --strip-all left a .symtab"
record strip -F 999 -- "$tmp/strip/hot" 0.3
for f in strip.perf strip.ours; do
	[ "$(top_sym "$tmp/$f")" = hot_loop ] || fail "debuglink: perf report's top symbol in $f is $(top_sym "$tmp/$f")"
	"$cli" report -i "$tmp/$f" | grep -q '\[\.\] hot_loop' || fail "debuglink: perfring report does not name hot_loop in $f"
done
mv "$tmp/strip/hot.debug" "$tmp/strip/moved"
"$cli" report -i "$tmp/strip.ours" | grep -q '\[\.\] hot_loop' && fail "hot_loop named without its debug file: the check proves nothing"
# (perf is not asked: its build-id cache, ~/.debug, may hold the
# unstripped binary of the same build-id)
echo "stripped binary: hot_loop through .gnu_debuglink in perf and perfring"

# 10b. ... and by its build-id, /usr/lib/debug/.build-id/xx/rest.debug,
# under a private root given to perf and perfring as --symfs (perf looks
# for the object itself under it too).  A build-id of its own, so that no
# build-id cache (~/.debug) knows the binary.
cc=${CC:-cc}
mkdir -p "$tmp/bin"
$cc -O1 -o "$tmp/bin/hot" -Wl,--build-id=0x"$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')" "$(dirname "$0")/workloads/hot.c" ||
	fail "cannot build a workload with its own build-id ($cc)"
id=$(readelf -n "$tmp/bin/hot" | awk '/Build ID/ {print $3}')
root=$tmp/root
mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}" "$root$tmp/bin"
objcopy --only-keep-debug "$tmp/bin/hot" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
objcopy --strip-all "$tmp/bin/hot" "$tmp/bin/hot.stripped"
mv "$tmp/bin/hot.stripped" "$tmp/bin/hot"
cp "$tmp/bin/hot" "$root$tmp/bin/hot"
record bidbg -F 999 -- "$tmp/bin/hot" 0.3
for f in bidbg.perf bidbg.ours; do
	"$cli" report -i "$tmp/$f" | grep -q '\[\.\] hot_loop' && fail "hot_loop named without --symfs: the check proves nothing"
	perf report --stdio -i "$tmp/$f" --symfs="$root" 2>/dev/null | grep -q '\[\.\] hot_loop' ||
		fail "perf --symfs does not find hot_loop by build-id in $f"
	# (user space only: perf looks for the kernel's symbols under
	# --symfs too)
	diff <(perf report --stdio -i "$tmp/$f" --symfs="$root" 2>/dev/null | grep '\[\.\]') \
		<("$asan_cli" report -i "$tmp/$f" --symfs "$root" | grep '\[\.\]') >"$tmp/bidbg.diff" ||
		fail "--symfs: perfring report and perf report differ on $f: $(head -5 "$tmp/bidbg.diff")"
done
echo "build-id debug file under --symfs: perfring report = perf report"

# 10c. An object rebuilt after it was recorded: perf reads the recorded
# build's symbols from its build-id cache (which perf record fills; a
# private one here: perf --buildid-dir, PERF_BUILDID_DIR for perfring as
# perf passes it to the commands it runs) and shows bare addresses without
# one; perfring the same, byte for byte.
mkdir -p "$tmp/rb"
rand_id() { od -An -N20 -tx1 /dev/urandom | tr -d ' \n'; }
$cc -O1 -g -o "$tmp/rb/hot" -Wl,--build-id=0x"$(rand_id)" "$(dirname "$0")/workloads/hot.c" ||
	fail "cannot build the workload to rebuild ($cc)"
perf --buildid-dir "$tmp/bidcache" record -q -F 999 -o "$tmp/rb.perf" -- "$tmp/rb/hot" 0.3 2>/dev/null ||
	fail "perf record of the workload to rebuild"
$cc -O1 -g -o "$tmp/rb/hot" -Wl,--build-id=0x"$(rand_id)" "$(dirname "$0")/workloads/fanout.c" ||
	fail "cannot rebuild ($cc)"
for cache in "$tmp/bidcache" "$tmp/nocache"; do
	perf --buildid-dir "$cache" script -i "$tmp/rb.perf" >"$tmp/rb.perf.txt" 2>/dev/null || fail "perf script (rebuilt object)"
	PERF_BUILDID_DIR=$cache "$cli" script -i "$tmp/rb.perf" >"$tmp/rb.ours.txt" 2>"$tmp/rb.err" ||
		fail "perfring script (rebuilt object): $(cat "$tmp/rb.err")"
	cmp -s "$tmp/rb.perf.txt" "$tmp/rb.ours.txt" ||
		fail "rebuilt object, cache $(basename "$cache"): perfring script differs from perf script: $(diff "$tmp/rb.perf.txt" "$tmp/rb.ours.txt" | head -5)"
	if [ "$cache" = "$tmp/bidcache" ]; then
		grep -q ' hot_loop+' "$tmp/rb.ours.txt" || fail "rebuilt object: hot_loop not found through the build-id cache"
	else
		grep -q ' hot_loop+' "$tmp/rb.ours.txt" && fail "rebuilt object without a cache: hot_loop named (from the new build?)"
		grep -q 'not the object that was recorded' "$tmp/rb.err" || fail "rebuilt object: no warning"
	fi
	diff <(perf --buildid-dir "$cache" report --stdio -i "$tmp/rb.perf" 2>/dev/null | grep '%' | grep -v '^# (Tip:') \
		<(PERF_BUILDID_DIR=$cache "$cli" report -i "$tmp/rb.perf" 2>/dev/null | grep '%') >"$tmp/rb.diff" ||
		fail "rebuilt object, cache $(basename "$cache"): perfring report differs: $(head -5 "$tmp/rb.diff")"
done
echo "rebuilt object: the recorded build's symbols from perf's build-id cache, addresses without it, as perf"

# 11. perf record's sample and record options: each gives the attr bits
# perf's gives (perf evlist -v on both files: our files also carry CPU and
# IDENTIFIER always, which -P, --sample-cpu and --sample-identifier ask
# for), and perf reads the file.
attr_of() { perf evlist -v -i "$1" 2>/dev/null | head -1; }
bits_of() { attr_of "$1" | sed -n 's/.*sample_type: \([A-Z_|]*\).*/\1/p' | tr '|' '\n' | sort; }
for opt in -R -W -P --sample-cpu --sample-identifier --phys-data --data-page-size --code-page-size \
	--switch-events "-g --user-callchains" "-g --kernel-callchains"; do
	name=opt$(echo "$opt" | tr -dc 'a-zA-Z')
	# shellcheck disable=SC2086 # "-g --user-callchains" is two options
	record "$name" -F 999 $opt -- "$wl/hot" 0.1
	missing=$(comm -23 <(bits_of "$tmp/$name.perf") <(bits_of "$tmp/$name.ours") | tr '\n' ' ')
	[ -z "$missing" ] || fail "$opt: perf's samples carry $missing, ours do not"
	for flag in context_switch exclude_callchain_kernel exclude_callchain_user; do
		[ "$(attr_of "$tmp/$name.perf" | grep -c "$flag: 1")" = "$(attr_of "$tmp/$name.ours" | grep -c "$flag: 1")" ] ||
			fail "$opt: $flag differs: perf '$(attr_of "$tmp/$name.perf")', ours '$(attr_of "$tmp/$name.ours")'"
	done
done
# (a command that sleeps is switched out for sure; a busy one may not be)
"$cli" record -q --switch-events -o "$tmp/swev.ours" -- sleep 0.05 || fail "--switch-events: record failed"
perf script --show-switch-events -i "$tmp/swev.ours" 2>/dev/null | grep -q 'PERF_RECORD_SWITCH' ||
	fail "--switch-events: perf script shows no PERF_RECORD_SWITCH in our file"
"$cli" script -i "$tmp/optR.ours" >/dev/null || fail "-R: perfring script cannot read its own file"
"$cli" script -i "$tmp/optW.ours" >/dev/null || fail "-W: perfring script cannot read its own file"
# -B: no build-id table; --timestamp-filename: perf's name at the end
record nobid -B -F 999 -- "$wl/hot" 0.1
perf buildid-list -i "$tmp/nobid.ours" 2>/dev/null | grep -q '^[0-9a-f]\{40\}' && fail "-B: our file still lists build-ids"
perf buildid-list -i "$tmp/nobid.perf" 2>/dev/null | grep -q '^[0-9a-f]\{40\}' && fail "-B: perf's file lists build-ids: the check proves nothing"
mkdir -p "$tmp/tsf"
"$cli" record -q --timestamp-filename -F 999 -o "$tmp/tsf/out.data" -- "$wl/hot" 0.1 2>"$tmp/tsf.err" || fail "--timestamp-filename: $(cat "$tmp/tsf.err")"
ls "$tmp/tsf" | grep -qx 'out\.data\.[0-9]\{16\}' || fail "--timestamp-filename: files $(ls "$tmp/tsf")"
perf_ok "$tmp/tsf"/out.data.*
echo "sample options: -R -W -P --sample-cpu --sample-identifier --phys-data --data/code-page-size --switch-events --user/kernel-callchains as perf's attrs; -B, --timestamp-filename"

# 11. JIT symbols: /tmp/perf-PID.map.
"$wl/jit" 0 2>/dev/null &
jp=$!
wait "$jp"
jrc=$?
rm -f "/tmp/perf-$jp.map"
if [ $jrc = 3 ]; then
	echo "jit: no JIT code for this architecture, part skipped"
else
	record jit -F 999 -- "$wl/jit" 0.4
	for f in jit.perf jit.ours; do
		p=$(perf script -i "$tmp/$f" -F comm,pid 2>/dev/null | awk '$1 == "jit" {print $2; exit}')
		jit_pids+=("$p")
	done
	for f in jit.perf jit.ours; do
		perf report --stdio -i "$tmp/$f" 2>/dev/null | grep -q '\[JIT\] tid [0-9]* *\[\.\] jit_spin_loop' ||
			fail "perf does not name jit_spin_loop in $f"
		diff <(perf report --stdio -i "$tmp/$f" 2>/dev/null | grep -v '^#' | grep .) \
			<("$asan_cli" report -i "$tmp/$f" | grep -v '^#' | grep .) >"$tmp/jit.diff" ||
			fail "jit: perfring report and perf report differ on $f: $(head -5 "$tmp/jit.diff")"
	done
	diff <(perf script -i "$tmp/jit.ours" 2>/dev/null) <("$asan_cli" script -i "$tmp/jit.ours") >/dev/null ||
		fail "jit: perfring script and perf script differ"
	echo "jit: jit_spin_loop from /tmp/perf-PID.map, perfring report = perf report"
	# Without the map the JIT code has no symbol: perf widens Shared
	# Object to an address's 16 digits for it ("[JIT] tid N" is shorter);
	# the second half of the run holds JIT samples only.
	jmap="/tmp/perf-${jit_pids[1]}.map"
	mv "$jmap" "$jmap.aside"
	report_like_perf "$tmp/jit.ours" --time 50%-100%
	mv "$jmap.aside" "$jmap"
	grep -q '^ *[0-9.]*%  jit  *\[JIT\] tid [0-9]*  *\[\.\] 0x' "$tmp/ours.txt" ||
		fail "jit without its map: no unresolved JIT entry"
fi

# 12. -a while processes fork: every child is named (FORK/COMM from the
# tracking event enabled before /proc is read).
storm() {
	while :; do
		for k in 1 2 3 4 5 6; do
			(
				i=0
				while [ $i -lt 3000 ]; do i=$((i + 1)); done
			) &
		done
		wait
	done
}
storm &
bg+=("$!")
for i in 1 2; do
	$T perf record -q -a -o "$tmp/storm$i.perf" -- sleep 0.3 2>/dev/null || fail "perf record -a"
	$T "$cli" record -q -a -o "$tmp/storm$i.ours" --duration 0.3 || fail "perfring record -a"
	for f in "storm$i.perf" "storm$i.ours"; do
		n=$(perf script -i "$tmp/$f" -F comm,pid 2>/dev/null | grep -c '^ *:[0-9]')
		[ "$n" = 0 ] || fail "-a during a fork storm: $n samples of unnamed tasks in $f"
	done
done
perf_ok "$tmp/storm1.ours"
echo "fork storm under -a: every sampled task named, 2 runs, perf and perfring"
echo "record options: ok"
