// SPDX-License-Identifier: LGPL-2.1
/*
 * lock_held() resolution (against described kernels: this sandbox's, one
 * with tracing programs), splitting into the ftrace part and the BPF
 * graph, the graphs themselves, and the tracking families.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ustitch/lh.h"
#include "ustitch/lh_track.h"

static const char page_alloc_fmt[] =
	"name: mm_page_alloc\n"
	"ID: 653\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long gfp_flags;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int migratetype;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:36;\tsize:16;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:52;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long ips[4];\toffset:56;\tsize:32;\tsigned:0;\n"
	"\n"
	"print fmt: \"page=%p\", REC->pfn\n";

struct fake {
	bool no_data;
};

static bool fake_ksym(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	if (!strcmp(name, "cgroup_mutex")) {
		*addr = 0xffffffff83000100ULL;
		return true;
	}
	return false;
}

static bool fake_slab(void *ctx, const char *name)
{
	(void)ctx;
	return !strcmp(name, "dentry");
}

static bool yes_member(void *ctx, const char *type, const char *member)
{
	(void)ctx;
	(void)type;
	(void)member;
	return true;
}

static bool no_rcu_member(void *ctx, const char *type, const char *member)
{
	(void)ctx;
	return strcmp(type, "task_struct") || strcmp(member, "rcu_read_lock_nesting");
}

static bool yes_tp(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return true;
}

static bool no_tp(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return false;
}

/* This sandbox: no tracing programs, kallsyms without data. */
static const struct ust_lh_env sandbox = {
	.ksym = fake_ksym, .slab = fake_slab, .btf_member = yes_member, .tracepoint = yes_tp,
	.tracing = false, .no_tracing_why = "refused by this kernel (EPERM before the verifier)",
	.kallsyms_no_data = true,
};

/* A normal kernel: tracing programs, every family. */
static const struct ust_lh_env normal = {
	.ksym = fake_ksym, .slab = fake_slab, .btf_member = yes_member, .tracepoint = yes_tp,
	.tracing = true, .families = UST_LH_FAM__ALL,
};

/* Tracing programs, but no data symbols in kallsyms to tell contexts apart. */
static const struct ust_lh_env no_spin_ctx = {
	.ksym = fake_ksym, .slab = fake_slab, .btf_member = yes_member, .tracepoint = yes_tp,
	.tracing = true, .families = UST_LH_FAM__ALL, .no_spin_why = "no preempt_count()",
	.no_kmem_cache = true,
};

static const struct ust_lh_env no_preempt_rcu = {
	.ksym = fake_ksym, .slab = fake_slab, .btf_member = no_rcu_member, .tracepoint = no_tp,
};

static int resolve(const char *src, const struct ust_lh_env *env, struct ust_lh_expr *e,
		   char *err, size_t len)
{
	if (ust_lh_parse(src, e, err, len))
		fail_msg("'%s': %s", src, err);
	return ust_lh_resolve(e, env, err, len);
}

