/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libustitch-lttng: the LD_PRELOAD object that gives LTTng-UST events a
 * user stack id and the held pthread locks, as the application contexts
 * $app.ustitch:stack_id, :lock_depth and :locks.
 *
 * One module per concept:
 *   ust_lttng_thread.c   per-thread state, stack bounds, pthread_create
 *   ust_lttng_cfi.c      loaded objects and their unwind tables (builder thread)
 *   ust_lttng_walk.c     the fault-safe stack walk: CFI tables, frame pointers
 *   ust_lttng_locks.c    interposed pthread lock functions, held-lock list
 *   ust_lttng_objs.c     loaded objects (addr -> file offset), from /proc/self/maps
 *   ust_lttng_stacks.c   stack ids, once-per-id emission of ustitch:stack
 *   ust_lttng_provider.c the context provider callbacks, registration
 *
 * Rules for everything reachable from a tracepoint or a lock function:
 * no allocation, no lock, no call that may take one (dl*, stdio), only
 * reads that cannot fault, bounded loops.  Such code may run in a signal
 * handler or inside lttng-ust, which takes pthread mutexes itself.
 */
#ifndef USTITCH_LTTNG_H
#define USTITCH_LTTNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

struct ust_cfi_row;

#define UST_LTTNG_MAX_FRAMES	128	/* deeper stacks are cut */
#define UST_LTTNG_MAX_LOCKS	16	/* listed; lock_depth counts all */

#define UST_LTTNG_TLS __thread __attribute__((tls_model("initial-exec")))

/* Compiler barrier: a signal handler on this thread sees stores in order. */
#define ust_lttng_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

#define UST_LTTNG_PROMISES	4	/* nesting levels (signal handlers) */

/*
 * The length get_size() promised for the locks text of the event whose
 * probe context is pctx.  A signal handler's event may come between an
 * event's get_size() and record(); it has its own probe context, so
 * each level finds its own promise.
 */
struct ust_lttng_promise {
	const void *pctx;
	size_t len;
};

struct ust_lttng_thread {
	uintptr_t stack_hi;	/* frames live below this; 0 = unknown */
	uintptr_t wrap_fp;	/* frame of our thread-start wrapper, or 0 */
	unsigned int busy;	/* inside our callbacks: nested events get none */
	unsigned int nr_locks;	/* held, all of them */
	uintptr_t locks[UST_LTTNG_MAX_LOCKS];	/* outermost first */
	unsigned int next_promise;
	struct ust_lttng_promise promise[UST_LTTNG_PROMISES];
};

extern UST_LTTNG_TLS struct ust_lttng_thread ust_lttng_self;

/* Process-wide facts, set by the constructor (and in a forked child). */
struct ust_lttng_proc {
	pid_t pid;
	uintptr_t main_lo, main_hi;	/* the main thread's stack range */
	uint64_t salt;			/* makes stack ids differ by process */
};

extern struct ust_lttng_proc ust_lttng_proc;

/* --- ust_lttng_cfi.c --- */
/* A pc's object, its file offset and its unwind table, for the walk. */
#define UST_LTTNG_CFI_WAIT_NS	500000000LL	/* per file: longest wait for its table */

struct ust_cfi_table;

enum { UST_LTTNG_CFI_NONE, UST_LTTNG_CFI_READY, UST_LTTNG_CFI_PENDING };

struct ust_lttng_cfi_obj {
	uintptr_t lo, hi;		/* the executable segment holding the pc */
	uint64_t delta;			/* file offset = pc + delta */
	uint32_t file;
	int status;			/* UST_LTTNG_CFI_*: READY = a table below */
	const struct ust_cfi_table *tab;	/* its rows (ust_cfi_lookup()), never freed */
};

typedef int (*ust_lttng_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* Constructor: the registry of loaded objects, the builder thread; the
 * tables of the object holding @also (lttng-ust) and ours are built first. */
void ust_lttng_cfi_init(uintptr_t also);
/* Starts the builder thread unless it runs in this process (after fork()). */
void ust_lttng_cfi_start(void);
bool ust_lttng_cfi_enabled(void);
/* Moves whenever the registry sees objects loaded or unloaded. */
unsigned int ust_lttng_cfi_gen(void);
/*
 * The object holding @pc: false when none (JIT code, anonymous memory)
 * or CFI is off.  May wait for a table or a rescan, boundedly; never
 * allocates, never locks.
 */
bool ust_lttng_cfi_find(uintptr_t pc, struct ust_lttng_cfi_obj *o);

/* --- ust_lttng_thread.c --- */
void ust_lttng_thread_init(void);
ust_lttng_create_fn ust_lttng_real_pthread_create(void);
/* Whether @ip is inside our thread-start wrapper. */
bool ust_lttng_in_thread_start(uintptr_t ip);
/* [lo, hi) of the current thread's stack as far as known; hi 0 = unknown. */
void ust_lttng_stack_bounds(uintptr_t sp, uintptr_t *hi, uintptr_t *wrap_fp);

/* --- ust_lttng_walk.c --- */
/*
 * Return addresses of the code that called the tracepoint probe whose
 * probe context is @pctx (return address @ip), innermost first.  Returns
 * how many (0 when the probe's frame cannot be found); *@flags gets the
 * UST_ABI_STACK_F_* of how the walk went (CFI, frame pointers, bottom
 * reached, a table not ready, cut short).
 */
int ust_lttng_walk(const void *pctx, uintptr_t ip, uintptr_t *out, int max, uint32_t *flags);

/* --- ust_lttng_locks.c --- */
/* Lock list as text, innermost first, at most @len bytes + NUL. */
size_t ust_lttng_locks_text(const struct ust_lttng_thread *t, char *buf, size_t size);
void ust_lttng_locks_init(void);

/* --- ust_lttng_objs.c --- */
void ust_lttng_objs_init(void);
void ust_lttng_objs_refresh(void);
/* Refresh only when a lookup met an address no known object covered. */
void ust_lttng_objs_refresh_if_stale(void);
/*
 * Frames -> (file offset, inode, kernel dev_t); an address no file covers
 * stays raw with inode 0.  Describes each object met in the trace
 * (ustitch:object) unless done in generation @gen already.
 */
void ust_lttng_objs_resolve(const uintptr_t *pc, int nr, uint64_t *off, uint64_t *ino,
			    uint32_t *kdev, uint32_t gen);
/* Describe the object holding data address @addr (a lock), if any. */
void ust_lttng_objs_describe(uintptr_t addr, uint32_t gen);

/* --- ust_lttng_stacks.c --- */
uint64_t ust_lttng_stack_id(const uintptr_t *pc, int nr, uint32_t flags);
/* A session not among the last few seen starts a new generation. */
void ust_lttng_stacks_session(const void *session);
uint32_t ust_lttng_stacks_gen(void);
void ust_lttng_stacks_new_gen(void);
/* Emit ustitch:stack (and its objects) if @id is new in this generation. */
void ust_lttng_stack_publish(uint64_t id, const uintptr_t *pc, int nr, uint32_t flags);

#endif
