// SPDX-License-Identifier: MIT
/*
 * Fuzz target: DWARF unwinding of --call-graph dwarf samples, whose user
 * registers and stack bytes come from the file (src/report/unwind.c).
 *
 * The input is written to a memfd and printed by perfring_script() and
 * perfring_report() (to /dev/null): every sample with REGS_USER and
 * STACK_USER is unwound against the maps its MMAP2 records give, so
 * garbled registers (SP, IP), stack sizes and stack words reach the
 * accessors; ASan sees any read outside the stack copy or a mapped ELF
 * file.  Seeds: fuzz/corpus/unwind/ (perf record and perfring record
 * --call-graph dwarf of /usr/bin/yes, whose ELF files every Debian has).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "perfring/tools.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfring_script_opts so = { .sz = sizeof(so) };
	struct perfring_report_opts ro = { .sz = sizeof(ro) };
	char path[64];
	FILE *devnull;
	int fd;

	fd = fuzz_file("fuzz-unwind", data, size, path);
	if (fd < 0)
		abort();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	so.input = path;
	perfring_script(&so, devnull);
	ro.input = path;
	perfring_report(&ro, devnull);
	fclose(devnull);
	close(fd);
	return 0;
}
