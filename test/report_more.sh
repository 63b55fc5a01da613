#!/usr/bin/env bash
# perfring report's filters, output options and other views judged by
# perf report --stdio (6.1) with the same options on the same files
# (recorded by perf record and by perfring record): --pid, --tid,
# -C/--cpu, --time (seconds and perf's percent forms), -q, -U, -t,
# --show-total-period, --max-stack (from the caller's end with caller
# order), -G, -F (overhead, sample, period and sort keys, in any order,
# with -s: perf's columns and sort order), --sort's prefixes, on single
# events and an event group; --stats, --tasks and --mmaps byte for byte (system-wide
# files: perf's synthesized FORKs do not copy the parent's maps).  The table's text is
# compared as test/lib.sh's report_like_perf does.
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

compare() { report_like_perf "$@"; }

# The whole output of perf report --stdio and of ours, byte for byte.
same_output() {
	local f=$1
	shift
	perf report --stdio -i "$f" "$@" >"$tmp/perf.raw" 2>/dev/null || fail "$(basename "$f") $*: perf report failed"
	sans_ckpt_task <"$tmp/perf.raw" >"$tmp/perf.txt"
	"$cli" report -i "$f" "$@" >"$tmp/ours.txt" 2>"$tmp/ours.err" ||
		fail "$(basename "$f") $*: perfring report failed: $(cat "$tmp/ours.err")"
	[ "$(wc -l <"$tmp/perf.txt")" -ge 3 ] || fail "$(basename "$f") $*: perf printed almost nothing"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "$(basename "$f") $*: differs from perf report --stdio"
	fi
	echo "$(basename "$f") $*: $(wc -l <"$tmp/ours.txt") lines as perf report"
}

# The tid of the @n-th thread of @comm in @f, by perf's --sort pid.
tid_of() {
	perf report --stdio -i "$1" --sort pid -g none 2>/dev/null |
		awk -v c="$2" -v n="$3" '$2 ~ ":" c "$" { if (++i == n) { split($2, a, ":"); print a[1]; exit } }'
}

# The time of the @n-th sample of @f, as perf script prints it.
time_of() {
	perf script -i "$1" -F time 2>/dev/null | sed -n "$2p" | tr -d ' :'
}

# A file where Children entries without a symbol tie at 0.00%: perf
# orders them by its trees, whose comparisons are not transitive (an
# address against an address, a DSO against a DSO), and -F alone sets up
# no collapse of comm (only -s or the default keys do).  perf record -g
# of hot on a loaded machine (test/data/report/ties.data); the same
# ties come from a fresh recording only now and then.
ties=$(dirname "$0")/data/report/ties.data
compare "$ties" -F overhead,comm,sym -q -t ';'
compare "$ties" -F overhead,comm,sym
compare "$ties"
compare "$ties" -s sym,comm

# A sample in the PLT of a program whose symbol table is empty (stripped,
# its .dynsym defines nothing): perf synthesizes "name@plt" entries only
# for an object whose symbol table gave it symbols (dso__load()), so the
# address stays unresolved, and its Shared Object column is as wide as an
# address (hists__set_unres_dso_col_len).  System-wide recordings meet
# such programs now and then (a stripped tool caught in its PLT): the
# report_more.sh failure of issue 24 was this.  A recording of a stripped
# hot whose first samples are moved into its clock_gettime@plt stub, read
# with an empty perf build-id cache (perf would find the unstripped hot
# there by its build-id).
mkdir -p "$tmp/home"
strip -o "$tmp/hot-stripped" "$wl/hot" || fail "strip hot"
(cd "$tmp" && HOME=$tmp/home perf record -q -N -o stripped.data -- ./hot-stripped 0.3 2>/dev/null) ||
	fail "perf record of the stripped hot"
