// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_slab_addr: the address of a slab cache, by name, for the
 * lock_held(&cache) specs (see bpf/lockheld_slab.bpf.c for how and why).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/lh.h"

#ifdef UST_HAVE_BPF

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

typedef __u32 u32;
typedef __u64 u64;
#include "ust_lh_slab_skel.h"
#include "lockheld_abi.h"

int ust_lh_slab_addr(const char *name, uint64_t *addr, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct ust_lh_slab_skel *skel;
	int ret;

	*addr = 0;
	if (strlen(name) >= UST_LH_SLAB_NAME) {
		snprintf(why, whylen, "the name is longer than %d characters", UST_LH_SLAB_NAME - 1);
		return -1;
	}
	skel = ust_lh_slab_skel__open();
	if (!skel) {
		snprintf(why, whylen, "cannot open its BPF object");
		return -1;
	}
	memcpy((char *)skel->rodata->ust_lh_slab_want, name, strlen(name) + 1);
	ret = ust_lh_slab_skel__load(skel);
	if (!ret)
		ret = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ust_lh_slab_find), &run);
	if (ret) {
		snprintf(why, whylen, "running the BPF walk of the kernel's slab caches: %s",
			 strerror(ret < 0 ? -ret : errno));
	} else if (!skel->bss->ust_lh_slab_seen) {
		snprintf(why, whylen, "the kernel's list of slab caches (slab_caches) is not in /proc/kallsyms");
		ret = -1;
	} else if (!skel->bss->ust_lh_slab_found) {
		snprintf(why, whylen, "not among the kernel's %u slab caches under its own name (merged into another cache?)",
			 skel->bss->ust_lh_slab_seen);
		ret = -1;
	} else {
		*addr = skel->bss->ust_lh_slab_found;
	}
	ust_lh_slab_skel__destroy(skel);
	return ret ? -1 : 0;
}

#else

int ust_lh_slab_addr(const char *name, uint64_t *addr, char *why, size_t whylen)
{
	(void)name;
	*addr = 0;
	snprintf(why, whylen, "ustitch was built without BPF");
	return -1;
}

#endif
