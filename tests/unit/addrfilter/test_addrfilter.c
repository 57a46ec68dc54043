// SPDX-License-Identifier: LGPL-2.1
/*
 * The address-range filter grammar: a table of valid and invalid
 * expressions with the exact ranges or the exact error (with its column).
 * argv[1]: a test program with the functions ust_a, ust_b, ust_c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/addrfilter.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"

static const char *prog;
static char kallsyms[64] = "/tmp/ust-af-kallsyms.XXXXXX";
static struct ust_af_opts opts = { .kallsyms = kallsyms };

struct ok_case {
	const char *spec;
	int nr;
	int action0;
	int kernel0;
	uint64_t start0, size0;
};

static char *subst(const char *spec)
{
	static char buf[4096];
	const char *p = strstr(spec, "PROG");

	if (!p) {
		snprintf(buf, sizeof(buf), "%s", spec);
		return buf;
	}
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - spec), spec, prog, p + 4);
	return buf;
}

static void test_valid(void **state)
{
	static const struct ok_case cases[] = {
		{ "filter kernel:0x1000/0x100", 1, UST_AF_FILTER, 1, 0x1000, 0x100 },
		{ "start kernel:4096", 1, UST_AF_START, 1, 4096, 1 },
		{ "stop kernel:0x10,filter kernel:0x20/8", 2, UST_AF_STOP, 1, 0x10, 1 },
		{ "  filter\nkernel:0x10  ", 1, UST_AF_FILTER, 1, 0x10, 1 },
		{ "filter kernel:fake_lock_fn", 1, UST_AF_FILTER, 1, 0xffffffff81000100ULL, 0x80 },
		{ "filter kernel:fake_lock_fn/4", 1, UST_AF_FILTER, 1, 0xffffffff81000100ULL, 4 },
		{ "filter file:0x1149/0x3d@PROG", 1, UST_AF_FILTER, 0, 0x1149, 0x3d },
		{ "start file:0x1149@PROG", 1, UST_AF_START, 0, 0x1149, 1 },
	};
	struct ust_af af;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ok_case *c = &cases[i];
		int r = ust_af_parse(subst(c->spec), &opts, &af, err, sizeof(err));

		if (r)
			fail_msg("'%s': %s", c->spec, err);
		assert_int_equal(af.nr, c->nr);
		assert_int_equal(af.r[0].action, c->action0);
		assert_int_equal(af.r[0].kernel, c->kernel0);
		assert_true(af.r[0].start == c->start0);
		assert_true(af.r[0].size == c->size0);
		ust_af_free(&af);
	}
}

static void test_symbol_file(void **state)
{
	struct ust_sym_cache *sc = ust_sym_cache_new(NULL);
	struct ust_sym_file *f;
	struct ust_af af;
	uint64_t off, size;
	struct stat st;
	char spec[4200], err[256];

	(void)state;
	f = ust_sym_cache_get(sc, prog, NULL, 0, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(ust_sym_find_function(f, "ust_b", &off, &size), 0);
	snprintf(spec, sizeof(spec), "filter file:ust_b@%s", prog);
	assert_int_equal(ust_af_parse(spec, &opts, &af, err, sizeof(err)), 0);
	assert_true(af.r[0].start == off && af.r[0].size == size);
	assert_string_equal(af.r[0].symbol, "ust_b");
	assert_int_equal(stat(prog, &st), 0);
	assert_int_equal(af.r[0].ino, st.st_ino);
	assert_int_equal(af.r[0].kdev, ust_res_dev_to_kdev(st.st_dev));
	/* matching: inside, at the end, outside, another inode */
	assert_int_equal(ust_af_match_file(&af, UST_AF_FILTER, af.r[0].kdev, st.st_ino, off), 0);
	assert_int_equal(ust_af_match_file(&af, -1, af.r[0].kdev, st.st_ino, off + size - 1), 0);
	assert_int_equal(ust_af_match_file(&af, -1, af.r[0].kdev, st.st_ino, off + size), -ENOENT);
	assert_int_equal(ust_af_match_file(&af, -1, af.r[0].kdev, st.st_ino + 1, off), -ENOENT);
	assert_int_equal(ust_af_match_file(&af, UST_AF_START, af.r[0].kdev, st.st_ino, off),
			 -ENOENT);
	ust_af_free(&af);
	ust_sym_cache_free(sc);
}

struct bad_case {
	const char *spec;
	const char *err;
	int ret;
};

static void test_invalid(void **state)
{
	static const struct bad_case cases[] = {
		{ "", "column 1: empty filter", -EINVAL },
		{ "filter", "column 1: 'filter' without a range", -EINVAL },
		{ "keep kernel:0x10", "column 1: expected filter, start or stop, got 'keep'", -EINVAL },
		{ "filter kernel:0x10 kernel:0x20", "column 20: expected filter, start or stop, got 'kernel:0x20'", -EINVAL },
		{ "filter user:0x10", "column 8: 'user:0x10': expected file:... or kernel:...", -EINVAL },
		{ "filter kernel:", "column 8: 'kernel:': expected file:... or kernel:...", -EINVAL },
		{ "filter kernel:0x10/zz", "column 8: 'kernel:0x10/zz': size is not a number", -EINVAL },
		{ "filter kernel:0x10/0", "column 8: 'kernel:0x10/0': size 0", -EINVAL },
		{ "filter kernel:no_such_fn", "column 8: kernel symbol no_such_fn: not in kallsyms (or kallsyms unreadable)", -ENOENT },
		{ "filter file:0x10", "column 8: 'file:0x10': expected file:OFFSET[/SIZE]@PATH", -EINVAL },
		{ "filter file:0x10@", "column 8: 'file:0x10@': expected file:OFFSET[/SIZE]@PATH", -EINVAL },
		{ "filter file:0x10@/nonexistent/libx.so", "column 8: no such file: /nonexistent/libx.so", -ENOENT },
		{ "filter file:0x10@/tmp", "column 8: not a regular file: /tmp", -EINVAL },
		{ "filter file:no_such_fn@PROG", "column 8: no function no_such_fn in PROG", -ENOENT },
		{ "start kernel:0x10, stop", "column 20: 'stop' without a range", -EINVAL },
	};
	struct ust_af af;
	char err[256], want[4200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[4200];

		snprintf(spec, sizeof(spec), "%s", subst(cases[i].spec));
		snprintf(want, sizeof(want), "%s", subst(cases[i].err));
		int r = ust_af_parse(spec, &opts, &af, err, sizeof(err));

		if (!r)
			fail_msg("'%s' parsed", cases[i].spec);
		if (r != cases[i].ret)
			fail_msg("'%s': returned %d, expected %d", cases[i].spec, r, cases[i].ret);
		if (strcmp(err, want))
			fail_msg("'%s': got '%s', expected '%s'", cases[i].spec, err, want);
		assert_int_equal(af.nr, 0);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_symbol_file),
		cmocka_unit_test(test_invalid),
	};
	FILE *f;
	int fd, r;

	if (argc < 2)
		return 2;
	prog = argv[1];
	/* A kallsyms of our own: the real one differs from boot to boot. */
	fd = mkstemp(kallsyms);
	f = fdopen(fd, "w");
	fputs("ffffffff81000000 T _stext\nffffffff81000100 T fake_lock_fn\n"
	      "ffffffff81000180 t fake_next_fn\nffffffff81000200 T fake_last\n", f);
	fclose(f);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(kallsyms);
	return r;
}
