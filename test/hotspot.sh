#!/usr/bin/env bash
# hotspot's perf.data parser (hotspot-perfparser, Debian's hotspot: the
# program behind the GUI, run headless) on perfring's files and on perf's
# of the same kind: on ours it prints no message it does not print on
# perf's.  Before issue 28 it warned "FINISHED_ROUND with non-zero content
# size detected" at every round of ours (the checkpoint's feature table was
# the round's payload), and "unhandled event type" at each carrier.  It
# must also read every sample perf reads (--print-stats), application
# events included, and with -z.
#   1. application events from a ring and the kernel's (cpu-clock,
#      sched:sched_switch) system-wide, against perf record -a;
#   2. a program's call graphs (-g), against perf record -g;
#   3. 1 with -z (zstd PERF_RECORD_COMPRESSED), against perf record -z.
# perf records with -k CLOCK_MONOTONIC, the clock perfring records on
# (perfparser does not read CLOCKID: one message on both).  Skips (77)
# only if the kernel refuses perf_event_open.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
apps=${TEST_APPS:-build/apps}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
cli=$(realpath "$cli")
app=$(realpath "$apps/apptrace")
wl=$(realpath "$wl")
[ -x "$app" ] || fail "$app is missing (make check builds it)"
# not on PATH: the package puts it in its libexec
pp=$(dpkg -L hotspot 2>/dev/null | grep '/hotspot-perfparser$' | head -1)
[ -n "$pp" ] && [ -x "$pp" ] || fail "hotspot-perfparser not found (Debian package hotspot: scripts/deps.sh installs it)"
need_perf_events
cd "$tmp" || exit 1

# The messages perfparser prints reading $1, numbers left out, sorted
# and counted once each; its sample count into $1.samples.
messages() {
	local f=$1
	timeout 300 "$pp" --input "$f" --output /dev/null 2>"$f.err" >/dev/null ||
		fail "perfparser failed on $f: $(head -5 "$f.err")"
	sed 's/[0-9][0-9]*/N/g' "$f.err" | sort -u >"$f.msgs"
	timeout 300 "$pp" --input "$f" --print-stats 2>/dev/null | awk '$1 == "samples:" { print $2 }' >"$f.samples"
}

# The sample count perf report --stats gives.
perf_samples() {
	perf report --stats -i "$1" 2>/dev/null | awk '/^ *SAMPLE events:/ { print $3; exit }'
}

# like_perf OURS PERFS: no message on ours that perf's file does not get,
# and perfparser reads all our samples.
like_perf() {
	local ours=$1 theirs=$2 extra n want
	messages "$ours"
	messages "$theirs"
	# perfparser names the version in HEADER_VERSION: perf's ("6.1.N")
	# tells it FINISHED_ROUND can be trusted, ours ("perfring-V") does
	# not, so it says at our first round that it switches to them (a
	# debug line, not a warning; no line with tracepoint events)
	extra=$(comm -23 "$ours.msgs" "$theirs.msgs" | grep -v '^FINISHED_ROUND detected\. Switching to automatic buffering$')
	[ -z "$extra" ] || fail "perfparser on $ours says what it does not say on perf's $theirs: $extra"
	grep -q 'FINISHED_ROUND with non-zero content' "$ours.err" && fail "perfparser: FINISHED_ROUND with content in $ours"
	n=$(cat "$ours.samples")
	want=$(perf_samples "$ours")
	[ -n "$want" ] && [ "$want" -gt 0 ] || fail "perf report --stats: no samples in $ours"
	# (Debian 12's perfparser is built without zstd: it skips
	# PERF_RECORD_COMPRESSED, perf's as ours, and says so)
	if grep -q 'zstd decompression support not available' "$theirs.err"; then
		grep -q 'zstd decompression support not available' "$ours.err" ||
			fail "perfparser without zstd did not say so on $ours"
		n="$n outside COMPRESSED records (this perfparser has no zstd)"
	else
		[ "$n" = "$want" ] || fail "perfparser read $n samples of $ours, perf $want"
	fi
	echo "$ours: perfparser reads its $n samples, no message perf's $theirs does not get ($(wc -l <"$ours.msgs") kinds: $(tr '\n' ';' <"$ours.msgs"))"
}

# 1. application events and the kernel's, system-wide
PERFRING_RING_SIZE=4M PERFRING_MODE=block "$cli" record -q -a -e cpu-clock -e sched:sched_switch -o ours-app.data \
	-- "$app" 2 2000 >app.out 2>rec.err || fail "perfring record of the app: $(cat rec.err)"
read -r _ emitted _ lost _ <app.out
[ "$emitted" -gt 0 ] && [ "$lost" = 0 ] || fail "the app emitted $emitted events, lost $lost"
perf script -i ours-app.data 2>/dev/null | grep -c 'apptest:' >n.app
[ "$(cat n.app)" -ge "$emitted" ] || fail "perf script shows $(cat n.app) application events of $emitted"
perf record -q -k CLOCK_MONOTONIC -a -e cpu-clock -e sched:sched_switch -o perf-a.data -- "$wl/pingpong" 2000 2>/dev/null ||
	fail "perf record -a"
like_perf ours-app.data perf-a.data

# 2. call graphs of one program
"$cli" record -q -g -o ours-g.data -- "$wl/hot" 0.3 || fail "perfring record -g"
perf record -q -k CLOCK_MONOTONIC -g -o perf-g.data -- "$wl/hot" 0.3 2>/dev/null || fail "perf record -g"
like_perf ours-g.data perf-g.data

# 3. 1 with -z
PERFRING_RING_SIZE=4M PERFRING_MODE=block "$cli" record -q -z -a -e cpu-clock -e sched:sched_switch -o ours-z.data \
	-- "$app" 2 2000 >app.out 2>rec.err || fail "perfring record -z of the app: $(cat rec.err)"
perf report --stats -i ours-z.data 2>/dev/null | grep -q 'COMPRESSED events: *[1-9]' || fail "ours-z.data: no COMPRESSED records"
perf record -q -z -k CLOCK_MONOTONIC -a -e cpu-clock -e sched:sched_switch -o perf-z.data -- "$wl/pingpong" 2000 2>/dev/null ||
	fail "perf record -z -a"
like_perf ours-z.data perf-z.data
echo "hotspot: perfparser reads perfring's files as it reads perf's"