static const struct {
	const char *src;
	const struct ust_lh_env *env;
	const char *err;	/* NULL: resolves */
} resolutions[] = {
	{ "lock_held(mmap_lock)", &sandbox, NULL },
	{ "lock_held(mmap_lock:R) || lock_held_write(mmap_lock)", &sandbox, NULL },
	{ "lock_held(rcu) && lock_held(rcu-trace:R)", &sandbox, NULL },
	{ "lock_held(0xffff888012345678)", &sandbox, NULL },
	{ "lock_held_write(0xffff888012345678)", &sandbox, NULL },
	{ "lock_held(&cgroup_mutex)", &sandbox, NULL },
	{ "lock_held(cgroup_mutex:W)", &sandbox, NULL },
	{ "lock_held(mutex)", &sandbox,
	  "lock_held(mutex): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held(rcu) || lock_held_read(rwsem)", &sandbox,
	  "lock_held_read(rwsem): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held(&dentry)", &sandbox,
	  "lock_held(&dentry): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held(rcu:W)", &sandbox,
	  "lock_held(rcu:W): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held(srcu)", &sandbox,
	  "lock_held(srcu): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held(siglock)", &sandbox,
	  "lock_held(siglock): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held_read(0xffff888012345678)", &sandbox,
	  "lock_held_read(0xffff888012345678): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions): tracing programs refused by this kernel (EPERM before the verifier)" },
	{ "lock_held(&nosuch)", &sandbox,
	  "lock_held(&nosuch): 'nosuch' is neither a symbol in /proc/kallsyms (this kernel's kallsyms lists functions only: CONFIG_KALLSYMS_ALL is off) nor a slab cache" },
	{ "lock_held(nosuch)", &sandbox,
	  "lock_held(nosuch): symbol 'nosuch' is not in /proc/kallsyms (this kernel's kallsyms lists functions only: CONFIG_KALLSYMS_ALL is off)" },
	{ "lock_held(nosuch)", &normal, "lock_held(nosuch): symbol 'nosuch' is not in /proc/kallsyms" },
	{ "lock_held(0x1000)", &sandbox, "lock_held(0x1000): 0x1000 is not a kernel address" },
	{ "lock_held(rcu-trace:W)", &sandbox,
	  "lock_held(rcu-trace:W): Tasks Trace RCU grace-period waits are not tracked: only the read side (rcu-trace or rcu-trace:R)" },
	{ "lock_held(pcpu-sem:R)", &normal,
	  "lock_held(pcpu-sem:R): the read side of a percpu_rw_semaphore is inline (no function to hook): only pcpu-sem:W" },
	{ "lock_held(rcu)", &no_preempt_rcu,
	  "lock_held(rcu): needs current->rcu_read_lock_nesting: this kernel has no task_struct.rcu_read_lock_nesting (CONFIG_PREEMPT_RCU is off)" },
	{ "lock_held(mmap_lock)", &no_preempt_rcu,
	  "lock_held(mmap_lock): the read side needs the mmap_lock:mmap_lock_acquire_returned and mmap_lock:mmap_lock_released tracepoints, which this kernel lacks" },
	{ "lock_held(mmap_lock:W)", &no_preempt_rcu, NULL },
	/* A normal kernel. */
	{ "lock_held(mutex) || lock_held(rwsem:R) || lock_held(srcu) || lock_held(rcu:W)", &normal, NULL },
	{ "lock_held(spinlock) || lock_held(siglock)", &normal, NULL },
	{ "lock_held(siglock)", &no_spin_ctx,
	  "lock_held(siglock): needs held-lock tracking (fexit on the lock functions, fentry on the unlock functions) of spinlock locks: no preempt_count()" },
	{ "lock_held(mutex)", &no_spin_ctx, NULL },
	{ "lock_held(&dentry)", &no_spin_ctx,
	  "lock_held(&dentry): needs the bpf_get_kmem_cache kfunc (Linux 6.13+), or page_offset_base, vmemmap_base and max_pfn in /proc/kallsyms, to tell the slab cache of a lock: this kernel has neither" },
	{ "lock_held(&dentry) && !lock_held(&dentry:R)", &normal, NULL },
	{ "lock_held(rq_lock)", &normal,
	  "lock_held(rq_lock): needs the addresses of the run-queue locks, which ustitch does not find yet" },
};

static void test_resolve(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(resolutions) / sizeof(resolutions[0]); i++) {
		struct ust_lh_expr e;
		char err[512] = "";
		int r = resolve(resolutions[i].src, resolutions[i].env, &e, err, sizeof(err));

		if (!resolutions[i].err && r)
			fail_msg("'%s': %s", resolutions[i].src, err);
		if (resolutions[i].err && !r)
			fail_msg("'%s' resolved", resolutions[i].src);
		if (resolutions[i].err && r != -EOPNOTSUPP)
			fail_msg("'%s': returned %d, expected -EOPNOTSUPP", resolutions[i].src, r);
		if (resolutions[i].err && strcmp(err, resolutions[i].err))
			fail_msg("'%s': got \"%s\", expected \"%s\"", resolutions[i].src, err,
				 resolutions[i].err);
		ust_lh_expr_free(&e);
	}
}

