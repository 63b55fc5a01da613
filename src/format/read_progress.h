/* SPDX-License-Identifier: MIT */
/* The readers' progress callback (perfring_set_read_progress()). */
#ifndef PERFRING_FORMAT_READ_PROGRESS_H
#define PERFRING_FORMAT_READ_PROGRESS_H

#include <stdint.h>

/* @done of @total bytes of @name's records read (rate-limited here). */
void prd_read_progress(const char *name, uint64_t done, uint64_t total);

#endif