plt=$(objdump -d "$tmp/hot-stripped" | awk '/<clock_gettime@plt>:/ { print "0x" $1; exit }')
[ -n "$plt" ] || fail "no clock_gettime@plt in hot"
python3 - "$tmp/stripped.data" "$tmp/stripped-plt.data" hot-stripped "$plt" 20 <<'PY' || fail "moving samples into the PLT"
import struct, sys
# perf record's file of one event (sample_type IP|TID|TIME|PERIOD): the IPs
# of the first N user samples in PROG's code (at least one; a loaded
# machine leaves the program few) move to PROG's file offset OFF
src, dst, prog, off, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 16), int(sys.argv[5])
d = bytearray(open(src, 'rb').read())
assert d[:8] == b'PERFILE2'
pos, size_ = struct.unpack_from('<QQ', d, 40)
end, text, moved = pos + size_, None, 0
while pos + 8 <= end:
    typ, misc, size = struct.unpack_from('<IHH', d, pos)
    if size < 8:
        break
    if typ == 10:  # MMAP2: pid tid addr len pgoff (24 bytes of ids) prot flags filename
        addr, length, pgoff = struct.unpack_from('<QQQ', d, pos + 16)
        prot = struct.unpack_from('<I', d, pos + 64)[0]
        name = bytes(d[pos + 72:pos + size]).split(b'\0')[0].decode(errors='replace')
        if name.endswith('/' + prog) and prot & 4:
            text = (addr - pgoff, addr, addr + length)
    elif typ == 9 and text and moved < n and (misc & 7) == 2:
        ip = struct.unpack_from('<Q', d, pos + 8)[0]
        if text[1] <= ip < text[2]:
            struct.pack_into('<Q', d, pos + 8, text[0] + off)
            moved += 1
    pos += size
assert moved > 0, 'no sample in %s' % prog
open(dst, 'wb').write(d)
PY
for o in "" "--no-children" "-F overhead,dso,sym" "--sort dso,sym -q"; do
	HOME=$tmp/home compare "$tmp/stripped-plt.data" $o
