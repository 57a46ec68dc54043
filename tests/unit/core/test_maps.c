// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_maps (lib/base/maps.c): the one /proc/PID/maps parser,
 * on lines the kernel writes, on broken ones, and read through a pipe in
 * pieces by ust_maps_each with a buffer smaller than some lines.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/abi.h"
#include "ustitch/maps.h"

static void test_file_line(void **state)
{
	char line[] = "7f12a0000000-7f12a0021000 r-xp 0001c000 fd:01 1234567   "
		      "/usr/lib/x86_64-linux-gnu/libc.so.6  \n";
	struct ust_maps_ent e;

	(void)state;
	assert_int_equal(ust_maps_parse(line, &e), 0);
	assert_true(e.start == 0x7f12a0000000ULL);
	assert_true(e.end == 0x7f12a0021000ULL);
	assert_true(e.off == 0x1c000);
	assert_true(e.ino == 1234567);
	assert_int_equal(e.kdev, UST_ABI_MKKDEV(0xfd, 1));
	assert_true(e.exec);
	assert_string_equal(e.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

static void test_other_lines(void **state)
{
	char anon[] = "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0 \n";
	char heap[] = "55d0c0021000-55d0c0042000 rw-p 00000000 00:00 0                          [heap]";
	char del[] = "7f0000000000-7f0000001000 r--s 00000000 103:02 42 /tmp/x (deleted)\n";
	struct ust_maps_ent e;

	(void)state;
	assert_int_equal(ust_maps_parse(anon, &e), 0);
	assert_true(e.ino == 0);
	assert_false(e.exec);
	assert_string_equal(e.path, "");
	assert_int_equal(ust_maps_parse(heap, &e), 0);
	assert_string_equal(e.path, "[heap]");
	assert_int_equal(ust_maps_parse(del, &e), 0);
	assert_int_equal(e.kdev, UST_ABI_MKKDEV(0x103, 2));
	assert_string_equal(e.path, "/tmp/x (deleted)");
}

static void test_broken(void **state)
{
	const char *bad[] = {
		"", "\n", "7f00-", "7f00-7f10", "7f00 7f10 r-xp 0 fd:01 1 /x",
		"7f00-7f10 r-xp 0 fd01 1 /x", "7f00-7f10 r-xp 0 fd:01 /x",
		"zz-7f10 r-xp 0 fd:01 1 /x",
	};
	struct ust_maps_ent e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *l = strdup(bad[i]);

		assert_int_equal(ust_maps_parse(l, &e), -EINVAL);
		free(l);
	}
}

struct seen {
	int nr;
	uint64_t starts[8];
	char paths[8][64];
};

static int collect(struct ust_maps_ent *e, void *ctx)
{
	struct seen *s = ctx;

	assert_true(s->nr < 8);
	s->starts[s->nr] = e->start;
	snprintf(s->paths[s->nr], sizeof(s->paths[0]), "%s", e->path);
	s->nr++;
	return 0;
}

static int stop_at_two(struct ust_maps_ent *e, void *ctx)
{
	collect(e, ctx);
	return ((struct seen *)ctx)->nr == 2 ? 42 : 0;
}

/* @text through a pipe, to ust_maps_each with a @size buffer. */
static int each(const char *text, size_t size, int (*fn)(struct ust_maps_ent *, void *),
		struct seen *s)
{
	char *buf = malloc(size);
	int fds[2], ret;

	assert_non_null(buf);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
	close(fds[1]);
	memset(s, 0, sizeof(*s));
	ret = ust_maps_each(fds[0], buf, size, fn, s);
	close(fds[0]);
	free(buf);
	return ret;
}

static const char text[] =
	"1000-2000 r-xp 00000000 08:01 11 /bin/a\n"
	"2000-3000 r-xp 00000000 08:01 12 /a/path/much/longer/than/the/sixty-four/byte/buffer/of/the/test/x\n"
	"not a maps line\n"
	"3000-4000 r-xp 00000000 08:01 13 /bin/c\n"
	"4000-5000 r-xp 00000000 08:01 14 /bin/d";	/* no newline at the end */

static void test_each(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(each(text, 4096, collect, &s), 0);
	assert_int_equal(s.nr, 4);
	assert_true(s.starts[1] == 0x2000 && s.starts[2] == 0x3000 && s.starts[3] == 0x4000);
	assert_string_equal(s.paths[3], "/bin/d");

	/* The long line, its tail included, is dropped; the rest are whole. */
	assert_int_equal(each(text, 64, collect, &s), 0);
	assert_int_equal(s.nr, 3);
	assert_true(s.starts[0] == 0x1000 && s.starts[1] == 0x3000 && s.starts[2] == 0x4000);
	assert_string_equal(s.paths[0], "/bin/a");
	assert_string_equal(s.paths[1], "/bin/c");

	assert_int_equal(each(text, 4096, stop_at_two, &s), 42);
	assert_int_equal(s.nr, 2);

	assert_int_equal(ust_maps_each(-1, (char[8]){ 0 }, 8, collect, &s), -EBADF);
}

/* The real thing: our own maps holds this test's executable, with x. */
static int find_exec(struct ust_maps_ent *e, void *ctx)
{
	(void)ctx;
	return e->exec && e->ino && e->path[0] == '/' &&
	       (uint64_t)(uintptr_t)test_each >= e->start && (uint64_t)(uintptr_t)test_each < e->end;
}

static void test_self(void **state)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char buf[512];

	(void)state;
	assert_non_null(f);
	assert_int_equal(ust_maps_each(fileno(f), buf, sizeof(buf), find_exec, NULL), 1);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_line),
		cmocka_unit_test(test_other_lines),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_each),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