static const struct {
	const char *src;
	bool bpf_all;
	const char *ftrace;	/* NULL: none */
	const char *graph;	/* or "!error text" */
} compiles[] = {
	{ "gfp_flags & 0x400 && lock_held(mmap_lock:W)", false, "gfp_flags & 0x400",
	  "0: mmap_lock:W leaf 0 ? accept : reject\n" },
	{ "gfp_flags & 0x400 && lock_held(mmap_lock:W)", true, "gfp_flags & 0x400",
	  "0: field@24/8 & 1024 ? 1 : reject\n"
	  "1: mmap_lock:W leaf 0 ? accept : reject\n" },
	{ "gfp_flags & 0x400 || lock_held(rcu)", false, NULL,
	  "0: field@24/8 & 1024 ? accept : 1\n"
	  "1: rcu leaf 0 ? accept : reject\n" },
	{ "!lock_held(rcu) && order > 2", false, "order > 2",
	  "0: rcu leaf 0 negated ? reject : accept\n" },
	{ "(order > 2 || order == 0) && comm == \"x\" && lock_held_read(mmap_lock)", true,
	  "(order > 2 || order == 0) && comm == \"x\"",
	  "0: field@16/4 > 2 ? 2 : 1\n"
	  "1: field@16/4 == 0 ? 2 : reject\n"
	  "2: mmap_lock:R leaf 0 ? accept : reject\n" },
	{ "lock_held(&cgroup_mutex) || lock_held(0xffff888012345678:W)", false, NULL,
	  "0: owner 0xffffffff83000100 leaf 0 ? accept : 1\n"
	  "1: owner 0xffff888012345678:W leaf 1 ? accept : reject\n" },
	{ "migratetype < -1 || common_pid == 42 || !(lock_held(rcu) && lock_held(rcu-trace))", false, NULL,
	  "0: field@32/4s < -1 ? accept : 1\n"
	  "1: pid == 42 ? accept : 2\n"
	  "2: rcu leaf 0 negated ? 3 : accept\n"
	  "3: rcu-trace leaf 1 negated ? reject : accept\n" },
	{ "comm == \"x\" || lock_held(rcu)", false, NULL,
	  "!column 1: 'comm' is a string: BPF compares numbers only; keep the term outside the part with lock_held() (as its own && term it stays an ftrace filter)" },
	{ "lock_held(rcu) || name ~ \"a*\"", false, NULL,
	  "!column 19: 'name ~ ...': BPF cannot evaluate glob matches; keep the term outside the part with lock_held() (as its own && term it stays an ftrace filter)" },
	{ "lock_held(rcu) || ips == 1", false, NULL,
	  "!column 19: 'ips' is an array: BPF compares numbers only; keep the term outside the part with lock_held() (as its own && term it stays an ftrace filter)" },
	{ "nosuch > 1 || lock_held(rcu)", false, NULL,
	  "!column 1: event mm_page_alloc has no field 'nosuch'" },
	{ "common_flags > 1 || lock_held(rcu)", false, NULL,
	  "!column 1: 'common_flags': of the common fields BPF can test only common_pid" },
	{ "order > two || lock_held(rcu)", false, NULL, "!column 1: 'two' is not a number" },
	/* Non-BPF ftrace terms stay ftrace only, even with bpf_all. */
	{ "comm == \"x\" && lock_held(rcu)", true, "comm == \"x\"",
	  "0: rcu leaf 0 ? accept : reject\n" },
};

static void test_compile(void **state)
{
	struct ust_lh_format fmt;
	size_t i;

	(void)state;
	assert_int_equal(ust_lh_format_parse(page_alloc_fmt, &fmt), 0);
	assert_int_equal(fmt.id, 653);
	assert_string_equal(fmt.name, "mm_page_alloc");
	for (i = 0; i < sizeof(compiles) / sizeof(compiles[0]); i++) {
		struct ust_lh_compiled c;
		struct ust_lh_expr e;
		char err[512] = "", *dump;
		int r;

		if (resolve(compiles[i].src, &sandbox, &e, err, sizeof(err)))
			fail_msg("'%s': %s", compiles[i].src, err);
		r = ust_lh_compile(&e, &fmt, compiles[i].bpf_all, &c, err, sizeof(err));
		if (compiles[i].graph[0] == '!') {
			if (!r)
				fail_msg("'%s' compiled", compiles[i].src);
			if (r != (strstr(err, "too complex") || strstr(err, ": more than ") ? -E2BIG :
				  -EINVAL))
				fail_msg("'%s': returned %d", compiles[i].src, r);
			if (strcmp(err, compiles[i].graph + 1))
				fail_msg("'%s': got \"%s\", expected \"%s\"", compiles[i].src, err,
					 compiles[i].graph + 1);
			ust_lh_expr_free(&e);
			continue;
		}
		if (r)
			fail_msg("'%s': %s", compiles[i].src, err);
		if (!compiles[i].ftrace != !c.ftrace ||
		    (c.ftrace && strcmp(c.ftrace, compiles[i].ftrace)))
			fail_msg("'%s': ftrace part \"%s\", expected \"%s\"", compiles[i].src,
				 c.ftrace ? c.ftrace : "(none)",
				 compiles[i].ftrace ? compiles[i].ftrace : "(none)");
		dump = ust_filter_dump(&c.graph);
		if (strcmp(dump, compiles[i].graph))
			fail_msg("'%s':\n%s\nexpected:\n%s", compiles[i].src, dump, compiles[i].graph);
		free(dump);
		ust_lh_compiled_free(&c);
		ust_lh_expr_free(&e);
	}
	ust_lh_format_free(&fmt);
}

