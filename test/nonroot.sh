#!/usr/bin/env bash
# Recording without root, as perf record does it: an unprivileged user
# (nobody, through setpriv) runs `perf record` and `perfring record` with
# the same options on the same program.  At perf_event_paranoid 2 (Debian's
# default) the kernel refuses kernel samples; both must fall back to
# user-space-only events (":u", exclude_kernel and exclude_hv), perfring
# with perf's message, and give the same attrs (perf evlist -v), samples
# perf script reads without a word, none of them in the kernel.  What
# cannot fall back (an event of the kernel only) fails on both sides.  A
# program's own events recorded as that user decode in perf script.
# Skips (77) only if the kernel refuses perf_event_open to the user.
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
need_cmd setpriv util-linux
id nobody >/dev/null 2>&1 || fail "there is no user nobody"
[ "$(id -u)" = 0 ] || skip "not root: cannot run as another user (the test itself needs no root otherwise)"
# The user's own copies of the program and of perfring (one binary: the
# checkout may sit where nobody cannot enter), in a directory it may write.
chmod 0777 "$tmp"
cp "$(realpath "$wl")/hot" "$tmp/hot"
cp "$(realpath "$cli")" "$tmp/perfring"
chmod 0755 "$tmp/hot" "$tmp/perfring"
cli=$tmp/perfring
user() { (cd "$tmp" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
user test -x "$cli" || fail "nobody cannot run $cli"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if ! user perf record -q -e cpu-clock:u -o "$tmp/probe.data" -- true 2>"$tmp/probe.err"; then
	skip "the kernel refuses perf_event_open to nobody (perf_event_paranoid $paranoid): $(cat "$tmp/probe.err")"
fi
echo "perf_event_paranoid is $paranoid"

# both TAG SYM ARGS...: perf record and perfring record as nobody, then
# the attrs of both files as perf evlist -v shows them; a sample must
# name SYM.
n=0
both() {
	local tag=$1 sym=$2
	shift 2
	n=$((n + 1))
	user perf record -v -o "perf-$n.data" "$@" -- ./hot 0.2 >/dev/null 2>"$tmp/perf-$n.err" ||
		fail "$tag: perf record as nobody failed: $(tail -3 "$tmp/perf-$n.err")"
	user "$cli" record -o "ours-$n.data" "$@" -- ./hot 0.2 >/dev/null 2>"$tmp/ours-$n.err" ||
		fail "$tag: perfring record as nobody failed where perf record worked: $(cat "$tmp/ours-$n.err")"
	# perf reads another user's file only with -f; the files are ours now
	chown "$(id -u)" "$tmp/perf-$n.data" "$tmp/ours-$n.data"
	evlist_attrs "$tmp/perf-$n.data" >"$tmp/perf-$n.attrs"
	evlist_attrs "$tmp/ours-$n.data" >"$tmp/ours-$n.attrs"
	[ -s "$tmp/perf-$n.attrs" ] || fail "$tag: perf evlist shows nothing for perf's file"
	diff -u "$tmp/perf-$n.attrs" "$tmp/ours-$n.attrs" >"$tmp/diff" ||
		fail "$tag: attrs differ from perf's (-perf +ours): $(cat "$tmp/diff")"
	# perf's message (perf prints it with -v), once per event that fell back
	local pm om
	pm=$(grep -c 'trying to fall back to excluding kernel' "$tmp/perf-$n.err")
	om=$(grep -c 'warning: kernel.perf_event_paranoid=[0-9]*, trying to fall back to excluding kernel and hypervisor  samples' "$tmp/ours-$n.err")
	[ "$pm" = "$om" ] || fail "$tag: perf printed its fall-back message $pm times, perfring $om: $(cat "$tmp/ours-$n.err")"
	if [ "$paranoid" -ge 2 ]; then
		# (an event that is :u already needs none)
		[ "$om" -ge 1 ] || [[ $* == *:u* ]] || fail "$tag: no fall-back at perf_event_paranoid $paranoid"
		grep -q 'exclude_kernel=1 exclude_hv=1' "$tmp/ours-$n.attrs" || fail "$tag: kernel not excluded: $(cat "$tmp/ours-$n.attrs")"
	fi
	local out
	out=$(perf script -i "$tmp/ours-$n.data" -F ip,sym 2>"$tmp/script.err") || fail "$tag: perf script failed: $(cat "$tmp/script.err")"
	[ -s "$tmp/script.err" ] && fail "$tag: perf script complained: $(head -3 "$tmp/script.err")"
	grep -q "$sym" <<<"$out" || fail "$tag: no sample in $sym: $(head -3 <<<"$out")"
	if [ "$paranoid" -ge 2 ] && grep -Eq '^ *ffff' <<<"$out"; then
		fail "$tag: kernel samples in a user-only recording: $(grep -Em3 '^ *ffff' <<<"$out")"
	fi
	echo "ok: $tag: $(tr '\n' ';' <"$tmp/ours-$n.attrs" | cut -c1-120)... as perf, $(wc -l <<<"$out") samples"
}

both "cpu-clock" hot_loop -e cpu-clock
both "-g" hot_loop -g -e cpu-clock
both "page-faults -c 1" _dl_start -e page-faults -c 1
both "two events" hot_loop -e cpu-clock -e task-clock
both "{a,b}:S" hot_loop -e '{cpu-clock,page-faults}:S'
both "already :u" hot_loop -e cpu-clock:u

# The default event: perf's cycles falls back to cpu-clock, then to user
# space; the samples are the user's.
user "$cli" record -o default.data -- ./hot 0.2 >/dev/null 2>"$tmp/err" ||
	fail "perfring record -- ./hot as nobody: $(cat "$tmp/err")"
chown "$(id -u)" "$tmp/default.data"
perf script -i "$tmp/default.data" -F ip,sym 2>/dev/null | grep -q hot_loop || fail "default event: no sample in hot_loop"
echo "ok: the default event as nobody"

# A program's own events (libperfring) as nobody, who cannot read
# tracefs: the file's TRACING_DATA has the kernel's headers built in, so
# perf script decodes the fields; the default block mode loses nothing.
example=$(realpath "${EXAMPLES:-$(dirname "$wl")/examples}/app_trace")
cp "$example" "$tmp/app_trace" && chmod 0755 "$tmp/app_trace"
user "$cli" record -o app.data -- ./app_trace >"$tmp/app.out" 2>"$tmp/app.err" ||
	fail "perfring record -- app_trace as nobody: $(cat "$tmp/app.err")"
grep -q '^app_trace: 90000 events written, 0 lost (recorded)$' "$tmp/app.out" || fail "app_trace as nobody: $(cat "$tmp/app.out")"
grep -qi 'warning' "$tmp/app.err" && ! grep -q 'perf_event_paranoid' "$tmp/app.err" && fail "app_trace as nobody: $(cat "$tmp/app.err")"
chown "$(id -u)" "$tmp/app.data"
perf script -i "$tmp/app.data" >"$tmp/app.txt" 2>"$tmp/app.perr" || fail "perf script of the app's file: $(cat "$tmp/app.perr")"
[ "$(grep -c ' webapp:[a-z_]*:' "$tmp/app.txt")" = 90000 ] || fail "perf script shows $(grep -c ' webapp:' "$tmp/app.txt") application events, not 90000"
grep -q 'webapp:request: id=7 bytes=700 path=/style.css' "$tmp/app.txt" || fail "perf script does not decode the fields: $(grep -m1 webapp:request "$tmp/app.txt")"
echo "ok: application events as nobody: all 90000, fields decoded by perf script"

# A kernel-only event cannot fall back: both refuse it, perfring saying why.
if [ "$paranoid" -ge 2 ]; then
	user perf record -q -e cpu-clock:k -o k.data -- true >/dev/null 2>&1 && fail "perf record -e cpu-clock:k worked as nobody"
	user "$cli" record -q -e cpu-clock:k -o k.data -- true 2>"$tmp/err" && fail "perfring record -e cpu-clock:k worked as nobody"
	grep -q "no permission to open event 'cpu-clock:k'.*perf_event_paranoid is $paranoid" "$tmp/err" ||
		fail "cpu-clock:k: message: $(cat "$tmp/err")"
	echo "ok: cpu-clock:k refused as perf refuses it, with the reason"
fi

# --off-cpu: the kernel loads no tracing BPF program for nobody (it needs
# CAP_BPF and CAP_PERFMON): the default mode says so in a line and reads
# the sched events instead (which this kernel may refuse too: then that
# is the error); --off-cpu-mode bpf fails with the kernel's reason.
cp "$(realpath "$wl")/offcpu" "$tmp/offcpu" && chmod 0755 "$tmp/offcpu"
if user "$cli" record --off-cpu -o oc.data -- ./offcpu 50 50 20 >/dev/null 2>"$tmp/err"; then
	grep -q 'measured from the sched events' "$tmp/err" || fail "--off-cpu as nobody: not the events mode: $(cat "$tmp/err")"
fi
grep -q 'warning: --off-cpu: the BPF program cannot run (.*): reading the sched events instead' "$tmp/err" ||
	fail "--off-cpu as nobody: no fall-back line: $(cat "$tmp/err")"
! grep -q 'measured by BPF' "$tmp/err" || fail "--off-cpu as nobody ran the BPF program: $(cat "$tmp/err")"
user "$cli" record --off-cpu --off-cpu-mode bpf -o oc.data -- ./offcpu 50 50 20 >/dev/null 2>"$tmp/err" &&
	fail "--off-cpu-mode bpf worked as nobody: $(cat "$tmp/err")"
grep -q 'error: --off-cpu-mode bpf: .*not permitted' "$tmp/err" || fail "--off-cpu-mode bpf as nobody: message: $(cat "$tmp/err")"
echo "ok: --off-cpu as nobody falls back from BPF with a line saying why ($(grep -o 'bpf: .*' "$tmp/err" | head -1))"
echo "PASS"
