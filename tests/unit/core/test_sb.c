// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_sb (lib/base/sb.c): printf formats in place where the
 * text fits and again after growing where it does not; putx as printf's
 * "0x%" PRIx64.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/sb.h"

static void test_printf_grows(void **state)
{
	struct ust_sb sb;
	char want[8192], piece[64];
	size_t len = 0;
	int i;

	(void)state;
	ust_sb_init(&sb);
	assert_string_equal(ust_sb_str(&sb), "");
	/* Pieces of every length across the first sizes and their doublings. */
	for (i = 0; i < 300; i++) {
		snprintf(piece, sizeof(piece), "%d:%.*s;", i, i % 40, "abcdefghijklmnopqrstuvwxyz0123456789ABCD");
		ust_sb_printf(&sb, "%d:%.*s;", i, i % 40, "abcdefghijklmnopqrstuvwxyz0123456789ABCD");
		memcpy(want + len, piece, strlen(piece) + 1);
		len += strlen(piece);
		assert_int_equal(sb.len, len);
		assert_string_equal(ust_sb_str(&sb), want);
	}
	assert_false(sb.oom);
	/* One piece longer than all the room there is. */
	ust_sb_reset(&sb);
	memset(want, 'x', 5000);
	want[5000] = '\0';
	ust_sb_printf(&sb, "%s", want);
	assert_int_equal(sb.len, 5000);
	assert_string_equal(ust_sb_str(&sb), want);
	ust_sb_fini(&sb);
}

static void test_putx(void **state)
{
	static const uint64_t vals[] = { 0, 1, 0xf, 0x10, 0xdeadbeef, 0x123456789abcdef0ULL, UINT64_MAX };
	struct ust_sb sb;
	char want[512];
	size_t i, len = 0;

	(void)state;
	ust_sb_init(&sb);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		len += (size_t)snprintf(want + len, sizeof(want) - len, "0x%" PRIx64 "+", vals[i]);
		ust_sb_putx(&sb, vals[i]);
		ust_sb_puts(&sb, "+");
	}
	assert_string_equal(ust_sb_str(&sb), want);
	assert_int_equal(sb.len, len);
	ust_sb_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printf_grows),
		cmocka_unit_test(test_putx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
