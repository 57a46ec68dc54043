// SPDX-License-Identifier: LGPL-2.1
/*
 * Held pthread locks, per thread: the interposed lock functions push a
 * lock when it is acquired and drop it when it is released, so the
 * contexts $app.ustitch:lock_depth and :locks can be read by any event
 * (and by an LTTng filter) at no cost beyond these two TLS updates.
 *
 * Mutexes, rwlocks (read and write) and spinlocks are covered, with their
 * try, timed and clock variants.  pthread_cond_wait releases and takes
 * the mutex back inside glibc; the thread sleeps meanwhile and records no
 * event, so the list stays as the application sees it.
 *
 * The real functions come from dlsym(RTLD_NEXT), so other interposers
 * (lttng-ust's own pthread wrapper, a sanitizer) stay in the chain.  Locks
 * are taken before our constructor runs (lttng-ust's constructor and its
 * threads do), so resolution is lazy; should dlsym itself ever take a
 * pthread lock, the nested call uses glibc's exported __pthread_* entry
 * points instead of recursing.
 *
 * A signal handler may interrupt any of this and take locks of its own:
 * the count is raised before the slot is written and lowered after the
 * slots are moved, so a handler never overwrites a live slot.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "ust_lttng.h"

extern int __pthread_mutex_lock(pthread_mutex_t *m);
extern int __pthread_mutex_trylock(pthread_mutex_t *m);
extern int __pthread_mutex_unlock(pthread_mutex_t *m);
extern int __pthread_rwlock_rdlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_wrlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_trywrlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_unlock(pthread_rwlock_t *l);

#define REAL_FUNCS(X)							\
	X(pthread_mutex_lock, int, (pthread_mutex_t *))			\
	X(pthread_mutex_trylock, int, (pthread_mutex_t *))		\
	X(pthread_mutex_timedlock, int, (pthread_mutex_t *, const struct timespec *)) \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(pthread_mutex_unlock, int, (pthread_mutex_t *))		\
	X(pthread_rwlock_rdlock, int, (pthread_rwlock_t *))		\
	X(pthread_rwlock_wrlock, int, (pthread_rwlock_t *))		\
	X(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t *))		\
	X(pthread_rwlock_trywrlock, int, (pthread_rwlock_t *))		\
	X(pthread_rwlock_timedrdlock, int, (pthread_rwlock_t *, const struct timespec *)) \
	X(pthread_rwlock_timedwrlock, int, (pthread_rwlock_t *, const struct timespec *)) \
	X(pthread_rwlock_clockrdlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_clockwrlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_unlock, int, (pthread_rwlock_t *))		\
	X(pthread_spin_lock, int, (pthread_spinlock_t *))		\
	X(pthread_spin_trylock, int, (pthread_spinlock_t *))		\
	X(pthread_spin_unlock, int, (pthread_spinlock_t *))

#define DECL(name, ret, args) static ret(*real_##name) args;
REAL_FUNCS(DECL)
#undef DECL

static UST_LTTNG_TLS int resolving;
static volatile int resolved;

static void resolve(void)
{
	if (resolving)
		return;
	resolving = 1;
#define LOAD(name, ret, args)						\
	if (!real_##name)						\
		__atomic_store_n(&real_##name, (ret(*) args)dlsym(RTLD_NEXT, #name), \
				 __ATOMIC_RELAXED);
	REAL_FUNCS(LOAD)
#undef LOAD
	resolving = 0;
	resolved = 1;
}

void ust_lttng_locks_init(void)
{
	resolve();
}

/* --- the held-lock list ------------------------------------------------ */

static void held_push(const volatile void *lock)
{
	struct ust_lttng_thread *t = &ust_lttng_self;
	unsigned int n = t->nr_locks;

	t->nr_locks = n + 1;
	ust_lttng_barrier();
	if (n < UST_LTTNG_MAX_LOCKS)
		t->locks[n] = (uintptr_t)lock;
}

static void held_drop(const volatile void *lock)
{
	struct ust_lttng_thread *t = &ust_lttng_self;
	unsigned int n = t->nr_locks, m, i;

	if (!n)
		return;
	m = n < UST_LTTNG_MAX_LOCKS ? n : UST_LTTNG_MAX_LOCKS;
	for (i = m; i-- > 0;) {
		if (t->locks[i] != (uintptr_t)lock)
			continue;
		for (; i + 1 < m; i++)
			t->locks[i] = t->locks[i + 1];
		ust_lttng_barrier();
		t->nr_locks = n - 1;
		return;
	}
	/* Not listed: one of those past the list's end, or taken before
	 * we were loaded (then the count never had it). */
	if (n > UST_LTTNG_MAX_LOCKS)
		t->nr_locks = n - 1;
}

