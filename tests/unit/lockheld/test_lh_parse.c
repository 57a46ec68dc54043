// SPDX-License-Identifier: LGPL-2.1
/*
 * lock_held() grammar: a table of valid expressions with the tree they
 * parse to, and of invalid ones with the exact error (column included).
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
#include "ustitch/sb.h"

static const char *const kinds[] = {
	[UST_LH_S_SYMBOL] = "sym", [UST_LH_S_ADDR] = "addr", [UST_LH_S_SLAB] = "slab",
	[UST_LH_S_AMP] = "amp", [UST_LH_S_MMAP_LOCK] = "mmap_lock", [UST_LH_S_SIGLOCK] = "siglock",
	[UST_LH_S_RQ_LOCK] = "rq_lock", [UST_LH_S_ZONE_LOCK] = "zone_lock", [UST_LH_S_RCU] = "rcu",
	[UST_LH_S_RCU_TRACE] = "rcu-trace", [UST_LH_S_SRCU] = "srcu", [UST_LH_S_TYPE] = "type",
};
static const char *const types[] = { "", "mutex", "spinlock", "rwsem", "rwlock", "rt-mutex",
				     "percpu-rwsem", "semaphore" };
static const char *const modes[] = { "", ":R", ":W" };
static const char *const ops[] = { "", "==", "!=", "<", "<=", ">", ">=", "&", "~" };

static void show(const struct ust_lh_expr *e, int n, struct ust_sb *sb)
{
	const struct ust_lh_node *nd = &e->nodes[n];
	const struct ust_lh_spec *s;

	switch (nd->kind) {
	case UST_LH_N_OR:
	case UST_LH_N_AND:
		ust_sb_printf(sb, "(%s ", nd->kind == UST_LH_N_OR ? "or" : "and");
		show(e, nd->a, sb);
		ust_sb_puts(sb, " ");
		show(e, nd->b, sb);
		ust_sb_puts(sb, ")");
		break;
	case UST_LH_N_NOT:
		ust_sb_puts(sb, "(not ");
		show(e, nd->a, sb);
		ust_sb_puts(sb, ")");
		break;
	case UST_LH_N_LOCK:
		s = &e->specs[nd->spec];
		ust_sb_printf(sb, "[%s", kinds[s->kind]);
		if (s->kind == UST_LH_S_TYPE)
			ust_sb_printf(sb, " %s", types[s->type]);
		if (s->name)
			ust_sb_printf(sb, " %s", s->name);
		if (s->kind == UST_LH_S_ADDR)
			ust_sb_printf(sb, " 0x%llx", (unsigned long long)s->addr);
		ust_sb_printf(sb, "%s]", modes[s->mode]);
		break;
	case UST_LH_N_TERM:
		ust_sb_printf(sb, "{%s %s %s%s%s}", nd->field, ops[nd->op], nd->quoted ? "\"" : "",
			      nd->value, nd->quoted ? "\"" : "");
		break;
	}
}

static const struct {
	const char *src, *tree;
} valid[] = {
	{ "lock_held(&cgroup_mutex)", "[amp cgroup_mutex]" },
	{ "lock_held(cgroup_mutex)", "[sym cgroup_mutex]" },
	{ "lock_held(0xffffffff82a0c4e0)", "[addr 0xffffffff82a0c4e0]" },
	{ "lock_held(&dentry)", "[amp dentry]" },
	{ "lock_held_read(&dentry)", "[amp dentry:R]" },
	{ "lock_held(mmap_lock)", "[mmap_lock]" },
	{ "lock_held_read(mmap_lock)", "[mmap_lock:R]" },
	{ "lock_held_shared(mmap_lock)", "[mmap_lock:R]" },
	{ "lock_held_write(mmap_lock)", "[mmap_lock:W]" },
	{ "lock_held_exclusive(mmap_lock)", "[mmap_lock:W]" },
	{ "lock_held(mmap_lock:W)", "[mmap_lock:W]" },
	{ "lock_held(&mmap_lock:R)", "[amp mmap_lock:R]" },
	{ "lock_held_read(mmap_lock:R)", "[mmap_lock:R]" },
	{ "lock_held(siglock)", "[siglock]" },
	{ "lock_held(rq_lock)", "[rq_lock]" },
	{ "lock_held(zone_lock)", "[zone_lock]" },
	{ "lock_held(rcu)", "[rcu]" },
	{ "lock_held(rcu:R)", "[rcu:R]" },
	{ "lock_held(rcu:W)", "[rcu:W]" },
	{ "lock_held(rcu-trace)", "[rcu-trace]" },
	{ "lock_held(srcu)", "[srcu]" },
	{ "lock_held(srcu:R)", "[srcu:R]" },
	{ "lock_held(srcu:W)", "[srcu:W]" },
	{ "lock_held(mutex)", "[type mutex]" },
	{ "lock_held(spinlock)", "[type spinlock]" },
	{ "lock_held(rwsem)", "[type rwsem]" },
	{ "lock_held(rwsem:R)", "[type rwsem:R]" },
	{ "lock_held(rwsem:W)", "[type rwsem:W]" },
	{ "lock_held(rwlock)", "[type rwlock]" },
	{ "lock_held(rwlock:R)", "[type rwlock:R]" },
	{ "lock_held(rwlock:W)", "[type rwlock:W]" },
	{ "lock_held(rt-mutex)", "[type rt-mutex]" },
	{ "lock_held(percpu-rwsem)", "[type percpu-rwsem]" },
	{ "lock_held(pcpu-sem:W)", "[type percpu-rwsem:W]" },
	{ "lock_held(semaphore)", "[type semaphore]" },
	{ "  lock_held( mutex )  ", "[type mutex]" },
	{ "!lock_held(mutex)", "(not [type mutex])" },
	{ "!!lock_held(mutex)", "(not (not [type mutex]))" },
	{ "lock_held(mutex) || lock_held(rwsem)", "(or [type mutex] [type rwsem])" },
	{ "lock_held(mutex) && lock_held(rwsem) || lock_held(rcu)",
	  "(or (and [type mutex] [type rwsem]) [rcu])" },
	{ "lock_held(mutex) && (lock_held(rwsem) || lock_held(rcu))",
	  "(and [type mutex] (or [type rwsem] [rcu]))" },
	{ "gfp_flags & 0x400 && lock_held(mutex)", "(and {gfp_flags & 0x400} [type mutex])" },
	{ "gfp_flags & 0x400 || lock_held(mutex)", "(or {gfp_flags & 0x400} [type mutex])" },
	{ "order > 2 && !(lock_held(mutex) || lock_held(rwsem))",
	  "(and {order > 2} (not (or [type mutex] [type rwsem])))" },
	{ "comm == \"bash\" && lock_held(rcu)", "(and {comm == \"bash\"} [rcu])" },
	{ "comm ~ 'ba*' && lock_held(rcu)", "(and {comm ~ \"ba*\"} [rcu])" },
	{ "common_pid != -1 && lock_held(rcu)", "(and {common_pid != -1} [rcu])" },
	{ "a<=1&&b>=2&&c<3&&d!=4", "(and (and (and {a <= 1} {b >= 2}) {c < 3}) {d != 4})" },
	{ "((lock_held(rcu)))", "[rcu]" },
};

static const struct {
	const char *src, *err;
} invalid[] = {
	{ "", "column 1: empty filter" },
	{ "   ", "column 4: empty filter" },
	{ "lock_held(mutex) &&", "column 20: expected an expression, found the end" },
	{ "lock_held(mutex) ||| lock_held(rcu)", "column 20: expected an expression, found '|'" },
	{ "lock_held(mutex) lock_held(rcu)", "column 18: expected && or || or the end, found 'lock_held'" },
	{ "lock_held mutex", "column 11: expected '(' after lock_held" },
	{ "lock_held(mutex", "column 10: unclosed '(' of lock_held" },
	{ "lock_held()", "column 11: lock_held() needs a lock: a symbol, an address, a slab cache, a well-known lock or a lock type" },
	{ "lock_held(mutex:X)", "column 17: unknown lock mode ':X': use :R (shared) or :W (exclusive)" },
	{ "lock_held_read(mmap_lock:W)", "column 25: ':W' contradicts lock_held_read()" },
	{ "lock_held_write(rwsem:R)", "column 22: ':R' contradicts lock_held_write()" },
	{ "lock_held(mutex:R)", "column 11: mutex has no shared (read) mode" },
	{ "lock_held_read(spinlock)", "column 16: spinlock has no shared (read) mode" },
	{ "lock_held(0xfffg)", "column 16: bad hexadecimal address" },
	{ "lock_held(0x1ffffffffffffffff)", "column 11: address longer than 64 bits" },
	{ "lock_held(foo bar)", "column 11: 'foo bar' is not a lock: expected a symbol, 0xADDRESS, &slab_cache, a well-known lock or a lock type" },
	{ "lock_held(&)", "column 12: '' is not a lock: expected a symbol, 0xADDRESS, &slab_cache, a well-known lock or a lock type" },
	{ "lock_hold(mutex)", "column 1: unknown function 'lock_hold'" },
	{ "lock_held_foo(mutex)", "column 1: unknown function 'lock_held_foo': lock_held, lock_held_read, lock_held_shared, lock_held_write or lock_held_exclusive" },
	{ "(lock_held(mutex)", "column 18: expected ')' to close the '(' at column 1, found the end" },
	{ "lock_held(mutex))", "column 17: ')' without a matching '('" },
	{ "gfp_flags && lock_held(mutex)", "column 11: expected a comparison (== != < <= > >= & ~) after 'gfp_flags', found '&&'" },
	{ "gfp_flags == && lock_held(mutex)", "column 14: expected a value, found '&&'" },
	{ "gfp_flags = 1", "column 11: expected a comparison (== != < <= > >= & ~) after 'gfp_flags', found '='" },
	{ "comm == \"bash && lock_held(rcu)", "column 9: unterminated string" },
	{ "lock_held(rcu) && @", "column 19: expected an expression, found '@'" },
};

static void test_valid(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		struct ust_lh_expr e;
		struct ust_sb sb;
		char err[256] = "";
		int r = ust_lh_parse(valid[i].src, &e, err, sizeof(err));

		if (r)
			fail_msg("'%s': %s", valid[i].src, err);
		ust_sb_init(&sb);
		show(&e, e.root, &sb);
		if (strcmp(ust_sb_str(&sb), valid[i].tree))
			fail_msg("'%s': got %s, expected %s", valid[i].src, ust_sb_str(&sb), valid[i].tree);
		ust_sb_fini(&sb);
		ust_lh_expr_free(&e);
	}
}

static void test_invalid(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		struct ust_lh_expr e;
		char err[256] = "";
		int r = ust_lh_parse(invalid[i].src, &e, err, sizeof(err));

		if (!r)
			fail_msg("'%s' parsed", invalid[i].src);
		if (r != -EINVAL)
			fail_msg("'%s': returned %d, expected -EINVAL", invalid[i].src, r);
		if (strcmp(err, invalid[i].err))
			fail_msg("'%s': got \"%s\", expected \"%s\"", invalid[i].src, err, invalid[i].err);
		ust_lh_expr_free(&e);
	}
}

static void test_leaf_text(void **state)
{
	struct ust_lh_expr e;
	char err[256], *t;

	(void)state;
	assert_int_equal(ust_lh_parse("x == 1 || !lock_held_read( &dentry ) && lock_held(rcu)", &e,
				      err, sizeof(err)), 0);
	assert_int_equal(e.nr_specs, 2);
	t = ust_lh_leaf_text(&e, 0);
	assert_string_equal(t, "lock_held_read( &dentry )");
	free(t);
	t = ust_lh_leaf_text(&e, 1);
	assert_string_equal(t, "lock_held(rcu)");
	free(t);
	assert_string_equal(e.specs[0].text, "&dentry");
	ust_lh_expr_free(&e);
	assert_true(ust_lh_mentions("a == 1 || lock_held(x)"));
	assert_false(ust_lh_mentions("a == 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_leaf_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
