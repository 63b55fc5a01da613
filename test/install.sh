#!/usr/bin/env bash
# `make install PREFIX=...` gives a header, both libraries, a pkg-config file
# and man pages that a program can build and run against.
set -u
fail() { echo "FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s install PREFIX="$tmp/usr" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make install"; }
for f in include/perfring.h include/perfring/abi.h lib/libperfring.a lib/libperfring.so.0 \
	lib/pkgconfig/perfring.pc bin/perfring share/man/man1/perfring.1 share/man/man3/libperfring.3; do
	[ -e "$tmp/usr/$f" ] || fail "missing $f"
done
export PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig"
flags=$(pkg-config --cflags --libs perfring) || fail "pkg-config"
cc -std=c11 -Wall -Werror examples/ring_threads.c $flags -pthread -o "$tmp/ex" || fail "build against install"
LD_LIBRARY_PATH="$tmp/usr/lib" ldd "$tmp/ex" | grep -q "$tmp/usr/lib/libperfring.so.0" || fail "not linked to the installed .so"
out=$(LD_LIBRARY_PATH="$tmp/usr/lib" "$tmp/ex") || fail "example run"
echo "$out"
grep -q '^read [0-9]* samples' <<<"$out" || fail "example output"
man -l "$tmp/usr/share/man/man1/perfring.1" 2>/dev/null | grep -q 'perfring' || [ ! -x "$(command -v man)" ] || fail "man page does not render"
echo "install: ok"
