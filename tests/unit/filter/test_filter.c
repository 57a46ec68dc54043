// SPDX-License-Identifier: LGPL-2.1
/*
 * lib/filter: prepending nodes to a graph (exits renumbered, "next" bound
 * to the old entry or to accept), the size limit, and the dump.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/filter.h"

static struct ust_filter_insn pid_is(unsigned int pid, uint8_t t, uint8_t f)
{
	return (struct ust_filter_insn){ .op = UST_FILTER_OP_PID, .cmp = UST_FILTER_EQ,
					 .arg = pid, .t = t, .f = f };
}

/* In front of an empty graph, "next" is accept. */
static void test_prepend_empty(void **state)
{
	struct ust_filter_graph g = { .nr = 0 };
	struct ust_filter_insn pre[1] = { pid_is(7, UST_FILTER_NEXT, UST_FILTER_REJECT) };
	char *d;

	(void)state;
	assert_int_equal(ust_filter_prepend(&g, pre, 1), 0);
	assert_int_equal(g.nr, 1);
	d = ust_filter_dump(&g);
	assert_string_equal(d, "0: pid == 7 ? accept : reject\n");
	free(d);
}

/* The old nodes move past the new ones, their exits with them. */
static void test_prepend_shift(void **state)
{
	struct ust_filter_graph g = { .nr = 2 };
	struct ust_filter_insn pre[2] = {
		{ .op = UST_FILTER_OP_AF_FILE, .arg = 0, .t = UST_FILTER_NEXT, .f = 1 },
		{ .op = UST_FILTER_OP_AF_FILE, .arg = 3, .t = UST_FILTER_NEXT, .f = UST_FILTER_REJECT },
	};
	char *d;

	(void)state;
	g.insn[0] = pid_is(7, UST_FILTER_ACCEPT, 1);
	g.insn[1] = pid_is(9, UST_FILTER_ACCEPT, UST_FILTER_REJECT);
	assert_false(ust_filter_has_op(&g, UST_FILTER_OP_AF_FILE));
	assert_int_equal(ust_filter_prepend(&g, pre, 2), 0);
	assert_true(ust_filter_has_op(&g, UST_FILTER_OP_AF_FILE));
	d = ust_filter_dump(&g);
	assert_string_equal(d,
		"0: user ip in range 0 ? 2 : 1\n"
		"1: user ip in range 3 ? 2 : reject\n"
		"2: pid == 7 ? accept : 3\n"
		"3: pid == 9 ? accept : reject\n");
	free(d);
}

/* Past UST_FILTER_MAX_INSNS nodes: -E2BIG and the graph as it was. */
static void test_prepend_full(void **state)
{
	struct ust_filter_graph g = { .nr = UST_FILTER_MAX_INSNS - 1 }, before;
	struct ust_filter_insn pre[2] = {
		pid_is(1, UST_FILTER_NEXT, UST_FILTER_REJECT),
		pid_is(2, UST_FILTER_NEXT, UST_FILTER_REJECT),
	};
	int i;

	(void)state;
	for (i = 0; i < g.nr; i++)
		g.insn[i] = pid_is((unsigned int)i, i + 1 < g.nr ? (uint8_t)(i + 1) : UST_FILTER_ACCEPT,
				   UST_FILTER_REJECT);
	before = g;
	assert_int_equal(ust_filter_prepend(&g, pre, 2), -E2BIG);
	assert_memory_equal(&g, &before, sizeof(g));
	assert_int_equal(ust_filter_prepend(&g, pre, 1), 0);
	assert_int_equal(g.nr, UST_FILTER_MAX_INSNS);
	assert_int_equal(g.insn[0].t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepend_empty),
		cmocka_unit_test(test_prepend_shift),
		cmocka_unit_test(test_prepend_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
