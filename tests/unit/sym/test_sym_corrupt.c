// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_sym on files that are not sane ELF: each must fail cleanly, with
 * an error text that says why, or (when the damage leaves a readable
 * ELF) load and answer lookups without reading out of bounds; the
 * sanitizer build checks the latter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <elf.h>

#include "ustitch/sym.h"
#include "util.h"

struct ctx {
	char *dir;
	void *lib;		/* libusttest.so's bytes */
	size_t lib_len;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	c->dir = tu_mkdtemp();
	c->lib = tu_read(tu_env("UST_LIBUSTTEST"), &c->lib_len);
	if (!c->dir || !c->lib)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	tu_rmtree(c->dir);
	free(c->dir);
	free(c->lib);
	free(c);
	return 0;
}

/* Write @buf as a file and load it in a fresh cache; returns the error. */
static const char *load(struct ctx *c, const char *name, const void *buf, size_t len,
			bool expect_fail)
{
	static char err[256];
	char path[4096];
	struct ust_sym_cache *sc = ust_sym_cache_new(NULL);
	struct ust_sym_file *f;

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	assert_int_equal(tu_write(path, buf, len), 0);
	err[0] = '\0';
	f = ust_sym_cache_get(sc, path, NULL, 0, err, sizeof(err));
	if (expect_fail) {
		if (f)
			fail_msg("%s: loaded", name);
		assert_true(err[0] != '\0');
	} else if (f) {
		/* Damaged but loadable: lookups anywhere must stay in bounds. */
		struct ust_sym_frame fr[16];
		uint64_t off, size;

		for (uint64_t o = 0; o < len + 64; o += 7) {
			ust_sym_lookup(f, o, false, true, fr, 16);
			ust_sym_lookup(f, o, true, true, fr, 16);
		}
		ust_sym_find_function(f, "ust_lib_inner", &off, &size);
		err[0] = '\0';
	}
	ust_sym_cache_free(sc);
	return err;
}

static void test_empty(void **state)
{
	assert_string_equal(load(*state, "empty", "", 0, true), "not an ELF file");
}

static void test_random(void **state)
{
	uint64_t seed = 0x1234567;
	uint8_t buf[8192];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)tu_rand(&seed);
	assert_string_equal(load(*state, "random", buf, sizeof(buf), true), "not an ELF file");
	/* Short, and text. */
	assert_string_equal(load(*state, "short", "\177EL", 3, true), "not an ELF file");
	assert_string_equal(load(*state, "text", "#!/bin/sh\nexit 0\n", 17, true),
			    "not an ELF file");
}

static void test_truncated(void **state)
{
	struct ctx *c = *state;
	const Elf64_Ehdr *eh = c->lib;
	size_t cuts[] = {
		8, 40, sizeof(Elf64_Ehdr) - 1, sizeof(Elf64_Ehdr), 200, c->lib_len / 3,
		c->lib_len / 2, (size_t)eh->e_shoff, (size_t)eh->e_shoff + 10,
		c->lib_len - 1,
	};

	assert_true(eh->e_shoff > 0 && eh->e_shoff < c->lib_len);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "trunc-%zu", cuts[i]);
		if (strcmp(load(c, name, c->lib, cuts[i], true), "truncated ELF"))
			fail_msg("%s: %s", name, load(c, name, c->lib, cuts[i], true));
	}
}

/* A real system library cut in half, as an interrupted copy leaves it. */
static void test_truncated_libc(void **state)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	size_t len;
	void *buf = tu_read(libc, &len);

	if (!buf)
		skip();
	assert_string_equal(load(*state, "libc-half", buf, len / 2, true), "truncated ELF");
	free(buf);
}

static void test_garbage_section_headers(void **state)
{
	struct ctx *c = *state;
	const Elf64_Ehdr *eh = c->lib;
	size_t sht = (size_t)eh->e_shoff, sht_len = (size_t)eh->e_shnum * eh->e_shentsize;
	uint8_t *buf = malloc(c->lib_len);
	uint64_t seed = 42;
	const char *e;

	assert_true(sht + sht_len <= c->lib_len);
	for (int round = 0; round < 8; round++) {
		memcpy(buf, c->lib, c->lib_len);
		/* Keep the null section, trash the rest. */
		for (size_t i = sht + eh->e_shentsize; i < sht + sht_len; i++)
			buf[i] = round == 0 ? 0xff : (uint8_t)tu_rand(&seed);
		e = load(c, "garbage-shdrs", buf, c->lib_len, true);
		if (strncmp(e, "corrupt ELF", 11))
			fail_msg("round %d: %s", round, e);
	}

	/* A section table that points past the end of the file. */
	memcpy(buf, c->lib, c->lib_len);
	((Elf64_Ehdr *)buf)->e_shoff = (uint64_t)c->lib_len * 4;
	assert_string_equal(load(c, "shoff-far", buf, c->lib_len, true), "truncated ELF");
	/* A bogus section header entry size. */
	memcpy(buf, c->lib, c->lib_len);
	((Elf64_Ehdr *)buf)->e_shentsize = 13;
	e = load(c, "shentsize", buf, c->lib_len, true);
	assert_true(e[0]);
	/* One section with an offset beyond the end. */
	memcpy(buf, c->lib, c->lib_len);
	((Elf64_Shdr *)(buf + sht))[3].sh_offset = 1ULL << 40;
	assert_string_equal(load(c, "section-far", buf, c->lib_len, true),
			    "corrupt ELF: section 3 lies outside the file");
	free(buf);
}

/* Random byte flips anywhere: fail cleanly or work, never crash. */
static void test_fuzz(void **state)
{
	struct ctx *c = *state;
	uint8_t *buf = malloc(c->lib_len);
	uint64_t seed = 7;
	int loaded = 0, failed = 0;

	for (int round = 0; round < 300; round++) {
		int flips = 1 + (int)(tu_rand(&seed) % 16);
		char *e;

		memcpy(buf, c->lib, c->lib_len);
		for (int k = 0; k < flips; k++) {
			/* Headers, symbol and DWARF tables are mostly in the first and last KBs. */
			size_t at = (size_t)(tu_rand(&seed) % c->lib_len);

			buf[at] ^= (uint8_t)(1 + tu_rand(&seed) % 255);
		}
		e = (char *)load(c, "fuzz", buf, c->lib_len, false);
		if (e[0])
			failed++;
		else
			loaded++;
	}
	assert_true(loaded > 0);
	print_message("fuzz: %d loaded, %d rejected\n", loaded, failed);
	free(buf);
}

static void test_not_regular(void **state)
{
	struct ctx *c = *state;
	struct ust_sym_cache *sc = ust_sym_cache_new(NULL);
	char err[256], path[4096];

	assert_null(ust_sym_cache_get(sc, c->dir, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "not a regular file");
	snprintf(path, sizeof(path), "%s/fifo", c->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	/* Opening a FIFO for reading would block: it must not be waited on. */
	assert_null(ust_sym_cache_get(sc, path, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "not a regular file");
	assert_null(ust_sym_cache_get(sc, "/dev/null", NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "not a regular file");
	ust_sym_cache_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_truncated_libc),
		cmocka_unit_test(test_garbage_section_headers),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_not_regular),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
