# Helpers for the shell tests (sourced, not run).  A test waits for the
# condition it needs, bounded, instead of sleeping and hoping: a loaded
# machine only makes the wait longer.
#
# Every test/*.sh sources this file first:
#   . "$(dirname "$0")/lib.sh"
#   make_tmp                     # $tmp, removed at exit (after cleanup())
#   need_perf_events [RECORDER]  # skip (77) only if the kernel refuses
#   need_cmd perf linux-perf     # a missing oracle fails, it never skips

# fail MESSAGE: the test failed (exit 1).
fail() { echo "FAILED: $*" >&2; exit 1; }

# skip MESSAGE: the test cannot run here (exit 77).  Only for what the
# kernel refuses (perf_event_open, a mount, a tracefs instance): a missing
# tool is a failure (need_cmd).
skip() { echo "SKIP: $*" >&2; exit 77; }

# make_tmp: $tmp, a new directory, removed when the test exits (KEEP=1
# keeps it and says where).  A test that starts processes or changes the
# system defines cleanup(), which runs first, whatever the exit.
make_tmp() {
	tmp=$(mktemp -d) || fail "mktemp -d"
	trap lib_exit EXIT
}

lib_exit() {
	local rc=$?
	if declare -F cleanup >/dev/null; then cleanup || true; fi
	if [ -n "${KEEP:-}" ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	exit "$rc"
}

# need_cmd COMMAND [PACKAGE]: COMMAND is installed, or the test fails
# naming the Debian package scripts/deps.sh installs it from.
need_cmd() {
	command -v "$1" >/dev/null || fail "$1 is not installed (scripts/deps.sh installs ${2:-it})"
}

# need_perf_events [RECORDER]: RECORDER (perf, the default, or a perfring
# CLI) records an empty command into $tmp/probe.data (kept: a first file
# to check).  Skips (77) when the kernel refuses perf_event_open; any
# other failure of the probe fails the test.
need_perf_events() {
	local rec=${1:-perf} probe=${tmp:?make_tmp before need_perf_events}/probe
	[ "$rec" = perf ] && need_cmd perf linux-perf
	if ! "$rec" record -q -e dummy -o "$probe.data" -- true 2>"$probe.err"; then
		grep -qi 'permission\|not permitted\|is limited\|not supported\|not implemented' "$probe.err" &&
			skip "kernel refuses perf_event_open: $(cat "$probe.err")"
		fail "$(basename "$rec") record -e dummy -- true: $(cat "$probe.err")"
	fi
	rm -f "$probe.err"
}

# Bound of every wait_until in the tests: generous, far below the runner's
# per-test limit (test/run-tests.sh).
WAIT_S=${PERFRING_TEST_WAIT:-60}

# wait_until SECONDS COMMAND [ARG...]: runs COMMAND every 10 ms until it
# succeeds; status 1 if it did not within SECONDS.
wait_until() {
	local limit=$1 deadline
	shift
	deadline=$((SECONDS + limit + 1))
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.01
	done
}

# catches PID SIGNAL: process PID has a handler for SIGNAL (a name such as
# USR2 or a number), from its SigCgt mask.  Status 1 also if it is gone.
catches() {
	local pid=$1 sig=$2 mask
	[[ $sig =~ ^[0-9]+$ ]] || sig=$(kill -l "$sig") || return 1
	mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ -n "$mask" ] && (((16#$mask >> (sig - 1)) & 1))
}

file_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# grown FILE BYTES: FILE is at least BYTES long.
grown() { [ "$(file_size "$1")" -ge "$2" ]; }

# has_exec PID NAME: PID runs NAME (it got past its exec).
has_exec() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

# report_like_perf FILE [OPTION...]: perf report --stdio and $cli report
# with the options on FILE print the same, byte for byte: perf's text
# without its first line and its tip (the last 3 lines, "#", "# (Tip: ...)",
# "#"), ours without its first line.  Needs $cli, $tmp and fail().
report_like_perf() {
	local f=$1
	shift
	perf report --stdio -i "$f" "$@" 2>/dev/null | sed 1d |
		awk '{ l[NR] = $0 } END { n = NR; if (l[n - 1] ~ /^# \(Tip:/) n -= 3; for (i = 1; i <= n; i++) print l[i] }' \
			>"$tmp/perf.txt" || fail "$(basename "$f") $*: perf report failed"
	"$cli" report -i "$f" "$@" >"$tmp/ours.full" 2>"$tmp/ours.err" ||
		fail "$(basename "$f") $*: perfring report failed (exit $?): $(cat "$tmp/ours.err")"
	sed 1d "$tmp/ours.full" >"$tmp/ours.txt"
	grep -q '%' "$tmp/perf.txt" || fail "$(basename "$f") $*: perf report shows no entries"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "$(basename "$f") $*: differs from perf report --stdio"
	fi
	echo "$(basename "$f") $*: $(grep -c '%' "$tmp/ours.txt") entries as perf report"
}

# evlist_attrs FILE: the attr fields an event string decides, one line
# per event, from perf evlist -v: name, type, config, exclusions, precise_ip, group reads.
evlist_attrs() {
	perf evlist -v -i "$1" 2>/dev/null | grep -v '^#' | awk '
	{
		name = $0; sub(/: type: .*/, "", name)
		out = name
		line = $0
		gsub(/\{ sample_period, sample_freq \}/, "period", line)
		gsub(/\{ bp_addr, config1 \}/, "bp_addr", line)
		gsub(/\{ bp_len, config2 \}/, "bp_len", line)
		n = split(line, f, ", ")
		split("", v)
		for (i = 1; i <= n; i++) {
			k = f[i]; sub(/^.*: type/, "type", k)
			split(k, kv, ": ")
			v[kv[1]] = kv[2]
		}
		out = out " type=" v["type"] " config=" (("config" in v) ? v["config"] : 0)
		split("exclude_user exclude_kernel exclude_hv exclude_idle exclude_host exclude_guest precise_ip pinned exclusive freq", keys, " ")
		for (i = 1; i in keys; i++)
			out = out " " keys[i] "=" ((keys[i] in v) ? v[keys[i]] : 0)
		if (!(("freq" in v)))
			out = out " period=" v["period"]
		if ("bp_type" in v)
			out = out " bp_type=" v["bp_type"] " bp_addr=" v["bp_addr"] " bp_len=" v["bp_len"]
		else if ("bp_addr" in v || "bp_len" in v)
			out = out " config1=" v["bp_addr"] " config2=" v["bp_len"]
		out = out " read=" ((v["sample_type"] ~ /READ/) ? 1 : 0)
		out = out " group=" ((v["read_format"] ~ /GROUP/) ? 1 : 0)
		print out
	}'
}

# sans_ckpt_task [--deltatime]: perf's output (script --show-task-events,
# report --tasks) on stdin without the lines of perfring's checkpoint task
# (-2/-2: one COMM per round that perf shows and perfring does not, see
# docs/design.md section 9).  With --deltatime, perf counts the line after
# such a COMM from its time 0 (the absolute time): that line's time
# column becomes "-" (and
# mask_times_at does the same in perfring's output, at the line numbers
# this writes to $tmp/ckpt_next.lines).
sans_ckpt_task() {
	awk -v delta="${1:-}" -v out="$tmp/ckpt_next.lines" '
		BEGIN { printf "" >out }
		/:-2\/-2$/ || /^ *-2 +-2 +-?[0-9]+ \|/ { next_masked = delta != ""; next }
		{ n++; if (next_masked) { print n >out; next_masked = 0 } print }'
}

# mask_times_at: stdin with the time column ("12.345678:") of the lines
# sans_ckpt_task listed replaced by "-".
mask_times_at() {
	awk -v list="$tmp/ckpt_next.lines" '
		BEGIN { while ((getline l <list) > 0) m[l] = 1 }
		{ if (NR in m) sub(/ +[0-9]+\.[0-9]+:/, " -:"); print }'
}

# idle_visible_pin RECORDER: sets the array pin to "taskset -c N", N a CPU
# whose idle task's sched_switch events reach perf events, or to nothing if
# a short system-wide recording saw none (a CPU that never idled).  Some
# kernels, this KVM guest's among them, deliver no event from some CPUs'
# idle task to perf events (perf's own recordings have none either): a
# wake-up from idle there is never seen, and a system-wide reading of the
# sched events measures the wait from a later switch.
idle_visible_pin() {
	local cpu
	pin=()
	"$1" record -q -a -e sched:sched_switch -o "$tmp/idle-probe.data" -- sleep 0.3 2>/dev/null || return 0
	cpu=$(perf script -i "$tmp/idle-probe.data" -F pid,cpu 2>/dev/null |
		awk '$1 == 0 { gsub(/[][]/, "", $2); print $2 + 0; exit }')
	[ -z "$cpu" ] || pin=(taskset -c "$cpu")
}
