// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * A tiny JIT: `jit SECS` writes a counting loop into anonymous executable
 * memory, names it jit_spin_loop in /tmp/perf-PID.map as JITs do for perf,
 * and runs it for SECS.  Exits 3 on an architecture it cannot emit for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
/* mov ecx, edi; 1: dec ecx; jnz 1b; ret */
static const unsigned char code[] = { 0x89, 0xf9, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
#elif defined(__aarch64__)
/* 1: subs w0, w0, #1; b.ne 1b; ret */
static const unsigned char code[] = { 0x00, 0x04, 0x00, 0x71, 0xe1, 0xff,
				      0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6 };
#else
#define NO_JIT
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#ifdef NO_JIT
	(void)argc;
	(void)argv;
	fprintf(stderr, "jit: no code for this architecture\n");
	return 3;
#else
	double secs = argc > 1 ? atof(argv[1]) : 0.5, end = now() + secs;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	void (*spin)(unsigned int);
	FILE *f;

	if (mem == MAP_FAILED)
		return 1;
	/* not at the page's start: a map address is not a file offset */
	memcpy(mem + 64, code, sizeof(code));
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC))
		return 1;
	__builtin___clear_cache((char *)mem, (char *)mem + page);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(mem + 64),
		sizeof(code));
	fclose(f);
	spin = (void (*)(unsigned int))(void *)(mem + 64);
	while (now() < end)
		spin(1000000);
	return 0;
#endif
}
