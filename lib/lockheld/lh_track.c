// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_track: lock families for held-lock tracking.  The function lists
 * match the programs of bpf/lockheld_track.bpf.c (names derive from them:
 * ust_lh_x_<func> for fexit, ust_lh_e_<func> for fentry), so adding a
 * function means adding it in both places; the unit test checks that
 * every name here exists in the object.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/lh.h"
#include "ustitch/lh_track.h"

#define A(f) { #f, UST_LH_HOOK_ACQ }
#define R(f) { #f, UST_LH_HOOK_REL }
#define W(f) { #f, UST_LH_HOOK_WAIT }
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const struct ust_lh_hookfn mutex_fns[] = {
	A(mutex_lock), A(mutex_lock_io), A(mutex_lock_interruptible), A(mutex_lock_killable),
	A(mutex_trylock), R(mutex_unlock),
};
static const struct ust_lh_hookfn rwsem_fns[] = {
	A(down_read), A(down_read_interruptible), A(down_read_killable), A(down_read_trylock),
	A(down_write), A(down_write_killable), A(down_write_trylock),
	R(up_read), R(up_write), R(downgrade_write),
};
static const struct ust_lh_hookfn spin_fns[] = {
	A(_raw_spin_lock), A(_raw_spin_lock_irq), A(_raw_spin_lock_bh), A(_raw_spin_lock_irqsave),
	A(_raw_spin_trylock),
	R(_raw_spin_unlock), R(_raw_spin_unlock_irq), R(_raw_spin_unlock_bh),
	R(_raw_spin_unlock_irqrestore),
};
static const struct ust_lh_hookfn rwlock_fns[] = {
	A(_raw_read_lock), A(_raw_read_lock_irq), A(_raw_read_lock_bh), A(_raw_read_lock_irqsave),
	A(_raw_read_trylock), A(_raw_write_lock), A(_raw_write_lock_irq), A(_raw_write_lock_bh),
	A(_raw_write_lock_irqsave), A(_raw_write_trylock),
	R(_raw_read_unlock), R(_raw_read_unlock_irq), R(_raw_read_unlock_bh),
	R(_raw_read_unlock_irqrestore), R(_raw_write_unlock), R(_raw_write_unlock_irq),
	R(_raw_write_unlock_bh), R(_raw_write_unlock_irqrestore),
};
static const struct ust_lh_hookfn rtmutex_fns[] = {
	A(rt_mutex_lock), A(rt_mutex_lock_interruptible), A(rt_mutex_lock_killable),
	A(rt_mutex_trylock), R(rt_mutex_unlock),
};
static const struct ust_lh_hookfn pcpu_fns[] = {
	A(percpu_down_write), R(percpu_up_write),
};
static const struct ust_lh_hookfn sem_fns[] = {
	A(down), A(down_interruptible), A(down_killable), A(down_trylock), A(down_timeout), R(up),
};
static const struct ust_lh_hookfn srcu_fns[] = {
	A(__srcu_read_lock), R(__srcu_read_unlock),
};
static const struct ust_lh_hookfn rcu_gp_fns[] = {
	W(synchronize_rcu), W(synchronize_rcu_expedited), W(rcu_barrier),
};
static const struct ust_lh_hookfn srcu_gp_fns[] = {
	W(synchronize_srcu),
};

static const struct ust_lh_family families[] = {
	{ UST_LH_FAM_MUTEX, "mutex", mutex_fns, N(mutex_fns) },
	{ UST_LH_FAM_RWSEM, "rwsem", rwsem_fns, N(rwsem_fns) },
	{ UST_LH_FAM_SPINLOCK, "spinlock", spin_fns, N(spin_fns) },
	{ UST_LH_FAM_RWLOCK, "rwlock", rwlock_fns, N(rwlock_fns) },
	{ UST_LH_FAM_RTMUTEX, "rt-mutex", rtmutex_fns, N(rtmutex_fns) },
	{ UST_LH_FAM_PERCPU_RWSEM, "percpu-rwsem", pcpu_fns, N(pcpu_fns) },
	{ UST_LH_FAM_SEMAPHORE, "semaphore", sem_fns, N(sem_fns) },
	{ UST_LH_FAM_SRCU, "srcu", srcu_fns, N(srcu_fns) },
	{ UST_LH_FAM_RCU_GP, "rcu grace periods", rcu_gp_fns, N(rcu_gp_fns) },
	{ UST_LH_FAM_SRCU_GP, "srcu grace periods", srcu_gp_fns, N(srcu_gp_fns) },
};

const struct ust_lh_family *ust_lh_families(int *nr)
{
	*nr = N(families);
	return families;
}

const struct ust_lh_family *ust_lh_family_of(unsigned int bit)
{
	int i;

	for (i = 0; i < N(families); i++)
		if (families[i].bit == bit)
			return &families[i];
	return NULL;
}

unsigned int ust_lh_track_available(bool (*has_func)(void *ctx, const char *func), void *ctx,
				    char *why, size_t whylen)
{
	unsigned int avail = 0;
	size_t used = 0;
	int i, j;

	if (why && whylen)
		why[0] = '\0';
	for (i = 0; i < N(families); i++) {
		const struct ust_lh_family *f = &families[i];
		const char *missing = NULL;
		bool acq = false;

		for (j = 0; j < f->nr_fns; j++) {
			bool has = has_func(ctx, f->fns[j].func);

			if (has && f->fns[j].hook != UST_LH_HOOK_REL)
				acq = true;
			if (!has && f->fns[j].hook == UST_LH_HOOK_REL && !missing)
				missing = f->fns[j].func;
		}
		if (acq && !missing) {
			avail |= f->bit;
			continue;
		}
		if (!missing)
			missing = f->fns[0].func;
		if (why && used < whylen)
			used += (size_t)snprintf(why + used, whylen - used, "%s%s: no %s",
						 used ? "; " : "", f->name, missing);
	}
	return avail;
}

int ust_lh_track_progs(unsigned int fams, bool (*has_func)(void *ctx, const char *func),
		       void *ctx, const char **out, char (*names)[64], int max)
{
	int i, j, k, n = 0;

	for (i = 0; i < N(families); i++) {
		if (!(fams & families[i].bit))
			continue;
		for (j = 0; j < families[i].nr_fns; j++) {
			const struct ust_lh_hookfn *h = &families[i].fns[j];
			const char *pfx[2];
			int np = 0;

			if (has_func && !has_func(ctx, h->func))
				continue;
			if (h->hook != UST_LH_HOOK_REL)
				pfx[np++] = "ust_lh_x_";
			if (h->hook != UST_LH_HOOK_ACQ)
				pfx[np++] = "ust_lh_e_";
			for (k = 0; k < np; k++) {
				if (n >= max)
					return -ENOSPC;
				snprintf(names[n], 64, "%s%s", pfx[k], h->func);
				out[n] = names[n];
				n++;
			}
		}
	}
	return n;
}
