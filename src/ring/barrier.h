/* SPDX-License-Identifier: MIT */
/*
 * Memory ordering with the kernel's names, on C11 atomics so that compilers
 * and ThreadSanitizer understand it.  From the kernel's memory-barriers.txt:
 *
 *   ACQUIRE: all memory operations after the ACQUIRE appear to happen after
 *   it with respect to the other components of the system.
 *   RELEASE: all memory operations before the RELEASE appear to happen
 *   before it.
 *
 * Every use in the ring names the access it pairs with; the table is in
 * docs/design.md.  Shared-memory words are plain uint64_t/uint32_t in the
 * wire ABI, accessed through these casts.
 */
#ifndef PERFRING_RING_BARRIER_H
#define PERFRING_RING_BARRIER_H

#include <stdatomic.h>

#define PR_ATOMIC(p) ((_Atomic __typeof__(*(p)) *)(p))

#define READ_ONCE(x) atomic_load_explicit(PR_ATOMIC(&(x)), memory_order_relaxed)
#define WRITE_ONCE(x, v) \
	atomic_store_explicit(PR_ATOMIC(&(x)), (v), memory_order_relaxed)

#define smp_load_acquire(p) \
	atomic_load_explicit(PR_ATOMIC(p), memory_order_acquire)
#define smp_store_release(p, v) \
	atomic_store_explicit(PR_ATOMIC(p), (v), memory_order_release)

/* Full barrier: orders earlier stores against later loads (Dekker). */
#define smp_mb() atomic_thread_fence(memory_order_seq_cst)
/* Orders earlier stores before later stores (seqlock writer). */
#define smp_wmb() atomic_thread_fence(memory_order_release)
/* Orders earlier loads before later loads (seqlock reader). */
#define smp_rmb() atomic_thread_fence(memory_order_acquire)

#define xchg(p, v) \
	atomic_exchange_explicit(PR_ATOMIC(p), (v), memory_order_seq_cst)
#define try_cmpxchg(p, oldp, v)                                          \
	atomic_compare_exchange_weak_explicit(PR_ATOMIC(p), (oldp), (v), \
					      memory_order_acq_rel,      \
					      memory_order_relaxed)
#define atomic_add_relaxed(p, v)                            \
	((void)atomic_fetch_add_explicit(PR_ATOMIC(p), (v), \
					 memory_order_relaxed))
#define atomic_add_return_relaxed(p, v)                                       \
	(atomic_fetch_add_explicit(PR_ATOMIC(p), (v), memory_order_relaxed) + \
	 (v))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif /* PERFRING_RING_BARRIER_H */
