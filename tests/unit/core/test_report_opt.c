// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_report_opt (lib/report/report_opt.c) and ust_near
 * (lib/base/near.c): -O mistakes named, one line each; a boolean alone
 * is on; a bad value gives way to the default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/near.h"
#include "ustitch/report_opt.h"
#include "ustitch/sb.h"

enum { STITCH, LINES, MAX_FRAMES, FOLDED, FILE_OPT, NR };

static void table(struct ust_ropt *o)
{
	o[STITCH] = (struct ust_ropt){ "stitch", UST_ROPT_BOOL, "1 or 0", "1", "1" };
	o[LINES] = (struct ust_ropt){ "lines", UST_ROPT_BOOL, "1 or 0", "0", "0" };
	o[MAX_FRAMES] = (struct ust_ropt){ "max_frames", UST_ROPT_COUNT, "a count, 0 for all", "0", "0" };
	o[FOLDED] = (struct ust_ropt){ "folded", UST_ROPT_BOOL_OR_TEXT, "1, 0 or a path", "0", "0" };
	o[FILE_OPT] = (struct ust_ropt){ "file", UST_ROPT_TEXT, "a path", "", "" };
}

/* Arguments "a\0b\0..." from a string with '|' between them. */
static size_t args(char *buf, const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i <= n; i++)
		buf[i] = s[i] == '|' ? '\0' : s[i];
	return n + 1;
}

static int check(struct ust_ropt *o, const char *cmd, bool exact, struct ust_sb *msgs)
{
	char buf[512];
	size_t len = args(buf, cmd);

	ust_sb_reset(msgs);
	return ust_report_opt_check("ustitch", buf, len, exact, o, NR, msgs);
}

static void test_values(void **state)
{
	struct ust_ropt o[NR];
	struct ust_sb msgs;

	(void)state;
	ust_sb_init(&msgs);
	table(o);
	o[MAX_FRAMES].value = "abc";
	o[STITCH].value = "maybe";
	o[LINES].value = "TRUE";
	assert_int_equal(check(o, "trace-cmd|report|-O|ustitch:max_frames=abc", true, &msgs), 2);
	assert_string_equal(ust_sb_str(&msgs),
			    "ustitch: -O ustitch:stitch=maybe: not a boolean (stitch takes 1 or 0)\n"
			    "ustitch: -O ustitch:max_frames=abc: not a number (max_frames takes a count, 0 for all)\n");
	assert_string_equal(o[MAX_FRAMES].value, "0");	/* the default */
	assert_string_equal(o[STITCH].value, "1");
	assert_string_equal(o[LINES].value, "TRUE");	/* taken as it is */
	table(o);
	o[MAX_FRAMES].value = "-1";
	assert_int_equal(check(o, "x", true, &msgs), 1);
	o[MAX_FRAMES].value = "12";
	o[FOLDED].value = "/tmp/out";
	assert_int_equal(check(o, "x", true, &msgs), 0);
	assert_string_equal(ust_sb_str(&msgs), "");
	ust_sb_fini(&msgs);
}

static void test_alone(void **state)
{
	struct ust_ropt o[NR];
	struct ust_sb msgs;

	(void)state;
	ust_sb_init(&msgs);
	table(o);
	/* "-O ustitch:lines", "-Oustitch:folded", a bare "stitch" (any plugin's) */
	assert_int_equal(check(o, "trace-cmd|report|-O|ustitch:lines|-Oustitch:folded|-O|stitch|t.dat", true, &msgs), 0);
	assert_string_equal(o[LINES].value, "1");
	assert_string_equal(o[FOLDED].value, "1");
	assert_string_equal(o[STITCH].value, "1");
	/* A text option needs its value. */
	table(o);
	assert_int_equal(check(o, "trace-cmd|report|-O|ustitch:file", true, &msgs), 1);
	assert_string_equal(ust_sb_str(&msgs), "ustitch: -O ustitch:file: needs a value (file takes a path)\n");
	/* Given with a value later: not alone. */
	table(o);
	assert_int_equal(check(o, "t|-O|ustitch:lines|-O|ustitch:lines=0", true, &msgs), 0);
	assert_string_equal(o[LINES].value, "0");
	/* Not exact: a name alone may be a value cut off; left as it is. */
	table(o);
	assert_int_equal(check(o, "t|-O|ustitch:lines|0", false, &msgs), 0);
	assert_string_equal(o[LINES].value, "0");
	/* After "--", nothing is an option. */
	table(o);
	assert_int_equal(check(o, "t|--|-O|ustitch:lines", true, &msgs), 0);
	assert_string_equal(o[LINES].value, "0");
	ust_sb_fini(&msgs);
}

static void test_unknown(void **state)
{
	struct ust_ropt o[NR];
	struct ust_sb msgs;

	(void)state;
	ust_sb_init(&msgs);
	table(o);
	assert_int_equal(check(o, "t|-O|ustitch:bogus=1|-O|ustitch:line=1|-O|fgraph:tailprint|-O|other=1", true,
			       &msgs), 2);
	assert_string_equal(ust_sb_str(&msgs),
			    "ustitch: unknown option ustitch:bogus (options: stitch, lines, max_frames, folded, file)\n"
			    "ustitch: unknown option ustitch:line (did you mean lines?)\n");
	ust_sb_fini(&msgs);
}

static void test_near(void **state)
{
	struct ust_near n;
	char buf[256];

	(void)state;
	assert_int_equal(ust_near_distance("cpu-clokc", "cpu-clock"), 1);	/* a swap */
	assert_int_equal(ust_near_distance("sched", "sched"), 0);
	assert_int_equal(ust_near_distance("", "abc"), 3);
	assert_int_equal(ust_near_distance("kitten", "sitting"), 3);
	ust_near_init(&n, "cpu-clokc");
	ust_near_add(&n, "task-clock");
	ust_near_add(&n, "cpu-clock");
	ust_near_add(&n, "cpu-cycles");
	assert_int_equal(ust_near_format(&n, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "cpu-clock");
	ust_near_init(&n, "cs");	/* short: one edit at most */
	ust_near_add(&n, "cpu-clock");
	assert_int_equal(ust_near_format(&n, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	ust_near_init(&n, "sched_a");
	ust_near_add(&n, "sched_b");
	ust_near_add(&n, "sched_c");
	ust_near_add(&n, "sched_d");
	ust_near_add(&n, "sched_e");
	assert_int_equal(ust_near_format(&n, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "sched_b, sched_c or sched_d");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_near),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
