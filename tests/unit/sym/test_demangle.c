// SPDX-License-Identifier: LGPL-2.1
/*
 * Names as perf prints them: ust_sym_demangle on C++, Rust legacy and v0
 * names (and what it leaves alone), and ust_sym_lookup on the g++ -O2 and
 * Rust-named test programs: demangled once per name, raw with
 * ust_sym_opts.raw_names, looked up by mangled name either way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/sym.h"

static void expect_dm(const char *mangled, const char *want)
{
	char *got = ust_sym_demangle(mangled);

	const char *what = mangled ? mangled : "(null)";

	if (!want) {
		if (got)
			fail_msg("%s: demangled to \"%s\", expected nothing", what, got);
		return;
	}
	if (!got)
		fail_msg("%s: not demangled, expected \"%s\"", what, want);
	assert_string_equal(got, want);
	free(got);
}

static void test_names(void **state)
{
	(void)state;
	expect_dm("_ZN2ns1K4spinEi", "ns::K::spin(int)");
	expect_dm("_ZN6toplev4mainEiPPc", "toplev::main(int, char**)");
	expect_dm("_ZN2ns5twiceIiEET_S1_", "int ns::twice<int>(int)");
	expect_dm("_ZZN2ns1K4spinEiENKUliE_clEi",
		  "ns::K::spin(int)::{lambda(int)#1}::operator()(int) const");
	/* GCC's clones keep their suffix, as perf shows them */
	expect_dm("_Z1fv.cold", "f() [clone .cold]");
	/* Rust legacy: the hash is dropped; v0 */
	expect_dm("_ZN7mycrate6module4work17h0123456789abcdefE", "mycrate::module::work");
	expect_dm("_RNvMNtCs4fqI2P2rA04_7mycrate6moduleNtB2_5Thing3run",
		  "<mycrate::module::Thing>::run");
	expect_dm("_RNvXNtCs1234_7mycrate6moduleAhj4_NtB2_5Trait1f",
		  "<[u8; 4] as mycrate::module::Trait>::f");
	/* not mangled, or not valid: left alone */
	expect_dm("main", NULL);
	expect_dm("_start", NULL);
	expect_dm("__libc_start_main", NULL);
	expect_dm("_Z", NULL);
	expect_dm("_ZN2ns", NULL);
	expect_dm("_R", NULL);
	expect_dm("", NULL);
	expect_dm(NULL, NULL);
}

static struct ust_sym_file *get(struct ust_sym_cache *c, const char *var)
{
	const char *path = getenv(var);
	struct ust_sym_file *f;
	char err[256];

	if (!path || !*path)
		return NULL;
	f = ust_sym_cache_get(c, path, NULL, 0, err, sizeof(err));
	if (!f)
		fail_msg("%s: %s", path, err);
	return f;
}

/* The frame at FUNC+1 (a mangled name), by a cache with @raw_names. */
static void expect_frame(struct ust_sym_file *f, const char *mangled, bool lines, const char *want)
{
	struct ust_sym_frame fr[8];
	uint64_t off, size;
	int n;

	assert_int_equal(ust_sym_find_function(f, mangled, &off, &size), 0);
	n = ust_sym_lookup(f, off + 1, false, lines, fr, 8);
	assert_true(n >= 1);
	assert_non_null(fr[n - 1].func);
	assert_string_equal(fr[n - 1].func, want);
	assert_int_equal(fr[n - 1].func_off, 1);
}

static void test_lookup(void **state)
{
	struct ust_sym_opts raw = { .raw_names = true };
	struct ust_sym_cache *c = ust_sym_cache_new(NULL), *r = ust_sym_cache_new(&raw);
	struct ust_sym_file *f, *fr;
	struct ust_sym_frame a[4], b[4];
	uint64_t off;

	(void)state;
	assert_non_null(c);
	assert_non_null(r);
	f = get(c, "UST_TESTPROG_CXX");
	fr = get(r, "UST_TESTPROG_CXX");
	if (f) {
		for (int lines = 0; lines < 2; lines++) {
			expect_frame(f, "_ZN2ns1K4spinEi", lines, "ns::K::spin(int)");
			expect_frame(f, "_ZN2ns5twiceIiEET_S1_", lines, "int ns::twice<int>(int)");
			expect_frame(f, "_ZZN2ns1K4spinEiENKUliE_clEi", lines,
				     "ns::K::spin(int)::{lambda(int)#1}::operator()(int) const");
			expect_frame(f, "main", lines, "main");
			expect_frame(fr, "_ZN2ns1K4spinEi", lines, "_ZN2ns1K4spinEi");
			expect_frame(fr, "_ZN2ns5twiceIiEET_S1_", lines, "_ZN2ns5twiceIiEET_S1_");
		}
		/* Demangled once: the second lookup hands back the same string. */
		assert_int_equal(ust_sym_find_function(f, "_ZN2ns1K4spinEi", &off, NULL), 0);
		assert_int_equal(ust_sym_lookup(f, off + 2, false, false, a, 4), 1);
		assert_int_equal(ust_sym_lookup(f, off + 3, false, false, b, 4), 1);
		assert_ptr_equal(a[0].func, b[0].func);
		/* A demangled name is not a name to look up. */
		assert_int_equal(ust_sym_find_function(f, "ns::K::spin(int)", &off, NULL), -ENOENT);
	}
	f = get(c, "UST_TESTPROG_RUSTNAMES");
	fr = get(r, "UST_TESTPROG_RUSTNAMES");
	assert_non_null(f);
	expect_frame(f, "_ZN7mycrate6module4work17h0123456789abcdefE", true, "mycrate::module::work");
	expect_frame(f, "_RNvMNtCs4fqI2P2rA04_7mycrate6moduleNtB2_5Thing3run", false,
		     "<mycrate::module::Thing>::run");
	expect_frame(f, "_RNvXNtCs1234_7mycrate6moduleAhj4_NtB2_5Trait1f", false,
		     "<[u8; 4] as mycrate::module::Trait>::f");
	expect_frame(fr, "_RNvMNtCs4fqI2P2rA04_7mycrate6moduleNtB2_5Thing3run", false,
		     "_RNvMNtCs4fqI2P2rA04_7mycrate6moduleNtB2_5Thing3run");
	ust_sym_cache_free(r);
	ust_sym_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
