/* SPDX-License-Identifier: MIT */
/*
 * What killed recorders and ended programs leave behind, and how to tell
 * it from what a live one uses (src/sources/app_reclaim.c).
 *
 * A pid alone proves nothing (pids are reused), so a process is taken for
 * the owner of something only if it started before that thing was made:
 * its start time (/proc/<pid>/stat, clock ticks after boot) against the
 * thing's time stamp, or against a start time recorded in a name (tracefs
 * instances perfring-<pid>-<start>).  Where the owner can hold a lock it
 * does (a recorder's session directory), and the lock is the proof.
 */
#ifndef PERFRING_SOURCES_STALE_H
#define PERFRING_SOURCES_STALE_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include "../common/log.h"

/*
 * The start time of process @pid in clock ticks after boot.  Returns 0,
 * -ESRCH when there is no such process or it is a zombie (it holds
 * nothing any more), or another -errno.
 */
PR_HIDDEN int proc_start_ticks(pid_t pid, unsigned long long *ticks);

/*
 * Whether process @pid can be what made something at @made (a file's
 * time stamp, CLOCK_REALTIME): it exists and started no later than @made
 * plus a second (the start time's resolution and clock steps).  False
 * only when it surely is not; errors other than -ESRCH answer true.
 */
PR_HIDDEN bool proc_may_have_made(pid_t pid, const struct timespec *made);

/*
 * Removes, in @base, the session directories nobody uses any more, and
 * says so in the log:
 *
 *  - perfring-XXXXXX (app_session_create()): its recorder holds
 *    flock(LOCK_EX) on it for its whole session, so one that can be
 *    locked has lost its recorder; it is also kept while recorder.pid
 *    names a process that may have written it (recorders that do not
 *    lock), while a ring in it has a producer or consumer (their OFD
 *    locks) or a <pid>.events file names a process that may have written
 *    it (a program still tracing into it, which the next
 *    `perfring record -p PID` can take over), and while it is younger
 *    than 10 s without a recorder.pid (being made);
 *  - perfring-<euid>/<pid> (programs' own sessions): kept while <pid> may
 *    be the process that made it, and on the same ring, events and
 *    recorder.pid rules.
 *
 * Only directories of the caller's effective uid, mode 0700, reached
 * without following links (openat O_NOFOLLOW, fstat on the descriptor)
 * are looked at; only regular files and FIFOs directly in them are
 * removed (unlinkat relative to the directory; a directory with anything
 * else stays).  Returns the number of directories removed or -errno
 * (@base unreadable).
 */
PR_HIDDEN int app_session_reclaim_stale(const char *base);

#endif
