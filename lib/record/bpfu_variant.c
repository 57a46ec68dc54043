// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfu_variant: which build of bpf/bpfu.bpf.c the running kernel
 * takes, and opening it.
 *
 * kfuncs are not a stable ABI.  bpf_task_work_schedule_resume_impl()
 * came with 6.18 taking (task, tw, map, callback, void *aux__prog); 6.19
 * made its last argument a struct bpf_prog_aux * and added
 * bpf_task_work_schedule_resume(task, tw, map, callback), whose aux the
 * verifier supplies.  libbpf refuses a whole object whose extern kfunc has
 * another prototype than the kernel's (weak or not), so each prototype
 * has its object, and the kernel's BTF picks one.  Each variant is opened
 * through the one skeleton (ust_bpfu.skel.h, the cfi/tw0 build): the
 * others contribute only their ELF bytes, and bpf/skel-same.sh made sure
 * at build time that they have its maps, programs and globals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfu_variant.h"

#ifdef UST_HAVE_BPF
#include <linux/types.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* libbpf 1.1 skeletons may name these without defining them. */
typedef __u32 u32;
typedef __u64 u64;
/* Of the variants' skeletons only the ELF bytes are used. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ust_bpfu.skel.h"
#include "ust_bpfu_cfi_tw1.h"
#include "ust_bpfu_cfi_tw2.h"
#include "ust_bpfu_fp_tw0.h"
#include "ust_bpfu_fp_tw1.h"
#include "ust_bpfu_fp_tw2.h"
#pragma GCC diagnostic pop

/* The FUNC_PROTO of kfunc @name in @btf, or NULL. */
static const struct btf_type *ust_bpfu_variant_proto(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	const struct btf_type *t;

	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, (__u32)id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	return t && btf_is_func_proto(t) ? t : NULL;
}

/* Is argument @i of @proto a void *? */
static bool ust_bpfu_variant_void_ptr(const struct btf *btf, const struct btf_type *proto, int i)
{
	const struct btf_param *p = btf_params(proto) + i;
	const struct btf_type *t = btf__type_by_id(btf, p->type);

	while (t && (btf_is_typedef(t) || btf_is_const(t) || btf_is_volatile(t)))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_ptr(t) && t->type == 0;
}

enum ust_bpfu_tw ust_bpfu_variant_tw(char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *p;
	enum ust_bpfu_tw tw = UST_BPFU_TW_NONE;

	if (!btf) {
		if (why)
			snprintf(why, len, "no kernel BTF to look its task_work kfuncs up in");
		return tw;
	}
	p = ust_bpfu_variant_proto(btf, "bpf_task_work_schedule_resume");
	if (p && btf_vlen(p) == 4) {
		tw = UST_BPFU_TW_619;
	} else {
		p = ust_bpfu_variant_proto(btf, "bpf_task_work_schedule_resume_impl");
		if (p && btf_vlen(p) == 5 && ust_bpfu_variant_void_ptr(btf, p, 4))
			tw = UST_BPFU_TW_618;
		else if (why && p)
			snprintf(why, len, "bpf_task_work_schedule_resume_impl has a prototype ustitch does not know");
		else if (why)
			snprintf(why, len, "the kernel has no BPF task_work kfuncs (they came with 6.18)");
	}
	btf__free(btf);
	return tw;
}

bool ust_bpfu_variant_faultable(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool yes;

	if (!btf)
		return false;
	yes = btf__find_by_name_kind(btf, "tracepoint_ext", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	return yes;
}

struct ust_bpfu_skel *ust_bpfu_variant_open(bool cfi, enum ust_bpfu_tw tw)
{
	struct ust_bpfu_skel *s;
	const void *data = NULL;
	size_t sz = 0;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	err = ust_bpfu_skel__create_skeleton(s);
	if (err)
		goto fail;
	if (cfi && tw == UST_BPFU_TW_618)
		data = ust_bpfu_cfi_tw1__elf_bytes(&sz);
	else if (cfi && tw == UST_BPFU_TW_619)
		data = ust_bpfu_cfi_tw2__elf_bytes(&sz);
	else if (!cfi && tw == UST_BPFU_TW_NONE)
		data = ust_bpfu_fp_tw0__elf_bytes(&sz);
	else if (!cfi && tw == UST_BPFU_TW_618)
		data = ust_bpfu_fp_tw1__elf_bytes(&sz);
	else if (!cfi && tw == UST_BPFU_TW_619)
		data = ust_bpfu_fp_tw2__elf_bytes(&sz);
	if (data) {	/* else the skeleton's own: cfi/tw0 */
		s->skeleton->data = (void *)data;
		s->skeleton->data_sz = sz;
	}
	err = bpf_object__open_skeleton(s->skeleton, NULL);
	if (err)
		goto fail;
	return s;
fail:
	ust_bpfu_skel__destroy(s);
	errno = err < 0 ? -err : ENOMEM;
	return NULL;
}

#else /* !UST_HAVE_BPF */

enum ust_bpfu_tw ust_bpfu_variant_tw(char *why, size_t len)
{
	if (why)
		snprintf(why, len, "ustitch was built without BPF");
	return UST_BPFU_TW_NONE;
}

bool ust_bpfu_variant_faultable(void)
{
	return false;
}

struct ust_bpfu_skel *ust_bpfu_variant_open(bool cfi, enum ust_bpfu_tw tw)
{
	(void)cfi, (void)tw;
	errno = EOPNOTSUPP;
	return NULL;
}

#endif /* UST_HAVE_BPF */

const char *ust_bpfu_variant_name(bool cfi, enum ust_bpfu_tw tw)
{
	static const char *const names[2][3] = {
		{ "frame pointers", "frame pointers + task_work, 6.18 kfunc", "frame pointers + task_work" },
		{ "CFI", "CFI + task_work, 6.18 kfunc", "CFI + task_work" },
	};

	return names[cfi][tw <= UST_BPFU_TW_619 ? tw : 0];
}
