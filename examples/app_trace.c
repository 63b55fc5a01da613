// SPDX-License-Identifier: MIT
/*
 * Application tracing in a few lines: declare events, emit them, and run
 * the program under perfring record to get them into perf.data next to
 * the kernel's events:
 *
 *   perfring record -e sched:sched_switch -a -- ./build/examples/app_trace
 *   perf script            # or perfring script / report / export
 *
 * Without a recorder the program runs as usual: perfring_emit() is one
 * predictable branch.  PERFRING_SESSION=self makes the program keep its
 * own session (/dev/shm/perfring-<uid>/<pid>) for `perfring record -p
 * PID`: `app_trace ROUNDS` runs ROUNDS rounds of 30000 requests, 0.1 s
 * apart, so that there is time to attach.
 */
#include <perfring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The integer fields of each event as a C struct, in declaration order. */
struct request {
	uint64_t id;
	uint32_t bytes;
};

struct step {
	uint64_t id;
};

int main(int argc, char **argv)
{
	struct perfring_event *ev_req, *ev_begin, *ev_end;
	const char *paths[] = { "/index.html", "/style.css", "/app.js" };
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	const struct timespec pause = { 0, 100 * 1000 * 1000 };

	if (perfring_event_declare("webapp", "request",
				   "u64 id, u32 bytes, string path", &ev_req) ||
	    perfring_event_declare("webapp", "handle_begin", "u64 id",
				   &ev_begin) ||
	    perfring_event_declare("webapp", "handle_end", "u64 id", &ev_end))
		return 1;

	for (uint64_t id = 0; id < 30000 * (uint64_t)rounds; id++) {
		struct request r = { id, (uint32_t)(id * 100 % 65536) };
		struct perfring_var path = { paths[id % 3], 0 };
		struct step s = { id };

		/* _begin/_end pairs become slices in perfring export. */
		perfring_emit(ev_begin, &s, sizeof(s));
		perfring_emitv(ev_req, &r, sizeof(r), &path, 1);
		perfring_emit(ev_end, &s, sizeof(s));
		if (id % 30000 == 29999 && id + 1 < 30000 * (uint64_t)rounds)
			nanosleep(&pause, NULL);
	}

	{
		struct perfring_app_stats st = { .sz = sizeof(st) };

		perfring_app_stats(&st);
		printf("app_trace: %llu events written, %llu lost (%s)\n",
		       (unsigned long long)st.events,
		       (unsigned long long)st.lost,
		       perfring_app_active ? "recorded" : "no recorder");
	}
	return 0;
}
