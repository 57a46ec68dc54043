// SPDX-License-Identifier: LGPL-2.1
/*
 * --addr-filter as decision-graph nodes (lib/addrfilter/af_compile.c): the exact
 * graphs, dumped, for filter ranges (ORed), a start/stop switch, both in
 * front of an event's own graph, and the refusals of kernel ranges.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "ustitch/lh.h"

#define ACCEPT 0xff
#define REJECT 0xfe

static void set(struct ust_af_range *r, enum ust_af_action a, bool kernel)
{
	memset(r, 0, sizeof(*r));
	r->action = a;
	r->kernel = kernel;
	r->size = 1;
}

static void expect_graph(const struct ust_af *af, const struct ust_lh_compiled *base,
			 const char *want)
{
	struct ust_lh_compiled c;
	char err[256], *d;

	memset(&c, 0, sizeof(c));
	if (base)
		c = *base;
	assert_int_equal(ust_af_prepend(af, &c.graph, err, sizeof(err)), 0);
	d = ust_filter_dump(&c.graph);
	assert_string_equal(d, want);
	free(d);
}

static void test_filters_or(void **state)
{
	struct ust_af_range r[3];
	struct ust_af af = { .r = r, .nr = 3 };

	(void)state;
	set(&r[0], UST_AF_FILTER, false);
	set(&r[1], UST_AF_FILTER, false);
	set(&r[2], UST_AF_FILTER, false);
	expect_graph(&af, NULL,
		     "0: user ip in range 0 ? accept : 1\n"
		     "1: user ip in range 1 ? accept : 2\n"
		     "2: user ip in range 2 ? accept : reject\n");
}

static void test_switch_and_base(void **state)
{
	struct ust_af_range r[3];
	struct ust_af af = { .r = r, .nr = 3 };
	struct ust_lh_compiled base;

	(void)state;
	set(&r[0], UST_AF_START, false);
	set(&r[1], UST_AF_FILTER, false);
	set(&r[2], UST_AF_STOP, false);
	memset(&base, 0, sizeof(base));
	base.graph.nr = 2;	/* common_pid == 7 || common_pid == 9 */
	base.graph.insn[0] = (struct ust_filter_insn){ .op = 7, .cmp = 1, .arg = 7, .t = ACCEPT, .f = 1 };
	base.graph.insn[1] = (struct ust_filter_insn){ .op = 7, .cmp = 1, .arg = 9, .t = ACCEPT, .f = REJECT };
	expect_graph(&af, &base,
		     "0: user ip in range 1 ? 1 : reject\n"
		     "1: switch on ? 2 : reject\n"
		     "2: pid == 7 ? accept : 3\n"
		     "3: pid == 9 ? accept : reject\n");
}

static void test_too_many(void **state)
{
	struct ust_af_range r[4];
	struct ust_af af = { .r = r, .nr = 4 };
	struct ust_lh_compiled c;
	char err[256];
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		set(&r[i], UST_AF_FILTER, false);
	memset(&c, 0, sizeof(c));
	c.graph.nr = 29;
	assert_int_equal(ust_af_prepend(&af, &c.graph, err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "too complex: with the address filters, more than 32 tests for BPF to evaluate");
}

/* kernel: filter ranges are for samples; start/stop need kprobes. */
static void test_kernel(void **state)
{
	bool kprobes = !access("/sys/bus/event_source/devices/kprobe/type", F_OK);
	struct ust_af_range r[3];
	struct ust_af af = { .r = r, .nr = 2 };
	char err[256];
	int bad;

	(void)state;
	set(&r[0], UST_AF_FILTER, false);
	set(&r[1], UST_AF_FILTER, true);
	set(&r[2], UST_AF_FILTER, true);
	assert_int_equal(ust_af_bpf_check(&af, &bad, err, sizeof(err)), 0);
	assert_int_equal(ust_af_kernel_filter(&af), 1);
	r[1].action = UST_AF_START;
	assert_int_equal(ust_af_kernel_filter(&af), -ENOENT);
	if (kprobes) {
		assert_int_equal(ust_af_bpf_check(&af, &bad, err, sizeof(err)), 0);
	} else {
		assert_int_equal(ust_af_bpf_check(&af, &bad, err, sizeof(err)), -EOPNOTSUPP);
		assert_int_equal(bad, 1);
		assert_string_equal(err, "start/stop at kernel addresses need kprobes: this kernel has none (no kprobe PMU in /sys/bus/event_source/devices)");
	}
	af.nr = 3;
	assert_int_equal(ust_af_kernel_filter(&af), 2);
	r[1].kernel = false;
	af.nr = 2;
	assert_int_equal(ust_af_bpf_check(&af, &bad, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filters_or),
		cmocka_unit_test(test_switch_and_base),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
