// SPDX-License-Identifier: MIT
/*
 * Fuzz target: --control's command reader (src/record/control.c), which
 * reads what any writer of the FIFO sends.  The input goes through a pipe
 * in pieces: its first byte (mod 16, plus 1) gives how many pieces, and the
 * following bytes their lengths, so a command may straddle any boundary.
 * Every command handed over must be a non-empty line of at most
 * CONTROL_LINE_MAX bytes without a newline or a NUL, and an ack is written
 * per command.  Seeds: fuzz/corpus/control/.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(void *ctx, const char *cmd, size_t len)
{
	(*(size_t *)ctx)++;
	if (!len || len > CONTROL_LINE_MAX || memchr(cmd, '\n', len) ||
	    memchr(cmd, '\0', len))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_control c;
	int ctl[2], ack[2];
	size_t pieces, at, cmds = 0, acks = 0;
	char buf[4096];
	ssize_t n;

	if (!size || pipe2(ctl, O_CLOEXEC) || pipe2(ack, O_CLOEXEC))
		return 0;
	fcntl(ctl[1], F_SETPIPE_SZ, 1 << 20);
	fcntl(ack[0], F_SETPIPE_SZ, 1 << 20);
	if (control_open(&c, ctl[0], ack[1]))
		abort();
	pieces = (size_t)(data[0] % 16) + 1;
	at = 1 + (pieces < size ? pieces : size - 1);
	for (size_t i = 0; i < pieces && at <= size; i++) {
		size_t len = i + 1 == pieces ? size - at :
			     1 + i < size    ? data[1 + i] :
					       0;

		if (len > size - at)
			len = size - at;
		if (len && write(ctl[1], data + at, len) != (ssize_t)len)
			abort();
		at += len;
		if (control_read(&c, check, &cmds))
			abort();
	}
	close(ctl[1]);
	if (control_read(&c, check, &cmds) || !c.hup)
		abort();
	/* every write end closed: the acks read to their end */
	control_close(&c);
	close(ack[1]);
	while ((n = read(ack[0], buf, sizeof(buf))) > 0)
		acks += (size_t)n / 4;
	if (acks != cmds)
		abort();
	close(ctl[0]);
	close(ack[0]);
	return 0;
}
