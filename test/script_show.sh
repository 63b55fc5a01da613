#!/usr/bin/env bash
# perfring script's --show-*-events judged by perf script (6.1) with the
# same options on the same files, byte for byte: --show-lost-events,
# --show-switch-events, --show-round-events, --show-namespace-events,
# --show-cgroup-events, --show-bpf-events, --show-text-poke-events.
# Files: perf record --switch-events --namespaces --all-cgroups (per task
# and -a), perf record -a while a BPF program is loaded and unloaded
# (KSYMBOL, BPF_EVENT), perf record and perfring record with a one-page
# buffer under page faults (LOST), perfring record -a.  TEXT_POKE records
# need perf record --kcore here: they are written into a perf pipe stream
# by hand (the kernel's layout, a sample_id trailer as the event's) and
# both tools read that.  Skips (77) only if the kernel refuses
# perf_event_open.
# test-timeout: 600
set -u
. "$(dirname "$0")/lib.sh"
cli=${PERFRING_CLI:-build/perfring}
wl=${WORKLOADS:-build/workloads}
make_tmp
need_cmd perf linux-perf
need_cmd python3 python3
cli=$(realpath "$cli")
wl=$(realpath "$wl")

need_perf_events

# same FILE MIN-RECORD-LINES OPTION...: perf script and perfring script
# print the same bytes; at least MIN lines match $want (PERF_RECORD_).
want='PERF_RECORD_'
same_all() {
	local f=$1 min=$2 n
	shift 2
	perf script -i "$f" "$@" >"$tmp/perf.raw" 2>/dev/null || fail "$(basename "$f") $*: perf script failed"
	sans_ckpt_task <"$tmp/perf.raw" >"$tmp/perf.txt"
	"$cli" script -i "$f" "$@" >"$tmp/ours.txt" 2>"$tmp/ours.err" ||
		fail "$(basename "$f") $*: perfring script failed: $(cat "$tmp/ours.err")"
	if ! cmp -s "$tmp/perf.txt" "$tmp/ours.txt"; then
		diff "$tmp/perf.txt" "$tmp/ours.txt" | head -10 >&2
		fail "$(basename "$f") $*: differs from perf script"
	fi
	n=$(grep -c -- "$want" "$tmp/ours.txt")
	[ "$n" -ge "$min" ] || fail "$(basename "$f") $*: $n lines match '$want', expected at least $min"
	echo "$(basename "$f") $*: $(wc -l <"$tmp/ours.txt") lines as perf script ($n match '$want')"
}

all_opts=(--show-lost-events --show-switch-events --show-round-events --show-namespace-events
	--show-cgroup-events --show-bpf-events --show-text-poke-events)

# Context switches, namespaces and cgroups: a workload that sleeps (it is
# switched out and in), per task and system-wide.
perf record -q --switch-events --namespaces --all-cgroups -e cpu-clock -o "$tmp/perf-sw.data" \
	-- "$wl/pingpong" 2000 2>/dev/null || fail "perf record --switch-events"
perf record -q -a --switch-events --namespaces --all-cgroups -e cpu-clock -o "$tmp/perf-swa.data" \
	-- "$wl/pingpong" 2000 2>/dev/null || fail "perf record -a --switch-events"
# System-wide files hold other programs, whose C++ names perf demangles by
# rules of its own: their samples are left out (--comm; the side-band
# lines of every task stay).
for f in "$tmp/perf-sw.data" "$tmp/perf-swa.data"; do
	same() { same_all "$@" --comm pingpong; }
	same "$f" 2 --show-switch-events
	grep -q 'PERF_RECORD_SWITCH' "$tmp/ours.txt" || fail "no PERF_RECORD_SWITCH line"
	same "$f" 1 --show-namespace-events
	grep -q 'nr_namespaces' "$tmp/ours.txt" || fail "no namespaces line"
	same "$f" 1 --show-cgroup-events
	same "$f" 1 --show-round-events
	same "$f" 0 --show-lost-events
	same "$f" 2 --show-switch-events --show-task-events -G
	same "$f" 3 "${all_opts[@]}"
