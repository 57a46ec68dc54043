// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_slab_addr: the address of a slab cache, by name, for the
 * lock_held(&cache) specs (see bpf/lockheld_slab.bpf.c for how and why).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/lh_env.h"

#ifdef UST_HAVE_BPF

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

typedef __u32 u32;
typedef __u64 u64;
#include "ustitch/bpfload.h"
#include "ust_lh_slab_skel.h"
#include "lockheld_abi.h"

int ust_lh_slab_addr(const char *name, uint64_t *addr, char *err, size_t errsz)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct ust_lh_slab_skel *skel;
	int ret;

	*addr = 0;
	if (strlen(name) >= UST_LH_SLAB_NAME) {
		snprintf(err, errsz, "the name is longer than %d characters", UST_LH_SLAB_NAME - 1);
		return -ENAMETOOLONG;
	}
	skel = ust_lh_slab_skel__open();
	if (!skel) {
		ret = errno ? -errno : -ENOMEM;
		snprintf(err, errsz, "cannot open its BPF object");
		return ret;
	}
	memcpy((char *)skel->rodata->ust_lh_slab_want, name, strlen(name) + 1);
	{
		struct ust_bpfload l;

		ret = ust_bpfload_begin(&l, skel->obj, false);
		if (!ret)
			ret = ust_lh_slab_skel__load(skel);
		ret = ust_bpfload_end(&l, ret, "the slab-cache finder", NULL, err, errsz);
		if (ret) {
			ust_lh_slab_skel__destroy(skel);
			return ret;
		}
	}
	ret = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ust_lh_slab_find), &run);
	if (ret) {
		ret = ret < 0 ? ret : -errno;
		snprintf(err, errsz, "running the BPF walk of the kernel's slab caches: %s",
			 strerror(-ret));
	} else if (!skel->bss->ust_lh_slab_seen) {
		snprintf(err, errsz, "the kernel's list of slab caches (slab_caches) is not in /proc/kallsyms");
		ret = -ENOENT;
	} else if (!skel->bss->ust_lh_slab_found) {
		snprintf(err, errsz, "not among the kernel's %u slab caches under its own name (merged into another cache?)",
			 skel->bss->ust_lh_slab_seen);
		ret = -ENOENT;
	} else {
		*addr = skel->bss->ust_lh_slab_found;
	}
	ust_lh_slab_skel__destroy(skel);
	return ret;
}

#else

int ust_lh_slab_addr(const char *name, uint64_t *addr, char *err, size_t errsz)
{
	(void)name;
	*addr = 0;
	snprintf(err, errsz, "ustitch was built without BPF");
	return -ENOTSUP;
}

#endif