static void test_compile_tracked(void **state)
{
	struct ust_lh_compiled c;
	struct ust_lh_expr e;
	char err[512], *dump;

	(void)state;
	assert_int_equal(resolve("lock_held(mutex) || lock_held(srcu) || lock_held(rcu:W)", &normal,
				 &e, err, sizeof(err)), 0);
	assert_int_equal(ust_lh_compile(&e, NULL, false, &c, err, sizeof(err)), 0);
	dump = ust_filter_dump(&c.graph);
	assert_string_equal(dump,
			    "0: tracked 0x1 leaf 0 ? accept : 1\n"
			    "1: tracked 0x8:R leaf 1 ? accept : 2\n"
			    "2: tracked 0xa:W leaf 1 ? accept : 3\n"
			    "3: tracked 0x9:W leaf 2 ? accept : reject\n");
	assert_int_equal(c.families, UST_LH_FAM_MUTEX | UST_LH_FAM_SRCU | UST_LH_FAM_SRCU_GP |
			 UST_LH_FAM_RCU_GP);
	assert_string_equal(c.leaf_text[1], "lock_held(srcu)");
	free(dump);
	ust_lh_compiled_free(&c);
	ust_lh_expr_free(&e);
}

static void test_too_complex(void **state)
{
	char src[4096] = "lock_held(rcu)", err[512];
	struct ust_lh_compiled c;
	struct ust_lh_expr e;
	int i;

	(void)state;
	for (i = 0; i < 32; i++)
		strcat(src, " || common_pid == 1");
	assert_int_equal(resolve(src, &sandbox, &e, err, sizeof(err)), 0);
	assert_int_equal(ust_lh_compile(&e, NULL, false, &c, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "column 1: too complex: more than 32 tests for BPF to evaluate");
	ust_lh_expr_free(&e);
}

/* ---- tracking families ---------------------------------------------- */

static bool all_but_read_unlock(void *ctx, const char *f)
{
	(void)ctx;
	return strcmp(f, "_raw_read_unlock_irqrestore") != 0;
}

static bool only_mutex_lock(void *ctx, const char *f)
{
	(void)ctx;
	return !strcmp(f, "mutex_lock") || !strcmp(f, "mutex_unlock");
}

static void test_track_families(void **state)
{
	char why[1024];
	unsigned int av;
	const char *names[256];
	char buf[256][64];
	int n;

	(void)state;
	/* A missing release function disables its family. */
	av = ust_lh_track_available(all_but_read_unlock, NULL, why, sizeof(why));
	assert_int_equal(av, UST_LH_FAM__ALL & ~UST_LH_FAM_RWLOCK);
	assert_string_equal(why, "rwlock: no _raw_read_unlock_irqrestore");
	av = ust_lh_track_available(only_mutex_lock, NULL, why, sizeof(why));
	assert_int_equal(av, UST_LH_FAM_MUTEX);
	n = ust_lh_track_progs(UST_LH_FAM_MUTEX, only_mutex_lock, NULL, names, buf, 256);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "ust_lh_x_mutex_lock");
	assert_string_equal(names[1], "ust_lh_e_mutex_unlock");
	n = ust_lh_track_progs(UST_LH_FAM_RCU_GP, NULL, NULL, names, buf, 256);
	assert_int_equal(n, 6);
	assert_string_equal(names[0], "ust_lh_x_synchronize_rcu");
	assert_string_equal(names[1], "ust_lh_e_synchronize_rcu");
	assert_int_equal(ust_lh_track_progs(UST_LH_FAM__ALL, NULL, NULL, names, buf, 3), -ENOSPC);
}

/* Every program the table names exists in the tracking object. */
static void test_track_object(void **state)
{
	const char *obj = getenv("UST_LH_TRACK_OBJ"), *names[256];
	char buf[256][64], *text;
	FILE *f;
	long len;
	int n, i;

	(void)state;
	if (!obj || !obj[0])
		skip();
	f = fopen(obj, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc((size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	n = ust_lh_track_progs(UST_LH_FAM__ALL, NULL, NULL, names, buf, 256);
	assert_true(n > 50);
	for (i = 0; i < n; i++) {
		size_t l = strlen(names[i]) + 1;
		bool found = false;
		long k;

		/* The symbol table holds the name NUL-terminated. */
		for (k = 0; k + (long)l <= len && !found; k++)
			found = !memcmp(text + k, names[i], l);
		if (!found)
			fail_msg("%s is not in %s", names[i], obj);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_compile),
		cmocka_unit_test(test_compile_tracked),
		cmocka_unit_test(test_too_complex),
		cmocka_unit_test(test_track_families),
		cmocka_unit_test(test_track_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
