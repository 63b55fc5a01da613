// SPDX-License-Identifier: MIT
/*
 * The SIGBUS guard: a consumer survives a producer that truncates the ring
 * file under its mapping.
 *
 * A page of a shared file mapping past the file's end raises SIGBUS when
 * touched.  A process that reads rings other processes write cannot stop
 * them from calling ftruncate(), so perfring_sigbus_guard() installs a
 * process-wide handler (once, on request: the library never does it by
 * itself) that looks the faulting address up in a registry of the mappings
 * of attached rings.  On a hit it puts anonymous zero pages over every
 * mapping of that ring (raw mmap(MAP_FIXED) system calls: async-signal-safe
 * and invisible to sanitizer interceptors), marks the ring dead and
 * returns: the faulting instruction runs again and reads zeros, so even a
 * caller holding a record pointer from perfring_read_next() cannot crash.
 * The ring's functions then return -EFAULT.  Faults anywhere else go to the
 * handler that was installed before ours (or the default action).
 *
 * The registry is read by the handler, so it takes no lock: slots live in
 * chunks that are never freed, a slot is claimed with a CAS and published
 * with a release store of its state (pair R in docs/design.md), a range is
 * published by a release store of its length (pair R too), and a chunk by a
 * release store of the list link (pair S).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

#define GUARD_FREE 0u
#define GUARD_BUSY 1u
#define GUARD_LIVE 2u
#define GUARD_CHUNK_SLOTS 126

struct guard_chunk {
	struct ring_guard_slot slot[GUARD_CHUNK_SLOTS];
	struct guard_chunk *next; /* published with a release store (S) */
};

static struct guard_chunk guard_first;
static struct sigaction guard_prev; /* written once, before ours is live */
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static int guard_err;
static uint32_t guard_on;

/* Replaces [start, start + len) with anonymous zero pages. */
static bool guard_zero(uint64_t start, uint64_t len)
{
	long p =
		syscall(SYS_mmap, (void *)(uintptr_t)start, (size_t)len,
			PROT_READ | PROT_WRITE,
			MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			-1, 0L);

	return p == (long)start;
}

/* Puts zero pages over the slot's ranges and marks it dead.  Safe in a
 * signal handler; doing it twice is harmless. */
static bool guard_kill_slot(struct ring_guard_slot *g, uint32_t why)
{
	bool ok = true;

	for (int i = 0; i < RING_GUARD_RANGES; i++) {
		/* R: pairs with the release of len in guard_set_range(). */
		uint64_t len = smp_load_acquire(&g->len[i]);

		if (len && !guard_zero(READ_ONCE(g->start[i]), len))
			ok = false;
	}
	if (!READ_ONCE(g->dead))
		/* Pairs with smp_load_acquire in ring_dead(): the zero pages
		 * are in place before anyone acts on the flag. */
		smp_store_release(&g->dead, why);
	return ok;
}

/* The live slot whose ranges hold @addr, or NULL. */
static struct ring_guard_slot *guard_find(uint64_t addr)
{
	/* S: pairs with the release of next in guard_new_chunk(). */
	for (struct guard_chunk *c = &guard_first; c;
	     c = smp_load_acquire(&c->next)) {
		for (int i = 0; i < GUARD_CHUNK_SLOTS; i++) {
			struct ring_guard_slot *g = &c->slot[i];

			/* R: pairs with the release of state in register. */
			if (smp_load_acquire(&g->state) != GUARD_LIVE)
				continue;
			for (int k = 0; k < RING_GUARD_RANGES; k++) {
				uint64_t len = smp_load_acquire(&g->len[k]);

				if (len && addr - READ_ONCE(g->start[k]) < len)
					return g;
			}
		}
	}
	return NULL;
}

