// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_resolve: which mechanism decides each lock_held() spec on this
 * kernel, or why none can.  Every refusal names the spec as written, the
 * mechanism it needs and what this kernel lacks for it, so that a user can
 * tell a typo from a kernel limit before anything is recorded.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/lh.h"
#include "ustitch/lh_track.h"

/* x86-64: kernel addresses are in the upper half (canonical). */
#define UST_LH_KERNEL_MIN	0xffff800000000000ULL

#define TRACK_WHAT "held-lock tracking (fexit on the lock functions, fentry on the unlock functions)"

const char *ust_lh_mech_name(enum ust_lh_mech m)
{
	switch (m) {
	case UST_LH_MECH_OWNER:
		return "owner inspection";
	case UST_LH_MECH_MMAP:
		return "mmap_lock owner inspection and mmap_lock tracepoints";
	case UST_LH_MECH_RCU:
		return "current->rcu_read_lock_nesting";
	case UST_LH_MECH_RCU_TRACE:
		return "current->trc_reader_nesting";
	case UST_LH_MECH_TRACK:
		return TRACK_WHAT;
	case UST_LH_MECH_NONE:
		break;
	}
	return "nothing";
}

struct rctx {
	const struct ust_lh_expr *e;
	const struct ust_lh_env *env;
	char *err;
	size_t errlen;
	int spec;
};

__attribute__((format(printf, 2, 3)))
static int refuse(struct rctx *r, const char *fmt, ...)
{
	char *leaf = ust_lh_leaf_text(r->e, r->spec), msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s: %s", leaf ? leaf : r->e->specs[r->spec].text, msg);
	free(leaf);
	return -1;
}

/* Held-lock tracking for @fams, or a refusal saying what is missing. */
static int need_track(struct rctx *r, struct ust_lh_spec *s, unsigned int fams)
{
	const struct ust_lh_env *env = r->env;
	unsigned int missing;
	int i;

	if (!env->tracing)
		return refuse(r, "needs %s: tracing programs %s", TRACK_WHAT,
			      env->no_tracing_why ? env->no_tracing_why : "not available");
	/* Specs that other families can also satisfy do without spinlocks. */
	if (env->no_spin_why && fams == UST_LH_FAM_SPINLOCK)
		return refuse(r, "needs %s of spinlock locks: %s", TRACK_WHAT, env->no_spin_why);
	if (env->no_spin_why)
		fams &= ~UST_LH_FAM_SPINLOCK;
	missing = fams & ~env->families;
	for (i = 0; missing && i < 10; i++) {
		const struct ust_lh_family *f = ust_lh_family_of(1U << i);

		if (f && (missing & f->bit))
			return refuse(r, "needs %s of %s locks: this kernel has no out-of-line %s functions to hook (inlined or absent from BTF)",
				      TRACK_WHAT, f->name, f->name);
	}
	s->mech = UST_LH_MECH_TRACK;
	s->families |= fams;
	return 0;
}

static unsigned int type_family(enum ust_lh_type t)
{
	switch (t) {
	case UST_LH_TYPE_MUTEX:
		return UST_LH_FAM_MUTEX;
	case UST_LH_TYPE_SPINLOCK:
		return UST_LH_FAM_SPINLOCK;
	case UST_LH_TYPE_RWSEM:
		return UST_LH_FAM_RWSEM;
	case UST_LH_TYPE_RWLOCK:
		return UST_LH_FAM_RWLOCK;
	case UST_LH_TYPE_RTMUTEX:
		return UST_LH_FAM_RTMUTEX;
	case UST_LH_TYPE_PERCPU_RWSEM:
		return UST_LH_FAM_PERCPU_RWSEM;
	case UST_LH_TYPE_SEMAPHORE:
		return UST_LH_FAM_SEMAPHORE;
	}
	return 0;
}

static int resolve_name(struct rctx *r, struct ust_lh_spec *s)
{
	const struct ust_lh_env *env = r->env;
	const char *note = env->kallsyms_no_data ?
		" (this kernel's kallsyms lists functions only: CONFIG_KALLSYMS_ALL is off)" : "";

	if (env->ksym && env->ksym(env->ctx, s->name, &s->addr)) {
		s->kind = UST_LH_S_SYMBOL;
		return 0;
	}
	if (s->kind == UST_LH_S_AMP && env->slab && env->slab(env->ctx, s->name)) {
		s->kind = UST_LH_S_SLAB;
		return 0;
	}
	if (s->kind == UST_LH_S_AMP)
		return refuse(r, "'%s' is neither a symbol in /proc/kallsyms%s nor a slab cache",
			      s->name, note);
	return refuse(r, "symbol '%s' is not in /proc/kallsyms%s", s->name, note);
}

/* Owner inspection needs the owner fields in the kernel's BTF. */
static bool have_owner_fields(const struct ust_lh_env *env)
{
	return !env->btf_member || (env->btf_member(env->ctx, "mutex", "owner") &&
				    env->btf_member(env->ctx, "rw_semaphore", "owner"));
}

