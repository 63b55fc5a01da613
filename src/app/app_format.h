/* SPDX-License-Identifier: MIT */
/*
 * Application event descriptions: the declaration a program makes, the
 * line it appends to <session>/<pid>.events, the payload layout both sides
 * derive from it, and the ftrace-style format text the recorder puts into
 * TRACING_DATA so perf and libtraceevent decode the events.
 */
#ifndef PERFRING_APP_APP_FORMAT_H
#define PERFRING_APP_APP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../common/log.h"

#define APP_COMMON_SIZE 8 /* common_type, flags, preempt_count, common_pid */
#define APP_LAST_ID 65535u /* common_type is a u16 */
#define APP_LINE_MAX 2048
#define APP_MAX_FIELDS 32
#define APP_NAME_MAX 63
#define APP_STRING_MAX 4095 /* longest string field content */
/* Largest app record: its perf sample is 48 bytes longer and must still
 * fit a perf_event_header.size (perfring.h). */
#define APP_RECORD_MAX PERFRING_APP_EVENT_MAX

enum app_type {
	APP_U8,
	APP_U16,
	APP_U32,
	APP_U64,
	APP_S8,
	APP_S16,
	APP_S32,
	APP_S64,
	APP_STRING,
	APP_BYTES,
};

struct app_field {
	char name[APP_NAME_MAX + 1];
	uint8_t type; /* enum app_type */
	uint32_t offset; /* in the payload (raw data minus the common header) */
	uint32_t size; /* integer size, or 4 (the __data_loc word) */
};

struct app_event_desc {
	uint32_t id;
	char provider[APP_NAME_MAX + 1];
	char name[APP_NAME_MAX + 1];
	uint32_t nr_fields;
	struct app_field fields[APP_MAX_FIELDS];
	uint32_t nr_dyn; /* string/bytes fields */
	uint8_t dyn[APP_MAX_FIELDS]; /* their indexes, declaration order */
	uint32_t fixed_size; /* integer fields as a C struct: sizeof */
	uint32_t dyn_data_off; /* payload offset of string/bytes contents */
	uint32_t payload_fixed; /* payload bytes before those contents */
};

/*
 * Where session directories go: /dev/shm when it is a writable tmpfs (the
 * rings are shared memory: a disk-backed file system would write them
 * back), else /tmp.
 */
PR_HIDDEN const char *app_runtime_dir(void);

/* Parses a declaration; NULL on success, else what is wrong. */
PR_HIDDEN const char *app_desc_parse_decl(const char *provider,
					  const char *name, const char *fields,
					  struct app_event_desc *d);

/* "<id> <provider>:<name> <type name>,...\n" into @buf; its length or
 * -ENAMETOOLONG. */
PR_HIDDEN int app_desc_format(const struct app_event_desc *d, char *buf,
			      size_t size);

/* Parses one line of an events file (untrusted: @len bytes, no newline
 * needed); NULL on success, else what is wrong. */
PR_HIDDEN const char *app_desc_parse_line(const char *line, size_t len,
					  struct app_event_desc *d);

/* The event's tracefs-style format file text (malloc()ed, *len bytes). */
PR_HIDDEN int app_desc_format_file(const struct app_event_desc *d, char **out,
				   size_t *len);

#endif
