// SPDX-License-Identifier: LGPL-2.1
/*
 * Per-thread state and the bounds of each thread's stack, which make the
 * frame walk safe without a syscall per frame: a frame record lying
 * between the current stack pointer and the top of this thread's stack is
 * mapped memory, so it can be read directly.
 *
 * The main thread's stack ends at __libc_stack_end.  For other threads,
 * pthread_create is interposed: the new thread starts in our wrapper,
 * whose frame is then the top of every stack the thread will show.
 * pthread_getattr_np would tell the bounds too, but it allocates (and
 * reads /proc for the main thread), so it cannot run on the hot path.
 * Threads created some other way keep stack_hi = 0, and the walk falls
 * back to process_vm_readv, which reports a bad address instead of
 * faulting.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ust_lttng.h"

UST_LTTNG_TLS struct ust_lttng_thread ust_lttng_self;
struct ust_lttng_proc ust_lttng_proc;

extern void *__libc_stack_end;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn real_create;

struct start {
	void *(*fn)(void *);
	void *arg;
};

void ust_lttng_thread_init(void)
{
	struct rlimit rl;
	uintptr_t size = (uintptr_t)8 << 20;

	ust_lttng_proc.main_hi = (uintptr_t)__libc_stack_end;
	if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		size = rl.rlim_cur;
	else if (!getrlimit(RLIMIT_STACK, &rl))
		size = (uintptr_t)1 << 32;	/* unlimited: the usual gap below */
	ust_lttng_proc.main_lo = ust_lttng_proc.main_hi > size ?
				 ust_lttng_proc.main_hi - size : 0;
	if (!real_create)
		real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
}

extern const char __start_ustitch_tstart[], __stop_ustitch_tstart[];

bool ust_lttng_in_thread_start(uintptr_t ip)
{
	return ip >= (uintptr_t)__start_ustitch_tstart && ip < (uintptr_t)__stop_ustitch_tstart;
}

ust_lttng_create_fn ust_lttng_real_pthread_create(void)
{
	if (!real_create)
		real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	return real_create;
}

void ust_lttng_stack_bounds(uintptr_t sp, uintptr_t *hi, uintptr_t *wrap_fp)
{
	struct ust_lttng_thread *t = &ust_lttng_self;

	*wrap_fp = 0;
	if (t->stack_hi && sp < t->stack_hi && t->stack_hi - sp < ((uintptr_t)1 << 30)) {
		*hi = t->stack_hi;
		*wrap_fp = t->wrap_fp;
		return;
	}
	if (sp >= ust_lttng_proc.main_lo && sp < ust_lttng_proc.main_hi) {
		*hi = ust_lttng_proc.main_hi;
		return;
	}
	*hi = 0;	/* an alternate signal stack, or a thread we did not start */
}

/*
 * Never inlined and with a frame of its own: its frame address is the
 * boundary the walk stops at, so the thread's stacks end at the user's
 * start routine.
 */
/* In a section of its own, so that the CFI walk knows its bounds. */
__attribute__((noinline, section("ustitch_tstart"))) static void *thread_start(void *p)
{
	struct start s = *(struct start *)p;
	struct ust_lttng_thread *t = &ust_lttng_self;
	void *ret;

	free(p);
	t->wrap_fp = (uintptr_t)__builtin_frame_address(0);
	t->stack_hi = t->wrap_fp;
	ret = s.fn(s.arg);
	/* Keep the call above from becoming a tail call that drops our frame. */
	__asm__ volatile("" : : "r"(ret) : "memory");
	return ret;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct start *s;
	create_fn real = real_create;
	int ret;

	if (!real) {
		real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
		if (!real)
			return EAGAIN;
		real_create = real;
	}
	/* A safe point to catch up on objects dlopen()ed inside libc. */
	ust_lttng_objs_refresh_if_stale();
	/* ... and to start the table builder again in a forked child. */
	ust_lttng_cfi_start();
	s = malloc(sizeof(*s));
	if (!s)
		return real(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	ret = real(th, attr, thread_start, s);
	if (ret)
		free(s);
	return ret;
}