static int resolve_one(struct rctx *r, struct ust_lh_spec *s)
{
	const struct ust_lh_env *env = r->env;

	switch (s->kind) {
	case UST_LH_S_AMP:
	case UST_LH_S_SYMBOL:
		if (resolve_name(r, s))
			return -1;
		if (s->kind == UST_LH_S_SLAB) {
			/*
			 * The tracker asks the kfunc which cache a lock lives
			 * in; without it every slab spec would silently be
			 * false.
			 */
			if (env->tracing && env->no_kmem_cache)
				return refuse(r, "needs the bpf_get_kmem_cache kfunc (Linux 6.13+), or page_offset_base, vmemmap_base and max_pfn in /proc/kallsyms, to tell the slab cache of a lock: this kernel has neither");
			if (need_track(r, s, s->mode == UST_LH_MODE_READ ?
				       UST_LH_FAM_RWSEM | UST_LH_FAM_RWLOCK :
				       UST_LH_FAM_MUTEX | UST_LH_FAM_RWSEM | UST_LH_FAM_SPINLOCK |
				       UST_LH_FAM_RWLOCK))
				return -1;
			if (env->slab_addr) {
				char why[256];

				if (!env->slab_addr(env->ctx, s->name, &s->addr, why, sizeof(why)))
					return refuse(r, "cannot find the address of slab cache '%s': %s",
						      s->name, why);
			}
			return 0;
		}
		/* A symbol is an address. */
		__attribute__((fallthrough));
	case UST_LH_S_ADDR:
		if (s->addr < UST_LH_KERNEL_MIN)
			return refuse(r, "0x%llx is not a kernel address", (unsigned long long)s->addr);
		if (s->mode == UST_LH_MODE_READ)
			return need_track(r, s, UST_LH_FAM_RWSEM | UST_LH_FAM_RWLOCK);
		if (!have_owner_fields(env))
			return refuse(r, "needs owner inspection: this kernel's BTF has no mutex.owner or rw_semaphore.owner");
		s->mech = UST_LH_MECH_OWNER;
		/*
		 * Owner inspection sees mutexes, rt_mutexes and write-held
		 * rwsems; where tracing programs load, tracking adds the
		 * others (spinlocks, rwlocks, semaphores, read holds).
		 */
		if (env->tracing) {
			s->families = env->families & (UST_LH_FAM_SPINLOCK | UST_LH_FAM_RWLOCK |
						       UST_LH_FAM_SEMAPHORE | UST_LH_FAM_RWSEM);
			if (env->no_spin_why)
				s->families &= ~UST_LH_FAM_SPINLOCK;
		}
		return 0;
	case UST_LH_S_MMAP_LOCK:
		if (env->btf_member && !env->btf_member(env->ctx, "mm_struct", "mmap_lock"))
			return refuse(r, "needs mmap_lock owner inspection: this kernel's BTF has no mm_struct.mmap_lock");
		if (!have_owner_fields(env))
			return refuse(r, "needs owner inspection: this kernel's BTF has no rw_semaphore.owner");
		if (s->mode != UST_LH_MODE_WRITE && env->tracepoint &&
		    (!env->tracepoint(env->ctx, "mmap_lock/mmap_lock_acquire_returned") ||
		     !env->tracepoint(env->ctx, "mmap_lock/mmap_lock_released")))
			return refuse(r, "the read side needs the mmap_lock:mmap_lock_acquire_returned and mmap_lock:mmap_lock_released tracepoints, which this kernel lacks");
		s->mech = UST_LH_MECH_MMAP;
		return 0;
	case UST_LH_S_RCU:
		if (s->mode == UST_LH_MODE_WRITE)
			return need_track(r, s, UST_LH_FAM_RCU_GP);
		if (env->btf_member && !env->btf_member(env->ctx, "task_struct", "rcu_read_lock_nesting"))
			return refuse(r, "needs current->rcu_read_lock_nesting: this kernel has no task_struct.rcu_read_lock_nesting (CONFIG_PREEMPT_RCU is off)");
		s->mech = UST_LH_MECH_RCU;
		return 0;
	case UST_LH_S_RCU_TRACE:
		if (s->mode == UST_LH_MODE_WRITE)
			return refuse(r, "Tasks Trace RCU grace-period waits are not tracked: only the read side (rcu-trace or rcu-trace:R)");
		if (env->btf_member && !env->btf_member(env->ctx, "task_struct", "trc_reader_nesting"))
			return refuse(r, "needs current->trc_reader_nesting: this kernel has no task_struct.trc_reader_nesting (CONFIG_TASKS_TRACE_RCU is off)");
		s->mech = UST_LH_MECH_RCU_TRACE;
		return 0;
	case UST_LH_S_SRCU:
		return need_track(r, s, s->mode == UST_LH_MODE_READ ? UST_LH_FAM_SRCU :
				  s->mode == UST_LH_MODE_WRITE ? UST_LH_FAM_SRCU_GP :
				  UST_LH_FAM_SRCU | UST_LH_FAM_SRCU_GP);
	case UST_LH_S_SIGLOCK:
	case UST_LH_S_RQ_LOCK:
	case UST_LH_S_ZONE_LOCK:
		if (need_track(r, s, UST_LH_FAM_SPINLOCK))
			return -1;
		if (s->kind != UST_LH_S_SIGLOCK)
			return refuse(r, "needs the addresses of the %s locks, which ustitch does not find yet",
				      s->kind == UST_LH_S_RQ_LOCK ? "run-queue" : "zone");
		return 0;
	case UST_LH_S_TYPE:
		if (s->type == UST_LH_TYPE_PERCPU_RWSEM && s->mode == UST_LH_MODE_READ)
			return refuse(r, "the read side of a percpu_rw_semaphore is inline (no function to hook): only %s:W",
				      s->text[0] == 'p' && s->text[1] == 'c' ? "pcpu-sem" : "percpu-rwsem");
		return need_track(r, s, type_family(s->type));
	case UST_LH_S_SLAB:
		break;
	}
	return 0;
}

int ust_lh_resolve(struct ust_lh_expr *e, const struct ust_lh_env *env, char *err, size_t errsz)
{
	struct rctx r = { .e = e, .env = env, .err = err, .errlen = errsz };

	for (r.spec = 0; r.spec < e->nr_specs; r.spec++)
		if (resolve_one(&r, &e->specs[r.spec]))
			return -EOPNOTSUPP;
	return 0;
}
