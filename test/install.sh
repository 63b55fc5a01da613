#!/usr/bin/env bash
# `make install PREFIX=...` gives the headers, both libraries, their
# pkg-config files and man pages, and a program can build and run against
# them: one that only uses rings and events links libperfring alone and,
# through it, libc alone; a tools program builds with perfring-tools.  The
# same two build from the source tree through build/*-uninstalled.pc.
set -u
. "$(dirname "$0")/lib.sh"
make_tmp
need_cmd man man-db
make -s install PREFIX="$tmp/usr" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make install"; }
lib=$tmp/usr/lib
for f in include/perfring.h include/perfring/abi.h include/perfring/tools.h \
	lib/libperfring.a lib/libperfring.so.1 lib/libperfring.so \
	lib/libperfring-tools.a lib/libperfring-tools.so.0 lib/libperfring-tools.so \
	lib/pkgconfig/perfring.pc lib/pkgconfig/perfring-tools.pc bin/perfring \
	share/man/man1/perfring.1 share/man/man3/libperfring.3 \
	share/man/man1/perfring-record.1 share/man/man3/perfring_ring.3 \
	share/bash-completion/completions/perfring lib/python3/dist-packages/perfring.py; do
	[ -e "$tmp/usr/$f" ] || fail "missing $f"
done
export PKG_CONFIG_PATH="$lib/pkgconfig"

# A program on the ring API: libperfring, and through it libc only.
flags=$(pkg-config --cflags --libs perfring) || fail "pkg-config perfring"
cc -std=c11 -Wall -Werror examples/ring_threads.c $flags -pthread -o "$tmp/ex" || fail "build against install"
LD_LIBRARY_PATH="$lib" ldd "$tmp/ex" >"$tmp/ldd" || fail "ldd"
cat "$tmp/ldd"
grep -q "$lib/libperfring.so.1" "$tmp/ldd" || fail "not linked to the installed .so"
others=$(awk '{print $1}' "$tmp/ldd" | grep -v -e '^linux-vdso\.so\.1$' -e '^libperfring\.so\.1$' \
	-e '^libc\.so\.6$' -e '^/lib.*/ld-linux[-a-z0-9_]*\.so\.[0-9]*$')
[ -z "$others" ] || fail "a libperfring program needs more than libc: $others"
out=$(LD_LIBRARY_PATH="$lib" "$tmp/ex") || fail "example run"
echo "$out"
grep -q '^read [0-9]* samples' <<<"$out" || fail "example output"

# Application events, built the same way, run untraced (no session).
cc -std=c11 -Wall -Werror examples/app_trace.c $flags -pthread -o "$tmp/app" || fail "build app_trace"
LD_LIBRARY_PATH="$lib" "$tmp/app" >/dev/null || fail "app_trace run"

# libperfring stays small: under 150 KiB stripped.
strip -o "$tmp/small.so" "$lib/libperfring.so.1" || fail "strip"
size=$(stat -c %s "$tmp/small.so")
echo "libperfring.so.1 stripped: $size bytes"
[ "$size" -lt $((150 * 1024)) ] || fail "libperfring.so is $size bytes stripped (150 KiB at most)"

# A tools program: a user sub-buffer ring (libperfring) saved as a
# trace.dat and read back (libperfring-tools).
cat >"$tmp/tool.c" <<'EOF'
#include <stdio.h>
#include <perfring/tools.h>

int main(int argc, char **argv)
{
	struct perfring_subbuf *r;

	if (argc != 2 || perfring_subbuf_create(4096, 4, false, &r))
		return 1;
	for (int i = 0; i < 10; i++)
		if (perfring_subbuf_message(r, 1000 + i, 1, "installed"))
			return 2;
	if (perfring_subbuf_save(&r, 1, argv[1]) != 10)
		return 3;
	perfring_subbuf_destroy(r);
	if (perfring_trace_dat_probe(argv[1]) != 1)
		return 4;
	return perfring_trace_dat_stats(argv[1], stdout) ? 5 : 0;
}
EOF
tflags=$(pkg-config --cflags --libs perfring-tools) || fail "pkg-config perfring-tools"
cc -std=c11 -Wall -Werror "$tmp/tool.c" $tflags -o "$tmp/tool" || fail "build a tools program"
LD_LIBRARY_PATH="$lib" ldd "$tmp/tool" | grep -q "$lib/libperfring-tools.so.0" || fail "tools program not linked to the installed libperfring-tools"
LD_LIBRARY_PATH="$lib" "$tmp/tool" "$tmp/t.dat" >"$tmp/tool.out" || fail "tools program run (exit $?)"
grep -q "^total: 10 events" "$tmp/tool.out" || { cat "$tmp/tool.out"; fail "tools program output: 10 events"; }
cat "$tmp/tool.out"

# The same programs from the source tree before any install: make's
# build/*-uninstalled.pc, which pkg-config prefers with build/ on
# PKG_CONFIG_PATH, link the static archives: they run as they are.
build=$(realpath build)
for pc in perfring perfring-tools; do
	[ -f "$build/$pc-uninstalled.pc" ] || fail "make wrote no build/$pc-uninstalled.pc"
done
uflags=$(PKG_CONFIG_PATH=$build pkg-config --cflags --libs perfring) || fail "pkg-config perfring (uninstalled)"
grep -q -- "-I$(realpath include)" <<<"$uflags" || fail "uninstalled perfring: $uflags"
cc -std=c11 -Wall -Werror examples/ring_threads.c $uflags -o "$tmp/ex-tree" || fail "build against the tree"
env -u LD_LIBRARY_PATH "$tmp/ex-tree" | grep -q '^read [0-9]* samples' || fail "example built against the tree"
uflags=$(PKG_CONFIG_PATH=$build pkg-config --cflags --libs perfring-tools) || fail "pkg-config perfring-tools (uninstalled)"
cc -std=c11 -Wall -Werror "$tmp/tool.c" $uflags -o "$tmp/tool-tree" || fail "build a tools program against the tree"
env -u LD_LIBRARY_PATH "$tmp/tool-tree" "$tmp/t2.dat" | grep -q "^total: 10 events" || fail "tools program built against the tree"
echo "uninstalled: the ring example and a tools program built and run from build/*-uninstalled.pc"

