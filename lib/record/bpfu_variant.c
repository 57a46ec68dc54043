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
#include <sys/stat.h>

#include "ustitch/hmap.h"
#include "bpfu_variant.h"
#include "kbtf.h"

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
	const struct btf *btf = ust_kbtf();
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
	return tw;
}

bool ust_bpfu_variant_faultable(void)
{
	const struct btf *btf = ust_kbtf();

	return btf && btf__find_by_name_kind(btf, "tracepoint_ext", BTF_KIND_STRUCT) > 0;
}

/* The ELF bytes of variant (@cfi, @tw); NULL: the skeleton's own, cfi/tw0. */
static const void *ust_bpfu_variant_bytes(bool cfi, enum ust_bpfu_tw tw, size_t *sz)
{
	if (cfi && tw == UST_BPFU_TW_618)
		return ust_bpfu_cfi_tw1__elf_bytes(sz);
	if (cfi && tw == UST_BPFU_TW_619)
		return ust_bpfu_cfi_tw2__elf_bytes(sz);
	if (!cfi && tw == UST_BPFU_TW_NONE)
		return ust_bpfu_fp_tw0__elf_bytes(sz);
	if (!cfi && tw == UST_BPFU_TW_618)
		return ust_bpfu_fp_tw1__elf_bytes(sz);
	if (!cfi && tw == UST_BPFU_TW_619)
		return ust_bpfu_fp_tw2__elf_bytes(sz);
	return NULL;
}

/*
 * "BOOT_ID VARIANT-HASH" of a refusal: the kernel cannot change without a
 * reboot, nor the object without its bytes.  "" when there is no boot id.
 */
static void ust_bpfu_variant_key(bool cfi, enum ust_bpfu_tw tw, char *key, size_t len)
{
	char boot[64] = "";
	const void *data;
	size_t sz = 0;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	key[0] = '\0';
	if (!f)
		return;
	if (!fgets(boot, sizeof(boot), f))
		boot[0] = '\0';
	fclose(f);
	boot[strcspn(boot, "\n")] = '\0';
	if (!boot[0])
		return;
	data = ust_bpfu_variant_bytes(cfi, tw, &sz);
	if (!data)
		data = ust_bpfu_skel__elf_bytes(&sz);
	snprintf(key, len, "%s %016llx", boot, (unsigned long long)ust_hmap_bytes(data, sz));
}

/* The refusals file, in $USTITCH_RUN_DIR or /run/ustitch; NULL: none (set empty). */
static const char *refused_file(char *buf, size_t len, const char **dir)
{
	const char *env = getenv(UST_BPFU_RUN_DIR_ENV);

	*dir = env ? env : UST_BPFU_RUN_DIR;
	if (!**dir)
		return NULL;
	if ((size_t)snprintf(buf, len, "%s/" UST_BPFU_REFUSED_NAME, *dir) >= len)
		return NULL;
	return buf;
}

bool ust_bpfu_variant_refused(bool cfi, enum ust_bpfu_tw tw, char *why, size_t len)
{
	char key[128], line[1024], path[512];
	const char *file, *dir;
	size_t kl;
	bool yes = false;
	FILE *f;

	/* No file, nothing remembered: no hashing of the object (a kernel that takes it). */
	file = refused_file(path, sizeof(path), &dir);
	f = file ? fopen(file, "re") : NULL;
	if (!f)
		return false;
	ust_bpfu_variant_key(cfi, tw, key, sizeof(key));
	kl = strlen(key);
	if (!kl) {
		fclose(f);
		return false;
	}
	while (!yes && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || line[kl] != ' ')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(why, len, "%s (refused when first loaded this boot, as %s remembers; ustitch probe loads it again)",
			 line + kl + 1, file);
		yes = true;
	}
	fclose(f);
	return yes;
}

void ust_bpfu_variant_remember_refused(bool cfi, enum ust_bpfu_tw tw, const char *why)
{
	char key[128], one[900], path[512];
	const char *file, *dir;
	FILE *f;

	ust_bpfu_variant_key(cfi, tw, key, sizeof(key));
	if (!key[0])
		return;
	/* The reason without its verifier log's path: that file is temporary. */
	snprintf(one, sizeof(one), "%.*s", (int)strcspn(why, "\n"), why);
	if (strstr(one, " (verifier log:"))
		*strstr(one, " (verifier log:") = '\0';
	/* Best effort: without /run, each recording asks the kernel again. */
	file = refused_file(path, sizeof(path), &dir);
	if (!file || (mkdir(dir, 0755) && errno != EEXIST))
		return;
	f = fopen(file, "ae");
	if (!f)
		return;
	fprintf(f, "%s %s\n", key, one);
	fclose(f);
}

struct ust_bpfu_skel *ust_bpfu_variant_open(bool cfi, enum ust_bpfu_tw tw)
{
	struct ust_bpfu_skel *s;
	const void *data;
	size_t sz = 0;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	err = ust_bpfu_skel__create_skeleton(s);
	if (err)
		goto fail;
	data = ust_bpfu_variant_bytes(cfi, tw, &sz);
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

bool ust_bpfu_variant_refused(bool cfi, enum ust_bpfu_tw tw, char *why, size_t len)
{
	(void)cfi, (void)tw, (void)why, (void)len;
	return false;
}

void ust_bpfu_variant_remember_refused(bool cfi, enum ust_bpfu_tw tw, const char *why)
{
	(void)cfi, (void)tw, (void)why;
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
