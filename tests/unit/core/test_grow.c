// SPDX-License-Identifier: LGPL-2.1
/* Unit tests of ust_grow (lib/base/grow.c): doubling, first size, overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ustitch/grow.h"

static void test_doubling(void **state)
{
	size_t cap = 0, i;
	int *v = NULL, *n;

	(void)state;
	n = ust_grow(v, &cap, 1, sizeof(*v), 4);
	assert_non_null(n);
	assert_int_equal(cap, 4);
	v = n;
	for (i = 0; i < 100; i++) {
		v = ust_grow(v, &cap, i + 1, sizeof(*v), 4);
		assert_non_null(v);
		v[i] = (int)i;
	}
	assert_int_equal(cap, 128);	/* 4, 8, ..., 128: doubled, not bumped */
	for (i = 0; i < 100; i++)
		assert_int_equal(v[i], (int)i);
	/* Enough room: the same array, the same capacity. */
	assert_ptr_equal(ust_grow(v, &cap, 128, sizeof(*v), 4), v);
	assert_int_equal(cap, 128);
	/* A jump: doubled until it holds @need. */
	v = ust_grow(v, &cap, 1000, sizeof(*v), 4);
	assert_non_null(v);
	assert_int_equal(cap, 1024);
	free(v);

	cap = 0;	/* no first size: from 1 */
	v = ust_grow(NULL, &cap, 3, sizeof(*v), 0);
	assert_non_null(v);
	assert_int_equal(cap, 4);
	free(v);
}

static void test_overflow(void **state)
{
	size_t cap = 16;
	char *v = malloc(16);

	(void)state;
	assert_non_null(v);
	assert_null(ust_grow(v, &cap, SIZE_MAX / 8 + 1, 16, 1));
	assert_int_equal(cap, 16);	/* unchanged, and @v still ours */
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubling),
		cmocka_unit_test(test_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