done
# (the last column is padded to its width)
grep -q '\[\.\] 0x0*'"${plt#0x}"' *$' "$tmp/ours.txt" ||
	fail "stripped PLT: the stub is not shown as an address: $(grep -m3 -e plt -e "${plt#0x}" "$tmp/ours.txt")"

# System-wide call graphs (everything running, frame pointers or not):
# perf's entries tree can miss an equal entry and keep two (an address
# compared with a wrapping difference); ours walks the same tree.
perf record -q -a -g -o "$tmp/perf-ag.data" -- "$wl/pingpong" 2000 2>/dev/null || fail "perf record -a -g"
"$cli" record -q -a -g -o "$tmp/ours-ag.data" -- "$wl/pingpong" 2000 || fail "perfring record -a -g"
for f in "$tmp/perf-ag.data" "$tmp/ours-ag.data"; do
	compare "$f"
	compare "$f" --no-children
	compare "$f" --sort pid,sym
done

perf record -q -g -o "$tmp/perf-g.data" -- "$wl/hot" 0.3 2>/dev/null || fail "perf record -g"
"$cli" record -q -g -o "$tmp/ours-g.data" -- "$wl/hot" 0.3 || fail "perfring record -g"
perf record -q -e sched:sched_switch -e cpu-clock -a -o "$tmp/perf-a.data" -- "$wl/pingpong" 2000 2>/dev/null ||
	fail "perf record -a"
"$cli" record -q -e sched:sched_switch -e cpu-clock -a -o "$tmp/ours-a.data" -- "$wl/pingpong" 2000 ||
	fail "perfring record -a"

# Output options and call-graph depth, on a workload's call graphs.
for f in "$tmp/perf-g.data" "$tmp/ours-g.data"; do
	compare "$f" -q
	compare "$f" -q --no-children -g none
	compare "$f" -U
	compare "$f" -U --no-children
	compare "$f" --show-total-period
	compare "$f" --show-total-period -n --no-children -g none
	compare "$f" -t '|'
	compare "$f" -t , --no-children -g none --show-total-period -n
	compare "$f" -q -t : --show-total-period -g none
	compare "$f" -G
	compare "$f" -G --no-children
	compare "$f" --max-stack 1
	compare "$f" --max-stack 3
	compare "$f" --max-stack 2 -g callee
	compare "$f" --max-stack 1 --no-children -g caller
	compare "$f" --max-stack 5 -U
	compare "$f" -F overhead,sym
	compare "$f" -F overhead,sample,sym -g none
	compare "$f" -F overhead,period,dso -g none
	compare "$f" -F overhead,sample,period,comm,dso
	compare "$f" -F overhead,dso,sym -g caller
	compare "$f" -F overhead,sym --no-children
	compare "$f" -F overhead,comm,sym -q -t ';'
	same_output "$f" --stats
	same_output "$f" --tasks
	same_output "$f" --mmaps
	# perf refuses --cpu on a file whose events do not sample the CPU
	# (perf record's of a workload; perfring record samples it)
	# (perf says so and exits 0)
	if ! perf report --stdio -i "$f" -C 0 2>&1 | grep -q 'does not contain CPU'; then
		c=$(perf report --stdio -i "$f" --sort cpu --no-children -g none 2>/dev/null | awk '$1 ~ /%$/ { print $NF + 0; exit }')
		compare "$f" -C "$c" --no-children
	elif "$cli" report -i "$f" -C 0 >/dev/null 2>&1; then
		fail "$(basename "$f"): -C 0 accepted on a file without CPUs"
	else
		echo "$(basename "$f") -C 0: refused as perf does"
	fi
done

# Filters, on system-wide files with two events.  Symbols only of the
# workload: other programs' binaries may be rebuilt while the test runs
# (perf reads its build-id cache, we the file on disk).
for f in "$tmp/perf-a.data" "$tmp/ours-a.data"; do
	p=$(tid_of "$f" pingpong 1)
	t=$(tid_of "$f" pingpong 2)
	[ -n "$p" ] && [ -n "$t" ] || fail "$(basename "$f"): no two pingpong threads"
	compare "$f" --pid "$p" --sort comm,pid,sym -g none
	compare "$f" --pid "$p,$t" --sort pid,dso
	compare "$f" --tid "$t" --sort comm,pid,sym -n
	compare "$f" --tid "$t" --comm pingpong
	compare "$f" -C 0 --sort comm,pid
	c=$(perf report --stdio -i "$f" --comm pingpong --sort comm,cpu -g none 2>/dev/null | awk '$1 ~ /%$/ { print $NF + 0; exit }')
	compare "$f" -C "$c" --comm pingpong --sort pid,sym
	compare "$f" -C 1 -n --sort cpu,comm
	compare "$f" --cpu 0-1 -q --comm pingpong
	a=$(time_of "$f" 200)
	b=$(time_of "$f" 900)
	[ -n "$a" ] && [ -n "$b" ] || fail "$(basename "$f"): no sample times"
	compare "$f" --time "$a,$b" --sort comm,pid
	compare "$f" --time "$a," -n --comm pingpong
	compare "$f" --time ",$b" -q --sort cpu,comm
	compare "$f" --time 10%/2 --sort comm,pid
	compare "$f" --time 0%-50% -n --comm pingpong
	compare "$f" --time 50% -q --sort comm,dso
	compare "$f" --time 30%-60% --sort cpu
	compare "$f" -F overhead,sample,comm,pid
	compare "$f" -F overhead,period,cpu,sym --comm pingpong
	same_output "$f" --stats
	same_output "$f" --tasks
	same_output "$f" --mmaps
done

# An event group: the value columns one per member (-n, --show-total-period,
# -t's concatenated members), as perf prints them.
perf record -q -e '{cpu-clock,task-clock}' -o "$tmp/perf-grp.data" -- "$wl/hot" 0.2 2>/dev/null ||
	fail "perf record -e {cpu-clock,task-clock}"
"$cli" record -q -e '{cpu-clock,task-clock}' -o "$tmp/ours-grp.data" -- "$wl/hot" 0.2 ||
	fail "perfring record -e {cpu-clock,task-clock}"
for f in "$tmp/perf-grp.data" "$tmp/ours-grp.data"; do
	compare "$f" -n -g none
	compare "$f" --show-total-period -g none
	compare "$f" -t '|' --no-children -g none
	compare "$f" -n --show-total-period -t , -g none
	compare "$f" -q -F overhead,sample,comm,sym
done
# -F with -s on a file of several commands and DSOs (sh, hot, pingpong;
# their binaries, libc, the kernel): perf's columns are -F's fields in
# order, then the -s keys -F has not; it sorts by the -s keys first, then
# by the fields (no Overhead before them); a comm from -s collapses,
# -F's alone does not.  And --sort keys by perf's prefixes, any case
# ("s", "sym", "SYM" are symbol), a --sort naming "symbol" with perf
# report's IPC column.
perf record -q -g -o "$tmp/perf-m.data" -- sh -c "$wl/hot 0.3 & $wl/pingpong 3000; wait" 2>/dev/null ||
	fail "perf record -g of sh, hot and pingpong"
"$cli" record -q -g -o "$tmp/ours-m.data" -- sh -c "$wl/hot 0.3 & $wl/pingpong 3000; wait" ||
	fail "perfring record -g of sh, hot and pingpong"
for f in "$tmp/perf-m.data" "$tmp/ours-m.data"; do
	[ "$(perf report --stdio -i "$f" -s comm -g none 2>/dev/null | grep -c '%')" -ge 3 ] ||
		fail "$(basename "$f"): fewer than 3 commands"
	compare "$f" -F overhead,sym -s comm
	compare "$f" -F overhead,sym -s comm --no-children -g none
	compare "$f" -F sym,overhead -s comm
	compare "$f" -F overhead,sym -s comm,dso --no-children
	compare "$f" -F overhead,comm,sym -s sym
	compare "$f" -F dso,overhead -s comm,sym -g caller
	compare "$f" -F sample,dso
	compare "$f" -F overhead,sample,comm
	compare "$f" -F overhead,period,sym -s pid --no-children -g none
	compare "$f" -F overhead,sym -s comm -t ';' --no-children
	compare "$f" -F overhead,sample,cpu -s comm -q -g none
	compare "$f" -F overhead,sym -s symbol,comm
	compare "$f" -s comm,dso,symbol
	compare "$f" -s comm,dso,symbol --no-children -g none
	compare "$f" -s symbol -n
	compare "$f" -s SYM,Comm
	compare "$f" -s s --no-children
	compare "$f" -s c,d -g none
done
# The vDSO as perf reads it: a program spending its time in
# clock_gettime() (the vDSO), recorded by perf and by perfring; without a
# build-id cache (an empty HOME) perf shows the vDSO's addresses, with
# perf record's cache the symbols of its copy there: perfring the same,
# whatever the vDSO of the machine reading the file.
printf '%s\n' '#include <time.h>' \
	'int main(void) { struct timespec t; for (long i = 0; i < 3000000; i++) clock_gettime(CLOCK_MONOTONIC, &t); return 0; }' \
	>"$tmp/vdso.c"
cc -O1 -o "$tmp/vdsoloop" "$tmp/vdso.c" || fail "cc vdso.c"
mkdir -p "$tmp/empty" "$tmp/cached"
HOME=$tmp/cached perf record -q -o "$tmp/vdso-perf.data" -- "$tmp/vdsoloop" 2>/dev/null || fail "perf record vdsoloop"
"$cli" record -q -o "$tmp/vdso-ours.data" -- "$tmp/vdsoloop" || fail "perfring record vdsoloop"
for f in "$tmp/vdso-perf.data" "$tmp/vdso-ours.data"; do
	for home in "$tmp/empty" "$tmp/cached"; do
		HOME=$home compare "$f" --sort dso,sym
		grep -q '\[vdso\]' "$tmp/ours.txt" || fail "$(basename "$f"): no sample in the vDSO"
	done
done
grep -q '\[\.\] __vdso_clock_gettime' "$tmp/ours.txt" || fail "the vDSO's symbols not read from perf's build-id cache"
echo "vDSO: addresses without a build-id cache, its symbols from perf's cache, as perf"
exit 0
