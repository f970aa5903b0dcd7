/* C11 atomics under names that carry their memory order (STYLE.md).
 * Every caller of an acquire/release helper comments the partner it pairs with. */
#ifndef TC_CORE_ATOMICS_H
#define TC_CORE_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

#ifndef TC_CACHELINE
#define TC_CACHELINE 64
#endif

typedef _Atomic uint64_t tc_atomic_u64_t;
typedef _Atomic uint32_t tc_atomic_u32_t;

static inline uint64_t tc_load_acquire_u64(const tc_atomic_u64_t *p)
{
    return atomic_load_explicit(p, memory_order_acquire);
}

static inline uint64_t tc_load_relaxed_u64(const tc_atomic_u64_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void tc_store_release_u64(tc_atomic_u64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

static inline void tc_store_relaxed_u64(tc_atomic_u64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t tc_fetch_add_relaxed_u64(tc_atomic_u64_t *p, uint64_t v)
{
    return atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t tc_fetch_add_acq_rel_u64(tc_atomic_u64_t *p, uint64_t v)
{
    return atomic_fetch_add_explicit(p, v, memory_order_acq_rel);
}

static inline void tc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif /* TC_CORE_ATOMICS_H */
