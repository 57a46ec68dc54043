// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_env_live: what the running kernel offers lock_held(), asked of
 * the kernel itself: /proc/kallsyms, /sys/kernel/slab (or /proc/slabinfo),
 * its BTF, tracefs, and an attempt to load a tracing program (ust_probe).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#ifdef UST_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

#include "ustitch/lh_env.h"
#include "ustitch/lh_track.h"
#include "ustitch/probe.h"
#include "kbtf.h"

struct live {
	struct ust_lh_env env;
	char why[UST_PROBE_REASON_MAX];
#ifdef UST_HAVE_LIBBPF
	const struct btf *btf;
#endif
};

static bool live_ksym(void *ctx, const char *name, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long a;
	bool found = false;

	(void)ctx;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3 || strcmp(sym, name))
			continue;
		/* Locks are data: a function of that name is not one. */
		if (type == 'T' || type == 't' || type == 'W' || type == 'w')
			continue;
		*addr = a;
		found = a != 0;	/* 0: kptr_restrict hides addresses */
	}
	fclose(f);
	return found;
}

/* Only functions listed (no CONFIG_KALLSYMS_ALL): a few section markers. */
static bool kallsyms_no_data(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], type;
	unsigned long long a;
	long data = 0;

	if (!f)
		return false;
	while (data < 1000 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c", &a, &type) == 2 && strchr("dDbB", type))
			data++;
	fclose(f);
	return data < 1000;
}

static bool live_slab(void *ctx, const char *name)
{
	char path[512], line[512];
	bool found = false;
	size_t n;
	FILE *f;

	(void)ctx;
	if (!name || !name[0])
		return false;
	n = strlen(name);
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s", name);
	if (!strchr(name, '/') && !access(path, F_OK))
		return true;
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, n) && line[n] == ' ';
	fclose(f);
	return found;
}

static bool live_tracepoint(void *ctx, const char *name)
{
	const char *dir = tracefs_tracing_dir();
	char path[1024];

	(void)ctx;
	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s", dir, name);
	return !access(path, F_OK);
}

#ifdef UST_HAVE_LIBBPF
/* Members of anonymous structs and unions count as the type's own. */
static bool btf_has_member(const struct btf *btf, const struct btf_type *t, const char *member,
			   int depth)
{
	const struct btf_member *m = btf_members(t);
	int i;

	for (i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, m[i].name_off);
		const struct btf_type *mt;

		if (name && !strcmp(name, member))
			return true;
		if ((name && name[0]) || depth > 4)
			continue;
		mt = btf__type_by_id(btf, m[i].type);
		while (mt && (btf_is_mod(mt) || btf_is_typedef(mt)))
			mt = btf__type_by_id(btf, mt->type);
		if (mt && btf_is_composite(mt) && btf_has_member(btf, mt, member, depth + 1))
			return true;
	}
	return false;
}

static bool live_btf_member(void *ctx, const char *type, const char *member)
{
	struct live *l = ctx;
	int id;

	if (!l->btf)
		return true;	/* no BTF: let the load tell */
	id = btf__find_by_name_kind(l->btf, type, BTF_KIND_STRUCT);
	return id >= 0 && btf_has_member(l->btf, btf__type_by_id(l->btf, id), member, 0);
}

static bool live_func(void *ctx, const char *func)
{
	struct live *l = ctx;

	return l->btf && btf__find_by_name_kind(l->btf, func, BTF_KIND_FUNC) >= 0;
}
#endif

/*
 * The spinlock hooks read this CPU's preempt_count() at addresses libbpf
 * takes from kallsyms (bpf/lockheld_kern.h): without them every context
 * would look like the task's, and locks an interrupt left behind would
 * count as held.
 */
static const char *no_spin_ctx(struct live *l)
{
	uint64_t a;

	if (live_ksym(l, "__per_cpu_offset", &a) &&
	    (live_ksym(l, "__preempt_count", &a) || live_ksym(l, "pcpu_hot", &a)))
		return NULL;
	return "the spinlock hooks read preempt_count() through data symbols in /proc/kallsyms (__per_cpu_offset, and __preempt_count or pcpu_hot), which this kernel does not list";
}

static bool live_slab_addr(void *ctx, const char *name, uint64_t *addr, char *why,
			   size_t whylen)
{
	(void)ctx;
	return ust_lh_slab_addr(name, addr, why, whylen) == 0;
}

/* The layout variables the hooks' own address-to-slab walk reads. */
static bool slab_walk(struct live *l)
{
	uint64_t a;

	return live_ksym(l, "page_offset_base", &a) && live_ksym(l, "vmemmap_base", &a) &&
	       live_ksym(l, "max_pfn", &a);
}

const struct ust_lh_env *ust_lh_env_live(void)
{
	static struct live l;
	static bool done;

	if (done)
		return &l.env;
	done = true;
	l.env.ctx = &l;
	l.env.ksym = live_ksym;
	l.env.slab = live_slab;
	l.env.slab_addr = live_slab_addr;
	l.env.tracepoint = live_tracepoint;
	l.env.kallsyms_no_data = kallsyms_no_data();
	l.env.tracing = ust_probe_one(UST_PROBE_BPF_TRACING, l.why, sizeof(l.why));
	l.env.no_tracing_why = l.why;
#ifdef UST_HAVE_LIBBPF
	l.btf = ust_kbtf();
	l.env.btf_member = live_btf_member;
	if (l.btf) {
		l.env.families = ust_lh_track_available(live_func, &l, NULL, 0);
		l.env.no_kmem_cache = !live_func(&l, "bpf_get_kmem_cache") && !slab_walk(&l);
	}
	l.env.no_spin_why = no_spin_ctx(&l);
#endif
	return &l.env;
}
