#!/bin/sh
# What `make demo` and `make check` need on Debian 12, installed when
# missing: by apt-get when run as root, otherwise the one command to run is
# printed and the make stops.  Quiet when everything is there.
#
#   PERFRING_NO_INSTALL=1   only check and print, never install
#
# The list is what the build links (libelf, libtraceevent, libzstd,
# OpenCSD, capstone, libbabeltrace-ctf: its pkg-config file needs popt's
# and uuid's), what the tests use as oracles (perf, trace-cmd, OpenCSD's
# trc_pkt_lister, python3, xmllint, man, go tool pprof, chromium and npm
# for the speedscope viewer test, babeltrace2 for the CTF, clickhouse-server
# for the fleet's store in test/fleet.sh, ncurses for the report browser,
# tmux to drive it in test/tui.sh, less the default pager, hotspot for its
# perf.data parser in test/hotspot.sh) and what the
# benchmarks compare with (LTTng-UST); libc6-dbg gives libc its DWARF (test/inline.sh: libc's
# inlined frames and source lines); clang (-target bpf), libbpf-dev and
# bpftool (its skeleton) build record --off-cpu's BPF program.
set -u

PACKAGES="build-essential pkg-config linux-libc-dev man-db groff-base linux-perf util-linux
libelf-dev libdw-dev libtraceevent-dev trace-cmd libzstd-dev libopencsd-dev libopencsd-bin
libcapstone-dev libunwind-dev python3 libxml2-utils lttng-tools liblttng-ust-dev zlib1g-dev
golang-go chromium npm libc6-dbg libbabeltrace-dev libpopt-dev uuid-dev babeltrace2 clickhouse-server
libncurses-dev tmux less clang libbpf-dev bpftool hotspot"
# Packages a program of another origin may stand in for (nodesource's
# nodejs brings its own npm and conflicts with Debian's): PACKAGE:COMMAND.
BY_COMMAND="npm:npm golang-go:go chromium:chromium"

if ! command -v dpkg-query >/dev/null 2>&1; then
	# Not Debian: check the headers the build needs and say what is missing.
	missing=""
	for h in libelf.h elfutils/libdwfl.h zstd.h zlib.h traceevent/event-parse.h capstone/capstone.h libunwind.h \
		opencsd/c_api/opencsd_c_api.h babeltrace/ctf-writer/writer.h; do
		[ -e "/usr/include/$h" ] || missing="$missing $h"
	done
	if [ -n "$missing" ]; then
		echo "deps: missing headers:$missing" >&2
		echo "deps: install the development packages of libelf, libtraceevent, libzstd, capstone, OpenCSD and babeltrace 1.5 (libbabeltrace-ctf), and perf, trace-cmd and babeltrace2" >&2
		exit 1
	fi
	exit 0
fi

missing=""
for p in $PACKAGES; do
	for pc in $BY_COMMAND; do
		[ "${pc%%:*}" = "$p" ] && command -v "${pc#*:}" >/dev/null 2>&1 && continue 2
	done
	case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ] || [ -n "${PERFRING_NO_INSTALL:-}" ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root:  $cmd" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 &&
	apt-get install -y -qq --no-install-recommends $missing >&2 || {
	echo "deps: apt-get failed; run:  $cmd" >&2
	exit 1
}
echo "deps: installed$missing" >&2