/* "0x7f..": no stdio on this path (it may run in a signal handler). */
static size_t put_hex(char *buf, size_t size, uintptr_t v)
{
	static const char dig[] = "0123456789abcdef";
	size_t nd = v ? (size_t)(64 - __builtin_clzll((unsigned long long)v) + 3) / 4 : 1;
	size_t n = nd + 2, i;

	/* What does not fit is left out; the caller cuts the text there. */
	for (i = n; i-- > 2; v >>= 4)
		if (i < size)
			buf[i] = dig[v & 0xf];
	if (size > 0)
		buf[0] = '0';
	if (size > 1)
		buf[1] = 'x';
	return n;
}

size_t ust_lttng_locks_text(const struct ust_lttng_thread *t, char *buf, size_t size)
{
	unsigned int n = t->nr_locks, m = n < UST_LTTNG_MAX_LOCKS ? n : UST_LTTNG_MAX_LOCKS;
	size_t len = 0;

	/* Innermost first; a count beyond the list shows as "...". */
	while (m-- > 0) {
		if (len && len < size)
			buf[len] = ' ';
		len += len ? 1 : 0;
		len += put_hex(buf + (len < size ? len : 0), len < size ? size - len : 0, t->locks[m]);
	}
	if (n > UST_LTTNG_MAX_LOCKS) {
		const char *more = " ...";

		for (; *more; more++, len++)
			if (len < size)
				buf[len] = *more;
	}
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}

/* --- the interposed functions ----------------------------------------- */

#define CALL(name, fallback, ...)					\
	({								\
		__typeof__(real_##name) f_;				\
		if (!resolved && !__atomic_load_n(&real_##name, __ATOMIC_RELAXED)) \
			resolve();					\
		f_ = __atomic_load_n(&real_##name, __ATOMIC_RELAXED);	\
		f_ ? f_(__VA_ARGS__) : fallback;			\
	})

#define ACQUIRE(lock, call)						\
	({								\
		int ret_ = (call);					\
		if (!ret_)						\
			held_push(lock);				\
		ret_;							\
	})

static int spin_fallback(pthread_spinlock_t *l, bool try)
{
	/* glibc's layout: 0 free, 1 taken. */
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		if (try)
			return EBUSY;
	}
	return 0;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	return ACQUIRE(m, CALL(pthread_mutex_lock, __pthread_mutex_lock(m), m));
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	return ACQUIRE(m, CALL(pthread_mutex_trylock, __pthread_mutex_trylock(m), m));
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	return ACQUIRE(m, CALL(pthread_mutex_timedlock, ENOSYS, m, ts));
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *ts)
{
	return ACQUIRE(m, CALL(pthread_mutex_clocklock, ENOSYS, m, c, ts));
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	held_drop(m);
	return CALL(pthread_mutex_unlock, __pthread_mutex_unlock(m), m);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	return ACQUIRE(l, CALL(pthread_rwlock_rdlock, __pthread_rwlock_rdlock(l), l));
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	return ACQUIRE(l, CALL(pthread_rwlock_wrlock, __pthread_rwlock_wrlock(l), l));
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	return ACQUIRE(l, CALL(pthread_rwlock_tryrdlock, __pthread_rwlock_tryrdlock(l), l));
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	return ACQUIRE(l, CALL(pthread_rwlock_trywrlock, __pthread_rwlock_trywrlock(l), l));
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	return ACQUIRE(l, CALL(pthread_rwlock_timedrdlock, ENOSYS, l, ts));
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	return ACQUIRE(l, CALL(pthread_rwlock_timedwrlock, ENOSYS, l, ts));
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t c, const struct timespec *ts)
{
	return ACQUIRE(l, CALL(pthread_rwlock_clockrdlock, ENOSYS, l, c, ts));
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t c, const struct timespec *ts)
{
	return ACQUIRE(l, CALL(pthread_rwlock_clockwrlock, ENOSYS, l, c, ts));
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	held_drop(l);
	return CALL(pthread_rwlock_unlock, __pthread_rwlock_unlock(l), l);
}

int pthread_spin_lock(pthread_spinlock_t *l)
{
	return ACQUIRE(l, CALL(pthread_spin_lock, spin_fallback(l, false), l));
}

int pthread_spin_trylock(pthread_spinlock_t *l)
{
	return ACQUIRE(l, CALL(pthread_spin_trylock, spin_fallback(l, true), l));
}

int pthread_spin_unlock(pthread_spinlock_t *l)
{
	held_drop(l);
	return CALL(pthread_spin_unlock, (__atomic_store_n(l, 0, __ATOMIC_RELEASE), 0), l);
}
