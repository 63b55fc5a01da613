/* SPDX-License-Identifier: MIT */
/*
 * The threads, maps and objects behind a perfring_reader: annotate and
 * diff resolve a sample's object address to its symbol and code through
 * them (the public frame gives names only).
 */
#ifndef PERFRING_REPORT_READER_MACHINE_H
#define PERFRING_REPORT_READER_MACHINE_H

#include "perfring/tools.h"
#include "../machine/threads.h"

/* Valid until perfring_data_close(). */
struct machine *reader_machine(struct perfring_data *r);

#endif
