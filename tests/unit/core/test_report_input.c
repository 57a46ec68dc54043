// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_report_input_opening (lib/report/report_input.c): the
 * descriptor on a trace.dat just past its magic, version and endianness
 * byte is the input being loaded; earlier inputs are skipped by descriptor,
 * and nothing else is taken for a trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "ustitch/report.h"

static char dir[] = "/tmp/ustitch-rinput.XXXXXX";

/* A file whose first bytes are a trace.dat header of version @ver (or junk). */
static void make(const char *name, const char *ver)
{
	char path[PATH_MAX], buf[64] = { 0 };
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	if (ver) {
		memcpy(buf, "\027\010\104tracing", 10);
		n = 10;
		memcpy(buf + n, ver, strlen(ver) + 1);
	} else {
		memcpy(buf, "not a trace at all", 18);
	}
	assert_int_equal(fwrite(buf, 1, sizeof(buf), f), sizeof(buf));
	fclose(f);
}

/* Opened and read as libtracecmd does before it loads the plugins. */
static int open_at(const char *name, off_t pos)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, pos, SEEK_SET), pos);
	return fd;
}

static void test_opening(void **state)
{
	struct ust_report_input in;
	char want[PATH_MAX], path[PATH_MAX];
	struct stat st;
	int a, b, j, skip[2];

	(void)state;
	assert_non_null(mkdtemp(dir));
	make("a.dat", "6");
	make("b.dat", "7");
	make("junk.dat", NULL);

	assert_int_equal(ust_report_input_opening(&in, NULL, 0), -ENOENT);
	a = open_at("a.dat", 10 + 2 + 1);	/* magic, "6\0", endianness */
	j = open_at("junk.dat", 13);		/* at the same offset, but no trace */
	assert_int_equal(ust_report_input_opening(&in, NULL, 0), 0);
	assert_int_equal(in.fd, a);
	snprintf(path, sizeof(path), "%s/a.dat", dir);
	assert_non_null(realpath(path, want));
	assert_string_equal(in.path, want);	/* not on this command line: the descriptor's target */
	assert_int_equal(stat(want, &st), 0);
	assert_true(in.dev == st.st_dev && in.ino == st.st_ino);

	/* A second input: the newest descriptor, and the earlier one once skipped. */
	b = open_at("b.dat", 13);
	assert_int_equal(ust_report_input_opening(&in, NULL, 0), 0);
	assert_int_equal(in.fd, b);
	skip[0] = b;
	assert_int_equal(ust_report_input_opening(&in, skip, 1), 0);
	assert_int_equal(in.fd, a);
	skip[1] = a;
	assert_int_equal(ust_report_input_opening(&in, skip, 2), -ENOENT);

	/* Read on past the header: not being loaded any more. */
	assert_int_equal(lseek(b, 14, SEEK_SET), 14);
	assert_int_equal(ust_report_input_opening(&in, &a, 1), -ENOENT);

	close(a);
	close(b);
	close(j);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opening),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