# The Python bindings from the install's site directory (not the source
# tree), on the installed libperfring-tools (found beside them, no
# LD_LIBRARY_PATH): a perfring recording's samples, as many as perf script's.
LD_LIBRARY_PATH="$lib" "$tmp/usr/bin/perfring" record -q -e sched:sched_process_exec -a \
	-o "$tmp/py.data" -- sh -c '/bin/true; /bin/true' 2>"$tmp/rec.log" ||
	{ cat "$tmp/rec.log"; fail "installed perfring record"; }
py=$(cd / && PYTHONPATH="$tmp/usr/lib/python3/dist-packages" python3 - "$tmp/py.data" <<'PY'
import sys
import perfring
n = []
perfring.Reader(sys.argv[1]).run(lambda s: n.append(s.comm))
lib = [l.split()[-1] for l in open("/proc/self/maps") if "libperfring-tools" in l]
print(perfring.__file__, lib[0] if lib else "-", len(n))
PY
) || fail "importing the installed perfring.py: $py"
echo "python: $py"
read -r pyfile pylib pyn <<<"$py"
[ "$pyfile" = "$tmp/usr/lib/python3/dist-packages/perfring.py" ] || fail "imported $pyfile, not the installed module"
[ "$(readlink -f "$pylib")" = "$(readlink -f "$lib/libperfring-tools.so.0")" ] || fail "the module loaded $pylib, not the installed library"
theirs=$(perf script -i "$tmp/py.data" 2>/dev/null | grep -c 'sched:sched_process_exec')
[ "$pyn" -ge 2 ] && [ "$pyn" = "$theirs" ] || fail "python read $pyn samples, perf script $theirs"

# No installed library exports a name without the perfring_ prefix.
bad=$( { for f in "$lib"/libperfring.so.1 "$lib"/libperfring-tools.so.0; do nm -D --defined-only "$f"; done
	for f in "$lib"/libperfring.a "$lib"/libperfring-tools.a; do nm -g --defined-only "$f"; done; } |
	awk 'NF == 3 && $3 !~ /^perfring_/ && $3 !~ /^PERFRING_[A-Z_]*[0-9.]*$/ {print $3}' | sort -u)
[ -z "$bad" ] || fail "exported without the perfring_ prefix: $bad"

# Every page of docs/ installed, and man finds each by its name
# (man perfring-record, man 3 perfring_ring) under the prefix.
n=0
for p in docs/*.1 docs/*.3; do
	name=$(basename "$p")
	sec=${name##*.}
	name=${name%.*}
	[ -f "$tmp/usr/share/man/man$sec/$name.$sec" ] || fail "make install did not install $p"
	MANWIDTH=80 man -M "$tmp/usr/share/man" "$sec" "$name" >"$tmp/man.txt" 2>"$tmp/man.err" ||
		fail "man -M PREFIX/share/man $sec $name: $(cat "$tmp/man.err")"
	grep -q "^NAME" "$tmp/man.txt" && grep -qi "$name" "$tmp/man.txt" || fail "man $sec $name: $(head -5 "$tmp/man.txt")"
	n=$((n + 1))
done
for name in perfring-record perfring-report perfring-script perfring-export perfring-top perfring-stats; do
	man -M "$tmp/usr/share/man" "$name" 2>/dev/null | grep -q "^NAME" || fail "man $name after make install"
done
# and each function of a library page by its own name (a .so link)
for name in perfring_ring_create perfring_read_next perfring_consumer_poll perfring_emit perfring_data_open; do
	man -M "$tmp/usr/share/man" 3 "$name" 2>/dev/null | grep -q "$name" || fail "man 3 $name after make install"
done
echo "man: $n pages installed, each found by man -M PREFIX/share/man, and the functions by name"
# The bash completion loads and completes commands, options and events.
comp=$(PATH="$tmp/usr/bin:$PATH" bash -c '. "$1/usr/share/bash-completion/completions/perfring"
	COMP_WORDS=(perfring rec); COMP_CWORD=1; _perfring; echo "${COMPREPLY[@]}"
	COMP_WORDS=(perfring record --filt); COMP_CWORD=2; _perfring; echo "${COMPREPLY[@]}"
	COMP_WORDS=(perfring record -e cpu-cl); COMP_CWORD=3; _perfring; echo "${COMPREPLY[@]}"
	COMP_WORDS=(perfring to); COMP_CWORD=1; _perfring; echo "${COMPREPLY[@]}"
	COMP_WORDS=(perfring top --iter); COMP_CWORD=2; _perfring; echo "${COMPREPLY[@]}"
	COMP_WORDS=(perfring record --compression-l); COMP_CWORD=2; _perfring; echo "${COMPREPLY[@]}"' _ "$tmp") ||
	fail "completion script: $comp"
[ "$comp" = "$(printf 'record\n--filter\ncpu-clock\ntop\n--iterations\n--compression-level')" ] || fail "completion gives: $comp"
echo "bash completion: ok"

make -s uninstall PREFIX="$tmp/usr" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make uninstall"; }
left=$(find "$tmp/usr" -type f -o -type l)
[ -z "$left" ] || fail "left after make uninstall: $left"
echo "install: ok"