done
same "$tmp/perf-swa.data" 2 --show-switch-events -C 0
same() { same_all "$@"; }
grep -q 'SWITCH_CPU_WIDE' "$tmp/ours.txt" || fail "-a: no PERF_RECORD_SWITCH_CPU_WIDE line"

# perfring record --switch-events: the same records in our files, per
# task and system-wide, printed as perf prints them.
"$cli" record -q --switch-events -e cpu-clock -o "$tmp/ours-sw.data" -- "$wl/pingpong" 2000 ||
	fail "perfring record --switch-events"
"$cli" record -q -a --switch-events -e cpu-clock -o "$tmp/ours-swa.data" -- "$wl/pingpong" 2000 ||
	fail "perfring record -a --switch-events"
same_all "$tmp/ours-sw.data" 2 --show-switch-events --comm pingpong
grep -q 'PERF_RECORD_SWITCH' "$tmp/ours.txt" || fail "ours: no PERF_RECORD_SWITCH line"
same_all "$tmp/ours-swa.data" 2 --show-switch-events --comm pingpong
grep -q 'SWITCH_CPU_WIDE' "$tmp/ours.txt" || fail "ours -a: no PERF_RECORD_SWITCH_CPU_WIDE line"

# BPF programs: a socket filter loaded and closed while perf records -a
# (perf asks for KSYMBOL and BPF_EVENT records by default).
cat >"$tmp/bpfload.py" <<'EOF'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
insns = ctypes.create_string_buffer(struct.pack('<BBhiBBhi', 0xb7, 0, 0, 0, 0x95, 0, 0, 0))
lic = ctypes.create_string_buffer(b'GPL')
# BPF_PROG_LOAD: prog_type SOCKET_FILTER, 2 insns ("r0 = 0; exit")
attr = ctypes.create_string_buffer(struct.pack('<IIQQ', 1, 2, ctypes.addressof(insns),
                                               ctypes.addressof(lic)).ljust(128, b'\0'), 128)
fd = libc.syscall(321, 5, attr, 128)
if fd < 0:
    sys.exit('bpf: ' + os.strerror(ctypes.get_errno()))
os.close(fd)
EOF
if perf record -q -a -e cpu-clock -o "$tmp/perf-bpf.data" -- python3 "$tmp/bpfload.py" 2>"$tmp/bpf.err"; then
	same "$tmp/perf-bpf.data" 4 --show-bpf-events --comm python3
	grep -q 'PERF_RECORD_BPF_EVENT type 1' "$tmp/ours.txt" || fail "no BPF_EVENT of the load"
	same "$tmp/perf-bpf.data" 2 --show-text-poke-events --comm python3
	same "$tmp/perf-bpf.data" 4 --show-bpf-events --show-round-events --comm python3
else
	# the kernel refused BPF_PROG_LOAD: KSYMBOL/BPF_EVENT from the
	# hand-built stream below only
	echo "no BPF program could be loaded ($(tail -1 "$tmp/bpf.err")): BPF records checked on the hand-built stream only"
fi

# Lost events: a one-page buffer under a page fault per sample.
touch_pages='b = bytearray(200 << 20)'
perf record -q -m 1 -c 1 -e page-faults -o "$tmp/perf-lost.data" -- python3 -c "$touch_pages" 2>/dev/null ||
	fail "perf record -m 1"
"$cli" record -q -m 1 -c 1 -e page-faults -o "$tmp/ours-lost.data" -- python3 -c "$touch_pages" ||
	fail "perfring record -m 1"
for f in "$tmp/perf-lost.data" "$tmp/ours-lost.data"; do
	# a quiet machine may keep up: only then are no LOST lines expected
	lost=$(perf report -D -i "$f" 2>/dev/null | grep -c ' PERF_RECORD_LOST:')
	same "$f" "$((lost > 0 ? 1 : 0))" --show-lost-events
	same "$f" 1 --show-lost-events --show-round-events
	same "$f" 1 "${all_opts[@]}"
done

# perfring record -a: rounds and task events.
"$cli" record -q -a -e cpu-clock -o "$tmp/ours-a.data" -- "$wl/pingpong" 2000 || fail "perfring record -a"
same "$tmp/ours-a.data" 1 --show-round-events --comm pingpong
same "$tmp/ours-a.data" 1 --show-round-events --show-task-events --comm pingpong
same "$tmp/ours-a.data" 1 "${all_opts[@]}" --comm pingpong

