/* SPDX-License-Identifier: MIT */
/*
 * The pprof profile builder of `perfring export -f pprof` (a conversion):
 * samples are aggregated per distinct stack and labels as they come, and
 * the profile (perftools.profiles.Profile, gzip-compressed protobuf) is
 * written at the end.  See pprof.c.
 */
#ifndef PERFRING_CONVERT_PPROF_H
#define PERFRING_CONVERT_PPROF_H

#include <stdint.h>
#include <stdio.h>
#include "../format/perf_reader.h"
#include "../machine/threads.h"

struct pprof;

int pprof_new(struct prd_file *f, struct pprof **out);
void pprof_free(struct pprof *p);
/* Adds one sample of thread @t (its callchain, or its ip alone). */
int pprof_add(struct pprof *p, struct machine *m, struct thread *t,
	      const struct prd_event *ev);
/*
 * Writes the profile to @out.  @input names the file read (its mtime
 * dates the profile when the file has no CLOCK_DATA; NULL or "-": now).
 */
int pprof_write(struct pprof *p, struct machine *m, const char *input,
		FILE *out);

#endif
