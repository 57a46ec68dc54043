// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_af_bpf_setup: the --addr-filter ranges into ust_af_ranges, and the
 * start/stop switches as uprobes.  A uprobe is placed by (inode, file
 * offset), like the ranges: it fires in every process that maps the file,
 * at any address, including processes started later.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"

#ifdef UST_HAVE_BPF

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lockheld_abi.h"

int ust_af_bpf_setup(struct ust_lh_bpf *b, const struct ust_af *af, char *err, size_t errlen)
{
	struct bpf_object *obj = ust_lh_bpf_obj(b);
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "ust_af_ranges");
	char what[512];
	int i, ret;

	if (!map) {
		snprintf(err, errlen, "address filters: no ust_af_ranges map in the BPF object");
		return -1;
	}
	for (i = 0; i < af->nr && i < UST_AF_MAX_RANGES; i++) {
		const struct ust_af_range *r = &af->r[i];
		struct ust_af_krange g = {
			.start = r->start, .end = r->start + r->size, .ino = r->ino,
			.dev = r->kdev, .kernel = r->kernel,
		};
		struct bpf_program *p;
		__u32 key = (__u32)i;

		ret = bpf_map__update_elem(map, &key, sizeof(key), &g, sizeof(g), BPF_ANY);
		if (ret) {
			snprintf(err, errlen, "address filters: writing range %d: %s", i, strerror(-ret));
			return -1;
		}
		if (r->kernel || r->action == UST_AF_FILTER)
			continue;
		/* pid -1: every process; the offset is the file offset. */
		p = bpf_object__find_program_by_name(obj, r->action == UST_AF_START ?
						     "ust_af_start" : "ust_af_stop");
		ret = p ? ust_lh_bpf_keep_link(b, bpf_program__attach_uprobe(p, false, -1, r->path,
									    (size_t)r->start))
			: -ENOENT;
		if (ret) {
			ust_af_format(af, i, what, sizeof(what));
			snprintf(err, errlen, "--addr-filter '%s': placing its uprobe: %s", what,
				 strerror(-ret));
			return -1;
		}
	}
	return 0;
}

#else /* !UST_HAVE_BPF */

int ust_af_bpf_setup(struct ust_lh_bpf *b, const struct ust_af *af, char *err, size_t errlen)
{
	(void)b, (void)af;
	snprintf(err, errlen, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return -1;
}

#endif