# TEXT_POKE (and KSYMBOL, BPF_EVENT, LOST, SWITCH, NAMESPACES, CGROUP)
# written into perf's pipe stream after its first sample, each with the
# sample_id trailer of the stream's event and the sample's values.
perf record -q -e cpu-clock -o - -- "$wl/hot" 0.05 >"$tmp/pipe.data" 2>/dev/null || fail "perf record -o -"
kaddr=$(awk '$3 == "schedule" { print $1; exit }' /proc/kallsyms)
[ -n "$kaddr" ] && [ "$kaddr" != 0000000000000000 ] || kaddr=ffffffff81000000
python3 - "$tmp/pipe.data" "$tmp/poke.data" "$kaddr" <<'EOF' || fail "writing the hand-built stream"
import struct, sys
src, dst, kaddr = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
d = open(src, 'rb').read()
out, at, st, trailer, done = bytearray(d[:16]), 16, None, None, False
TID, TIME, ID, STREAM_ID, CPU, IDENT = 1 << 1, 1 << 2, 1 << 6, 1 << 9, 1 << 7, 1 << 16

def rec(rtype, misc, body):
    body = body + b'\0' * (-len(body) % 8)
    return struct.pack('<IHH', rtype, misc, 8 + len(body) + len(trailer)) + body + trailer

while at + 8 <= len(d):
    rtype, misc, size = struct.unpack_from('<IHH', d, at)
    r = d[at:at + size]
    out += r
    at += size
    if rtype == 64 and st is None:  # HEADER_ATTR: the event's sample_type
        st, = struct.unpack_from('<Q', r, 8 + 24)
        flags, = struct.unpack_from('<Q', r, 8 + 40)
        assert flags & (1 << 18), 'no sample_id_all'
    if rtype == 9 and not done:  # the first sample: its values, as a trailer
        v, p = {}, 8
        if st & IDENT: v['ident'] = r[p:p + 8]; p += 8
        p += 8 if st & 1 else 0
        if st & TID: v['tid'] = r[p:p + 8]; p += 8
        if st & TIME: v['time'] = r[p:p + 8]; p += 8
        p += 8 if st & 8 else 0
        if st & ID: v['id'] = r[p:p + 8]; p += 8
        if st & STREAM_ID: v['sid'] = r[p:p + 8]; p += 8
        if st & CPU: v['cpu'] = r[p:p + 8]; p += 8
        trailer = b''.join(v[k] for k, bit in (('tid', TID), ('time', TIME), ('id', ID),
                                                ('sid', STREAM_ID), ('cpu', CPU), ('ident', IDENT)) if st & bit)
        pid, tid = struct.unpack('<ii', v['tid'])
        old, new = bytes(range(0x10, 0x15)), bytes([0xe8, 1, 2, 3, 4])
        out += rec(20, 0x0001, struct.pack('<QHH', kaddr + 4, 5, 5) + old + new)          # TEXT_POKE
        out += rec(20, 0x0001, struct.pack('<QHH', kaddr, 18, 3) + bytes(range(21)))      # two lines of old bytes
        out += rec(20, 0x0001, struct.pack('<QHH', 0x1000, 0, 2) + b'\x90\x90')            # no symbol, no old bytes
        out += rec(17, 0, struct.pack('<QIHH', 0xffffffffc0001000, 64, 1, 0) + b'bpf_prog_0123456789abcdef_x\0')  # KSYMBOL
        out += rec(18, 0, struct.pack('<HHI', 1, 0, 42) + bytes(8))                        # BPF_EVENT
        out += rec(2, 0, struct.pack('<QQ', 7, 123))                                       # LOST
        out += rec(14, 0x2000 | 0x4000, b'')                                               # SWITCH OUT preempt
        out += rec(15, 0, struct.pack('<ii', pid, tid))                                    # SWITCH_CPU_WIDE IN
        ns = b''.join(struct.pack('<QQ', 4, 0xeffffff0 + i) for i in range(8))
        out += rec(16, 0, struct.pack('<iiQ', pid, tid, 8) + ns)                           # NAMESPACES, one unknown
        out += rec(19, 0, struct.pack('<Q', 1234) + b'/a/cgroup\0')                        # CGROUP
        done = True
