/* SPDX-License-Identifier: MIT */
/*
 * Creating output files safely: every file the project writes (perf.data,
 * trace.dat, exports, inject output) is opened here.
 *
 * The recorder often runs as root and is told to write into directories
 * other users can write to (/tmp).  So an output is never reached through a
 * symbolic link, never written over in place (a hard link or a file someone
 * else prepared would be changed), and is created fresh with O_CREAT|O_EXCL,
 * mode 0600 (the files hold kernel addresses and other processes' data):
 *
 *   nothing there            created
 *   a regular file           renamed to "<path>.old" (OUT_FILE_KEEP_OLD, as
 *                            perf record does) or unlinked, then created
 *   a symbolic link          refused, whatever it points to (-ELOOP)
 *   a directory, a socket    refused (-EISDIR, -EEXIST)
 *   a FIFO, a char device    sequential outputs only (no OUT_FILE_SEEKABLE):
 *                            opened as it is, if it belongs to the caller or
 *                            to root (-o /dev/null, a named pipe of one's
 *                            own); refused for seekable outputs and when
 *                            another user made it (it could read the data)
 *
 * Whatever appears at the path between the check and the create (a racing
 * process) makes O_EXCL fail; the check is done again, a bounded number of
 * times, then the open fails with -EEXIST.
 */
#ifndef PERFRING_FORMAT_OUT_FILE_H
#define PERFRING_FORMAT_OUT_FILE_H

#include "perfring/tools.h"
#include "../common/log.h"

enum {
	/* An existing regular file is kept as <path>.old (else replaced). */
	OUT_FILE_KEEP_OLD = 1u << 0,
	/* The writer seeks, patches and truncates: a regular file only,
	 * opened read-write. */
	OUT_FILE_SEEKABLE = 1u << 1,
	/*
	 * With OUT_FILE_KEEP_OLD: the file gets the pages of the <path>.old
	 * that is about to be dropped, when that is a regular file of the
	 * caller's with one link (renameat2 RENAME_EXCHANGE, then checked on
	 * the descriptor).  Writing over allocated pages is much cheaper on
	 * tmpfs than filling new ones; the writer must truncate the file to
	 * its end.  Without such a .old the file is created as above.
	 */
	OUT_FILE_REUSE_OLD = 1u << 2,
};

/*
 * Opens @path for writing as described above.  Returns a descriptor
 * (O_CLOEXEC) or -errno; refusals and errors are logged with the path.
 */
PR_HIDDEN int out_file_open(const char *path, unsigned int flags);

#endif
