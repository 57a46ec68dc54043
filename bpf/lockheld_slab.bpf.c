// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The address of a slab cache, by name, for lock_held(&cache) specs: the
 * tracking hooks note the kmem_cache of each lock they see, and the filter
 * compares it with this.  The kernel gives user space no way to learn a
 * cache's address (/sys/kernel/slab has names only, the bpf kmem_cache
 * iterator came with 6.13), so this walks the kernel's slab_caches list
 * once, run by BPF_PROG_TEST_RUN before recording (lib/record/lh_slab.c).
 *
 * A merged cache (SLUB shares one cache between compatible ones) is listed
 * under the first creator's name only: the others are not found here, and
 * their objects could not be told apart anyway.
 */
#include "ust_bpfu_kern.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "lockheld_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct list_head___lh {
	struct list_head___lh *next;
};

struct kmem_cache___lh {
	const char *name;
	struct list_head___lh list;	/* in slab_caches */
} __attribute__((preserve_access_index));

/* Untyped and weak: from /proc/kallsyms, as the tracking hooks' symbols. */
extern const void slab_caches __ksym __weak;

const volatile char ust_lh_slab_want[UST_LH_SLAB_NAME];
__u64 ust_lh_slab_found;	/* the kmem_cache, 0: not found */
__u32 ust_lh_slab_seen;		/* caches looked at (for the error message) */

struct ust_lh_slab_walk {
	__u64 head;
	__u64 pos;
};

static long ust_lh_slab_step(__u32 i __attribute__((unused)), void *data)
{
	struct ust_lh_slab_walk *w = data;
	char name[UST_LH_SLAB_NAME] = {};
	__u64 next = 0, cache, np = 0;
	int j;

	if (bpf_probe_read_kernel(&next, sizeof(next), (void *)w->pos) || !next ||
	    next == w->head)
		return 1;
	w->pos = next;
	cache = next - bpf_core_field_offset(struct kmem_cache___lh, list);
	ust_lh_slab_seen++;
	if (bpf_probe_read_kernel(&np, sizeof(np), (void *)(cache +
				  bpf_core_field_offset(struct kmem_cache___lh, name))) ||
	    bpf_probe_read_kernel_str(name, sizeof(name), (void *)np) <= 0)
		return 0;
	for (j = 0; j < UST_LH_SLAB_NAME; j++) {
		if (name[j] != ust_lh_slab_want[j])
			return 0;
		if (!name[j])
			break;
	}
	ust_lh_slab_found = cache;
	return 1;
}

SEC("raw_tp")
int ust_lh_slab_find(void *ctx __attribute__((unused)))
{
	struct ust_lh_slab_walk w;

	/* Assigned, not initialised: clang would put the initialiser in .rodata, with a relocation libbpf does not apply. */
	if (!&slab_caches)
		return 0;
	w.head = (__u64)&slab_caches;
	barrier_var(w.head);
	w.pos = w.head;
	bpf_loop(UST_LH_SLAB_MAX, ust_lh_slab_step, &w, 0);
	return 0;
}
