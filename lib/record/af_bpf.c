// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_af_bpf_check: whether this kernel can honour the ranges.
 * ust_af_bpf_setup: the --addr-filter ranges into a BPF object's
 * ust_af_ranges (bpf/addrfilter.bpf.h), and the start/stop switches as
 * probes.  A uprobe is placed by (inode, file offset), like the ranges: it
 * fires in every process that maps the file, at any address, including
 * processes started later.  A kernel: start/stop is a kprobe at the
 * address.  Both objects that filter (lockheld.bpf.c for tracepoint
 * events, bpfu.bpf.c for perf samples) carry the same maps and probe
 * programs and are set up here alike.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "addrfilter_abi.h"

/* BPF can attach kprobes: the kprobe PMU exists (what libbpf uses). */
static bool have_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe/type", F_OK);
}

int ust_af_bpf_check(const struct ust_af *af, int *bad, char *err, size_t errsz)
{
	int i;

	*bad = -1;
	if (af->nr > UST_AF_MAX_RANGES) {
		snprintf(err, errsz, "more than %d ranges", UST_AF_MAX_RANGES);
		return -E2BIG;
	}
	for (i = 0; i < af->nr; i++) {
		const struct ust_af_range *r = &af->r[i];

		/* A switch at a kernel address needs a probe there. */
		if (r->kernel && r->action != UST_AF_FILTER && !have_kprobes()) {
			*bad = i;
			snprintf(err, errsz, "start/stop at kernel addresses need kprobes: this kernel has none (no kprobe PMU in /sys/bus/event_source/devices)");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

#ifdef UST_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* A probe at range @r's start, running @p. */
static struct bpf_link *ust_af_probe(struct bpf_program *p, const struct ust_af_range *r)
{
	LIBBPF_OPTS(bpf_kprobe_opts, ko);

	if (!r->kernel)	/* pid -1: every process; the offset is the file offset */
		return bpf_program__attach_uprobe(p, false, -1, r->path, (size_t)r->start);
	/* No function name: the kprobe PMU takes the offset as the address. */
	ko.offset = (size_t)r->start;
	return bpf_program__attach_kprobe_opts(p, NULL, &ko);
}

int ust_af_bpf_setup(struct bpf_object *obj, ust_af_keep_fn keep, void *arg,
		     const struct ust_af *af, char *err, size_t errsz)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "ust_af_ranges");
	char what[512];
	int i, ret;

	if (!map) {
		snprintf(err, errsz, "address filters: no ust_af_ranges map in the BPF object");
		return -ENOENT;
	}
	for (i = 0; i < af->nr && i < UST_AF_MAX_RANGES; i++) {
		const struct ust_af_range *r = &af->r[i];
		struct ust_af_krange g = {
			.start = r->start, .end = r->start + r->size, .ino = r->ino,
			.dev = r->kdev, .kernel = r->kernel, .action = (__u16)r->action,
		};
		struct bpf_program *p;
		__u32 key = (__u32)i;

		ret = bpf_map__update_elem(map, &key, sizeof(key), &g, sizeof(g), BPF_ANY);
		if (ret) {
			snprintf(err, errsz, "address filters: writing range %d: %s", i, strerror(-ret));
			return ret;
		}
		if (r->action == UST_AF_FILTER)
			continue;
		p = bpf_object__find_program_by_name(obj, r->action == UST_AF_START ?
						     "ust_af_start" : "ust_af_stop");
		ret = p ? keep(arg, ust_af_probe(p, r)) : -ENOENT;
		if (ret) {
			ust_af_format(af, i, what, sizeof(what));
			snprintf(err, errsz, "--addr-filter '%s': placing its %s: %s", what,
				 r->kernel ? "kprobe" : "uprobe", strerror(-ret));
			return ret < 0 ? ret : -EINVAL;
		}
	}
	return 0;
}

#else /* !UST_HAVE_BPF */

int ust_af_bpf_setup(struct bpf_object *obj, ust_af_keep_fn keep, void *arg,
		     const struct ust_af *af, char *err, size_t errsz)
{
	(void)obj, (void)keep, (void)arg, (void)af;
	snprintf(err, errsz, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return -ENOTSUP;
}

#endif