static void guard_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;

	if (guard_prev.sa_flags & SA_SIGINFO) {
		if (guard_prev.sa_sigaction) {
			guard_prev.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (guard_prev.sa_handler != SIG_DFL &&
		   guard_prev.sa_handler != SIG_IGN) {
		guard_prev.sa_handler(sig);
		return;
	}
	if (guard_prev.sa_handler == SIG_IGN && si->si_code <= 0)
		return; /* a kill() the process chose to ignore */
	/*
	 * The default action.  A fault re-executes the instruction on return
	 * and dies of it with the right state; a signal someone sent is
	 * raised again (SA_NODEFER: delivered at once).
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void guard_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	/* si_code > 0: the kernel raised it for an access (BUS_ADRERR). */
	if (si && si->si_code > 0) {
		uint64_t addr = (uint64_t)(uintptr_t)si->si_addr;
		struct ring_guard_slot *g = guard_find(addr);

		if (g) {
			WRITE_ONCE(g->fault_addr, addr);
			if (guard_kill_slot(g, RING_DEAD_FAULT)) {
				errno = saved;
				return; /* the access runs again on zeros */
			}
		}
	}
	guard_chain(sig, si, uc);
	errno = saved;
}

static void guard_install(void)
{
	struct sigaction sa;

	/* The handler we chain to is known before ours can run. */
	if (sigaction(SIGBUS, NULL, &guard_prev) < 0) {
		guard_err = -errno;
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sigemptyset(&sa.sa_mask);
	/* ONSTACK: a thread with an alternate stack uses it; NODEFER: a
	 * signal re-raised for the default action is delivered at once. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
	if (sigaction(SIGBUS, &sa, NULL) < 0) {
		guard_err = -errno;
		return;
	}
	smp_store_release(&guard_on, 1u);
}

PERFRING_API int perfring_sigbus_guard(void)
{
	pthread_once(&guard_once, guard_install);
	return guard_err;
}

bool perfring__ring_guard_installed(void)
{
	return smp_load_acquire(&guard_on) != 0;
}

static struct guard_chunk *guard_new_chunk(struct guard_chunk *last)
{
	struct guard_chunk *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct guard_chunk *expected = NULL;

	if (c == MAP_FAILED)
		return NULL;
	/* S: the zeroed chunk is visible before the link to it. */
	if (atomic_compare_exchange_strong_explicit(
		    PR_ATOMIC(&last->next), &expected, c, memory_order_release,
		    memory_order_acquire))
		return c;
	munmap(c, sizeof(*c)); /* another thread linked one: use it */
	return expected;
}

static void guard_set_range(struct ring_guard_slot *g, int k, void *addr,
			    size_t len)
{
	WRITE_ONCE(g->start[k], (uint64_t)(uintptr_t)addr);
	/* R: start before len; pairs with the handler's acquire of len. */
	smp_store_release(&g->len[k], (uint64_t)len);
}

int ring_guard_register(struct perfring_ring *r)
{
	struct guard_chunk *c = &guard_first;
	struct ring_guard_slot *g = NULL;

	while (!g) {
		for (int i = 0; i < GUARD_CHUNK_SLOTS && !g; i++) {
			uint32_t free_state = GUARD_FREE;

			if (READ_ONCE(c->slot[i].state) == GUARD_FREE &&
			    try_cmpxchg(&c->slot[i].state, &free_state,
					GUARD_BUSY))
				g = &c->slot[i];
		}
		if (!g) {
			struct guard_chunk *n = smp_load_acquire(&c->next);

			c = n ? n : guard_new_chunk(c);
			if (!c)
				return -ENOMEM;
		}
	}
	WRITE_ONCE(g->dead, RING_ALIVE);
	WRITE_ONCE(g->fault_addr, 0);
	for (int k = 0; k < RING_GUARD_RANGES; k++)
		WRITE_ONCE(g->len[k], 0);
	if (r->map_base)
		guard_set_range(g, 0, r->map_base, r->map_len);
	if (r->ctl_rw)
		guard_set_range(g, 1, r->ctl_rw, r->page_size);
	if (r->slots_map)
		guard_set_range(g, 2, r->slots_map, r->slots_len);
	/* R: the ranges before the slot goes live; pairs with guard_find. */
	smp_store_release(&g->state, GUARD_LIVE);
	r->guard = g;
	return 0;
}

void ring_guard_add(struct perfring_ring *r, void *addr, size_t len)
{
	struct ring_guard_slot *g = r->guard;

	if (!g)
		return;
	for (int k = 3; k < RING_GUARD_RANGES; k++) {
		if (!READ_ONCE(g->len[k])) {
			guard_set_range(g, k, addr, len);
			/* Died meanwhile: the new mapping goes the same way. */
			if (ring_dead(r))
				guard_zero((uint64_t)(uintptr_t)addr, len);
			return;
		}
	}
}

void ring_guard_remove(struct perfring_ring *r, void *addr)
{
	struct ring_guard_slot *g = r->guard;

	if (!g)
		return;
	for (int k = 3; k < RING_GUARD_RANGES; k++)
		if (READ_ONCE(g->start[k]) == (uint64_t)(uintptr_t)addr)
			WRITE_ONCE(g->len[k], 0);
}

void ring_guard_unregister(struct perfring_ring *r)
{
	struct ring_guard_slot *g = r->guard;

	if (!g)
		return;
	/* Out of the handler's sight first, then the ranges, then free. */
	WRITE_ONCE(g->state, GUARD_BUSY);
	smp_mb();
	for (int k = 0; k < RING_GUARD_RANGES; k++)
		WRITE_ONCE(g->len[k], 0);
	r->dead = READ_ONCE(g->dead);
	r->guard = NULL;
	smp_store_release(&g->state, GUARD_FREE);
}

void ring_kill(struct perfring_ring *r, enum ring_dead_cause why)
{
	if (r->guard) {
		guard_kill_slot(r->guard, why);
		return;
	}
	/* Not registered (a ring this process made): its own mappings. */
	if (r->map_base)
		guard_zero((uint64_t)(uintptr_t)r->map_base, r->map_len);
	if (r->ctl_rw)
		guard_zero((uint64_t)(uintptr_t)r->ctl_rw, r->page_size);
	if (r->slots_map)
		guard_zero((uint64_t)(uintptr_t)r->slots_map, r->slots_len);
	if (!r->dead)
		r->dead = why;
}

int ring_dead_error(struct perfring_ring *r)
{
	uint32_t why = r->guard ? READ_ONCE(r->guard->dead) : r->dead;

	if (!r->dead_logged) {
		struct stat st;
		long long now = -1;

		r->dead_logged = true;
		if (r->fd >= 0 && fstat(r->fd, &st) == 0)
			now = (long long)st.st_size;
		if (why == RING_DEAD_FAULT) {
			uint64_t addr = r->guard ?
						READ_ONCE(
							r->guard->fault_addr) :
						0,
				 at = addr - (uint64_t)(uintptr_t)r->map_base;

			if (at < r->map_len)
				pr_warn("ring %s: bus error at byte %llu of its mapping: the file was truncated to %lld bytes under it; the ring is dropped and every call on it fails with EFAULT",
					ring_name(r), (unsigned long long)at,
					now);
			else
				pr_warn("ring %s: bus error in one of its mappings: the file was truncated to %lld bytes under it; the ring is dropped and every call on it fails with EFAULT",
					ring_name(r), now);
		} else {
			pr_warn("ring %s: its file shrank from %llu to %lld bytes under the mapping; the ring is dropped and every call on it fails with EFAULT",
				ring_name(r), (unsigned long long)r->file_len,
				now);
		}
	}
	return -EFAULT;
}

PERFRING_API int perfring_ring_check(struct perfring_ring *r)
{
	struct stat st;

	if (!r)
		return -EINVAL;
	if (r->kernel)
		return 0;
	if (ring_dead(r))
		return ring_dead_error(r);
	if (fstat(r->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < r->file_len) {
		/* Before anything touches the pages that are gone. */
		ring_kill(r, RING_DEAD_SHRUNK);
		ring_dead_error(r);
		return -ENODATA;
	}
	return 0;
}