open(dst, 'wb').write(bytes(out))
assert done, 'no sample in the stream'
EOF
for opt in --show-text-poke-events --show-bpf-events --show-lost-events --show-switch-events \
	--show-namespace-events --show-cgroup-events --show-round-events; do
	min=1
	case $opt in --show-text-poke-events) min=4 ;; --show-bpf-events | --show-switch-events) min=2 ;; esac
	same "$tmp/poke.data" "$min" "$opt"
done
same "$tmp/poke.data" 10 "${all_opts[@]}"
grep -q 'PERF_RECORD_TEXT_POKE .*old len 5 new len 5' "$tmp/ours.txt" || fail "no TEXT_POKE line"
grep -q 'New bytes: e8 01 02 03 04' "$tmp/ours.txt" || fail "no TEXT_POKE bytes"

# Callchain options on fp and dwarf chains, perf's files and ours.
perf record -q -g -o "$tmp/perf-g.data" -- "$wl/hot" 0.2 2>/dev/null || fail "perf record -g"
"$cli" record -q -g -o "$tmp/ours-g.data" -- "$wl/hot" 0.2 || fail "perfring record -g"
perf record -q --call-graph dwarf -o "$tmp/perf-d.data" -- "$wl/hot" 0.2 2>/dev/null || fail "perf record --call-graph dwarf"
"$cli" record -q --call-graph dwarf -o "$tmp/ours-d.data" -- "$wl/hot" 0.2 || fail "perfring record --call-graph dwarf"
for f in "$tmp/perf-g.data" "$tmp/ours-g.data" "$tmp/perf-d.data" "$tmp/ours-d.data"; do
	want='hot_loop'
	same "$f" 1 -G
	want='cpu-clock'
	same "$f" 1 --max-stack 0
	want='hot_loop'
	same "$f" 1 --max-stack 1
	same "$f" 1 --max-stack 3
	same "$f" 1 --max-stack 500
	want='	.* main+'
	same "$f" 1 --stop-bt main
	want='cpu-clock'
	same "$f" 1 --stop-bt main --max-stack 2
	want='hot_loop'
	same "$f" 1 --stop-bt hot_loop,__libc_start_call_main
	want='hot)$'
	same "$f" 1 --dsos hot
	same "$f" 1 --dsos libc.so.6,"$wl/hot" -G
	# srclines of the workload's samples (a sample in a PLT stub, rare,
	# gets another srcline in an unwound chain than perf's: not compared)
	want='^  /.*hot\.c:[0-9]'
	same "$f" 1 -F ip,sym,srcline --full-source-path -S hot_loop
	same "$f" 1 -F comm,ip,sym,dso,srcline --full-source-path -S hot_loop -G
	want='^  hot\.c:[0-9]'
	same "$f" 1 -F ip,sym,srcline -S hot_loop
done
# C++ names (member functions, inlined ones) mangled with --no-demangle.
if [ -x "$wl/inlcxx" ]; then
	perf record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/perf-cxx.data" -- "$wl/inlcxx" 0.3 2>/dev/null ||
		fail "perf record inlcxx"
	"$cli" record -q --call-graph dwarf -e cpu-clock -F 500 -o "$tmp/ours-cxx.data" -- "$wl/inlcxx" 0.3 ||
		fail "perfring record inlcxx"
	for f in "$tmp/perf-cxx.data" "$tmp/ours-cxx.data"; do
		want=' _ZN'
		same "$f" 1 --no-demangle
		same "$f" 1 --no-demangle --no-inline
		same "$f" 1 --no-demangle -G
		want='ns::'
		same "$f" 1 --demangle
	done
else
	fail "$wl/inlcxx is missing (make build/workloads/inlcxx)"
fi
# the chains really stop: no entry past main with --stop-bt main
"$cli" script -i "$tmp/perf-g.data" --stop-bt main | awk '/^\t.* main\+/ { m = 1; next } /^\t/ && m { exit 1 } /^$/ { m = 0 }' ||
	fail "--stop-bt main: entries after main"
exit 0
