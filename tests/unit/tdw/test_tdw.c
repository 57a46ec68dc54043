// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_tdw against the real trace-cmd: every file written here must pass
 * `trace-cmd dump -v`, and `trace-cmd report` must print exactly the
 * records written, with their formats, CPUs, comms and timestamps.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include <cmocka.h>

#include <trace-cmd/trace-cmd.h>

#include "ustitch/abi.h"
#include "ustitch/kbits.h"
#include "ustitch/tdw.h"
#include "tdw_testlib.h"

#define SEC	1000000000ULL

/* The message of the last failed call; every call here passes it. */
static char msg[512];
#define ERR	msg, sizeof(msg)

static struct ust_tdw *open_w(const char *path, int cpus)
{
	struct ust_tdw_opts o = { .nr_cpus = cpus, .uname = "Linux test 6.18 x86_64" };
	struct ust_tdw *w = ust_tdw_open(path, &o, ERR);

	assert_non_null(w);
	assert_int_equal(ust_tdw_add_format(w, "ftrace",
					    ust_kbits_get("ftrace/user_unwind_cookie"), ERR), 0);
	assert_int_equal(ust_tdw_add_format(w, "ftrace", ust_kbits_get("ftrace/print"), ERR), 0);
	assert_int_equal(ust_tdw_add_format(w, "sched", ust_kbits_get("sched/sched_switch"), ERR), 0);
	return w;
}

/* user_unwind_cookie: common header + u64 cookie (16 bytes). */
static void put_cookie(struct ust_tdw *w, int buf, int cpu, uint64_t ts, int pid,
		       uint64_t cookie)
{
	unsigned char rec[16] = { 0 };
	uint16_t id = UST_ABI_ID_UNWIND_COOKIE;

	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + UST_ABI_COOKIE_OFF, &cookie, 8);
	if (ust_tdw_event(w, buf, cpu, ts, rec, sizeof(rec), ERR) != 0)
		fail_msg("%s", msg);
}

/* ftrace/print: header, ip, then the NUL-terminated text filling @len bytes. */
static void put_print(struct ust_tdw *w, int cpu, uint64_t ts, int pid, size_t len, char fill)
{
	unsigned char *rec = calloc(1, len);
	uint16_t id = 5;	/* kernel-bits/events/ftrace/print */
	uint64_t ip = 0x1234;

	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &ip, 8);
	memset(rec + 16, fill, len - 17);
	if (ust_tdw_event(w, 0, cpu, ts, rec, len, ERR) != 0)
		fail_msg("%s", msg);
	free(rec);
}

static void put_switch(struct ust_tdw *w, int cpu, uint64_t ts, int prev, const char *pc,
		       int next, const char *nc)
{
	unsigned char rec[64] = { 0 };
	uint16_t id = 372;
	int prio = 120;
	long state = 1;

	memcpy(rec, &id, 2);
	memcpy(rec + 4, &prev, 4);
	strcpy((char *)rec + 8, pc);
	memcpy(rec + 24, &prev, 4);
	memcpy(rec + 28, &prio, 4);
	memcpy(rec + 32, &state, 8);
	strcpy((char *)rec + 40, nc);
	memcpy(rec + 56, &next, 4);
	memcpy(rec + 60, &prio, 4);
	if (ust_tdw_event(w, 0, cpu, ts, rec, sizeof(rec), ERR) != 0)
		fail_msg("%s", msg);
}

static void close_ok(struct ust_tdw *w, const char *path)
{
	if (ust_tdw_close(w, ERR) != 0)
		fail_msg("close: %s", msg);
	assert_true(tt_dump_valid(path));
}

static void expect_report(const char *path, const char *opt, const char *expected)
{
	char *out = tt_report(path, opt);

	assert_non_null(out);
	assert_string_equal(out, expected);
	free(out);
}

static void test_multi_cpu(void **state)
{
	const char *path = tt_path("multi.dat");
	const char *expected =
		"cpus=2\n"
		"           alpha-100   [000]     1.000001: user_unwind_cookie:   cookie=1\n"
		"            beta-200   [001]     1.000002: user_unwind_cookie:   cookie=281474976710659\n"
		"           alpha-100   [000]     1.500000: sched_switch:         prev_comm=alpha prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=beta next_pid=200 next_prio=120\n"
		"           <...>-300   [001]     2.000000: print:                0x1234: hi\n";
	struct ust_tdw *w = open_w(path, 2);
	char *v7;

	(void)state;
	ust_tdw_add_cmdline(w, 100, "alpha", ERR);
	ust_tdw_add_cmdline(w, 200, "beta", ERR);
	put_cookie(w, 0, 0, SEC + 1000, 100, ust_abi_cookie(0, 0));
	put_cookie(w, 0, 1, SEC + 2000, 200, ust_abi_cookie(1, 1));
	put_switch(w, 0, SEC + SEC / 2, 100, "alpha", 200, "beta");
	{
		unsigned char rec[19] = { 5, 0, 0, 0, 44, 1, 0, 0, 0x34, 0x12, 0, 0, 0, 0, 0, 0,
					  'h', 'i', 0 };

		assert_int_equal(ust_tdw_event(w, 0, 1, 2 * SEC, rec, sizeof(rec), ERR), 0);
	}
	close_ok(w, path);
	expect_report(path, NULL, expected);
	/* Nanoseconds as written. */
	{
		char *out = tt_report(path, "-t");

		assert_non_null(strstr(out, "alpha-100   [000]     1.000001000: user_unwind_cookie"));
		assert_non_null(strstr(out, "beta-200   [001]     1.000002000: user_unwind_cookie"));
		free(out);
	}
	v7 = tt_convert_v7_report(path);
	assert_non_null(v7);
	assert_string_equal(v7, expected);
	free(v7);
}

static void test_instance(void **state)
{
	const char *path = tt_path("inst.dat");
	struct ust_tdw *w = open_w(path, 2);
	int b;

	(void)state;
	b = ust_tdw_add_buffer(w, "ust", ERR);
	assert_int_equal(b, 1);
	assert_int_equal(ust_tdw_add_buffer(w, "other", ERR), 2);
	assert_int_equal(ust_tdw_add_buffer(w, "ust", ERR), -EEXIST);
	ust_tdw_add_cmdline(w, 7, "seven", ERR);
	put_cookie(w, 0, 0, SEC, 7, 1);
	put_cookie(w, b, 1, SEC + 500, 7, 3);
	put_cookie(w, b, 0, SEC + 1500, 7, 5);
	put_cookie(w, 2, 1, SEC + 2500, 7, 7);
	put_cookie(w, 0, 1, SEC + 3500, 7, 9);
	close_ok(w, path);
	expect_report(path, NULL,
		      "cpus=2\n"
		      "                  seven-7     [000]     1.000000: user_unwind_cookie:   cookie=1\n"
		      "  ust:            seven-7     [001]     1.000001: user_unwind_cookie:   cookie=3\n"
		      "  ust:            seven-7     [000]     1.000002: user_unwind_cookie:   cookie=5\n"
		      "other:            seven-7     [001]     1.000003: user_unwind_cookie:   cookie=7\n"
		      "                  seven-7     [001]     1.000004: user_unwind_cookie:   cookie=9\n");
	{
		char *v7 = tt_convert_v7_report(path);

		assert_non_null(v7);
		assert_non_null(strstr(v7, "other:            seven-7     [001]"));
		free(v7);
	}
}

static void test_time_extend(void **state)
{
	const char *path = tt_path("extend.dat");
	struct ust_tdw *w = open_w(path, 1);
	unsigned char page[4096];
	struct tt_rec *r;
	uint32_t h;
	int n;

	(void)state;
	put_cookie(w, 0, 0, 1000, 1, 1);
	put_cookie(w, 0, 0, 1000 + (1ULL << 27) - 1, 1, 3);	/* largest plain delta */
	put_cookie(w, 0, 0, 1000 + (1ULL << 27) - 1 + (1ULL << 27), 1, 5); /* just over */
	put_cookie(w, 0, 0, 5000 * SEC + 123456789, 1, 7);	/* delta of 83 minutes */
	put_cookie(w, 0, 0, 5000 * SEC + 123456789, 1, 9);	/* delta 0 */
	close_ok(w, path);
	expect_report(path, "-t",
		      "cpus=1\n"
		      "           <...>-1     [000]     0.000001000: user_unwind_cookie:   cookie=1\n"
		      "           <...>-1     [000]     0.134218727: user_unwind_cookie:   cookie=3\n"
		      "           <...>-1     [000]     0.268436455: user_unwind_cookie:   cookie=5\n"
		      "           <...>-1     [000]  5000.123456789: user_unwind_cookie:   cookie=7\n"
		      "           <...>-1     [000]  5000.123456789: user_unwind_cookie:   cookie=9\n");

	/* One page: the deltas that needed it are preceded by a TIME_EXTEND. */
	n = tt_read_records(path, 1, &r);
	assert_int_equal(n, 5);
	assert_int_equal(r[0].offset & ~4095ULL, r[4].offset & ~4095ULL);
	assert_int_equal(tt_read_page(path, r[0].offset, page), 0);
	assert_int_equal(tt_u64(page), 1000);			/* page timestamp */
	h = tt_u32(page + 16 + 20 * 2);				/* before the 3rd record */
	assert_int_equal(h & 31, 30);
	assert_int_equal(h >> 5, 0);				/* low 27 bits of 2^27 */
	assert_int_equal(tt_u32(page + 16 + 20 * 2 + 4), 1);	/* 2^27 >> 27 */
	assert_int_equal(tt_u32(page + 16 + 20 * 2 + 8) >> 5, 0); /* the event's delta */
	assert_int_equal(r[2].offset, r[1].offset + 20 + 8);
	tt_free_records(r, n);
}

static void test_large_events(void **state)
{
	const char *path = tt_path("large.dat");
	struct ust_tdw *w = open_w(path, 1);
	unsigned char page[4096];
	char big[5000];
	struct tt_rec *r;
	int n;

	(void)state;
	put_print(w, 0, SEC, 1, 112, 'a');	/* largest small event: type_len 28 */
	put_print(w, 0, SEC + 1, 1, 113, 'b');	/* first large one: type_len 0 */
	put_print(w, 0, SEC + 2, 1, 4072, 'c');	/* a whole page */
	put_print(w, 0, SEC + 3, 1, 2001, 'd');
	memset(big, 0, sizeof(big));
	assert_int_equal(ust_tdw_event(w, 0, 0, SEC + 4, big, 4073, ERR), -EINVAL);
	assert_non_null(strstr(msg, "does not fit a page"));
	assert_int_equal(ust_tdw_event(w, 0, 0, SEC + 4, big, 5000, ERR), -EINVAL);
	close_ok(w, path);

	n = tt_read_records(path, 1, &r);
	assert_int_equal(n, 4);
	assert_int_equal(r[0].size, 112);
	assert_int_equal(r[1].size, 116);	/* padded to 4 bytes */
	assert_int_equal(r[2].size, 4072);
	assert_int_equal(r[3].size, 2004);
	assert_int_equal(r[2].data[16], 'c');
	assert_int_equal(r[2].data[4070], 'c');
	assert_int_equal(r[2].data[4071], 0);
	assert_int_equal(r[1].data[113], 0);	/* the alignment padding is zero */
	assert_int_equal(tt_read_page(path, r[0].offset, page), 0);
	assert_int_equal(tt_u32(page + 16) & 31, 28);
	assert_int_equal(tt_u32(page + 16 + 116) & 31, 0);
	assert_int_equal(tt_u32(page + 16 + 116 + 4), 116 + 4);
	/* The whole-page record is alone on its page (offset: its header). */
	assert_int_equal(r[2].offset % 4096, 16);
	assert_int_equal(tt_read_page(path, r[2].offset, page), 0);
	assert_int_equal(tt_u64(page + 8), 4080);
	{
		char *out = tt_report(path, NULL);

		assert_non_null(out);
		assert_non_null(strstr(out, "print:                0x1234: bbbbbbbbbbbbbbbb"));
		assert_non_null(strstr(out, "print:                0x1234: cccccccccccc"));
		free(out);
	}
	tt_free_records(r, n);
}

/*
 * Walk a page the way a reader does; returns the number of data events,
 * sets @padded when a padding event ends it.
 */
static int walk_page(const unsigned char *page, bool *padded)
{
	uint64_t commit = tt_u64(page + 8) & ((1ULL << 27) - 1);
	unsigned int off = 0, type, len;
	int n = 0;

	*padded = false;
	while (off < commit) {
		uint32_t h = tt_u32(page + 16 + off);

		type = h & 31;
		if (type == 29) {
			len = tt_u32(page + 16 + off + 4);
			assert_true((h >> 5) != 0);		/* a sized padding */
			assert_int_equal(off + 4 + len, commit);	/* up to the end */
			*padded = true;
			return n;
		} else if (type == 30) {
			len = 8;
		} else if (type == 0) {
			len = 4 + tt_u32(page + 16 + off + 4);
			n++;
		} else {
			len = 4 + type * 4;
			n++;
		}
		off += len;
	}
	assert_int_equal(off, commit);
	return n;
}

/* Pages fill up; a record that does not fit ends the page with padding. */
static void test_many_pages(void **state)
{
	const char *path = tt_path("pages.dat");
	struct ust_tdw *w = open_w(path, 2);
	unsigned char page[4096];
	struct tt_rec *r;
	int i, n, pages = 0, padded_pages = 0, events = 0;
	uint64_t last = ~0ULL;
	bool padded;
	char *out;

	(void)state;
	for (i = 0; i < 20000; i++)
		put_cookie(w, 0, i % 2, SEC + i * 10ULL, 1, ust_abi_cookie(i % 2, i));
	/* 60-byte records take 64 bytes: a page of them ends 48 bytes short */
	for (i = 0; i < 300; i++)
		put_print(w, 0, 2 * SEC + i, 1, 60, 'x');
	close_ok(w, path);

	n = tt_read_records(path, 2, &r);
	assert_int_equal(n, 20300);
	for (i = 0; i < n; i++) {
		if (r[i].cpu != 0 || (r[i].offset & ~4095ULL) == last)
			continue;
		last = r[i].offset & ~4095ULL;
		assert_int_equal(tt_read_page(path, r[i].offset, page), 0);
		events += walk_page(page, &padded);
		padded_pages += padded;
		pages++;
		/* every page but the last is used up to its end */
		if (i + 204 < n && r[i + 204].cpu == 0)
			assert_int_equal(tt_u64(page + 8), 4080);
	}
	assert_int_equal(events, 10000 + 300);
	/* 10000 cookies of 20 bytes: 49 full pages + 4 records; then
	 * 62 + 63 + 63 + 63 + 49 print records. */
	assert_int_equal(pages, 50 + 4);
	assert_int_equal(padded_pages, 4);
	out = tt_report(path, NULL);
	assert_non_null(out);
	for (n = 0, i = 0; out[i]; i++)
		n += out[i] == '\n';
	assert_int_equal(n, 20300 + 1);
	free(out);
	tt_free_records(r, 20300);
}

static void test_lost(void **state)
{
	const char *path = tt_path("lost.dat");
	struct ust_tdw *w = open_w(path, 2);
	struct tt_rec *r;
	int i, n, b;

	(void)state;
	b = ust_tdw_add_buffer(w, "inst", ERR);
	put_cookie(w, 0, 0, SEC, 1, 1);
	put_cookie(w, 0, 1, SEC + 1000, 1, 3);
	assert_int_equal(ust_tdw_lost(w, 0, 1, 7, ERR), 0);
	put_cookie(w, 0, 1, SEC + 2000, 1, 5);
	put_cookie(w, 0, 1, SEC + 3000, 1, 7);
	/* count unknown */
	assert_int_equal(ust_tdw_lost(w, 0, 0, 0, ERR), 0);
	put_cookie(w, 0, 0, SEC + 4000, 1, 9);
	/* two losses in a row add up */
	assert_int_equal(ust_tdw_lost(w, b, 0, 3, ERR), 0);
	assert_int_equal(ust_tdw_lost(w, b, 0, 4, ERR), 0);
	put_cookie(w, b, 0, SEC + 5000, 1, 11);
	/* a loss with nothing after it: an empty page */
	assert_int_equal(ust_tdw_lost(w, 0, 1, 2, ERR), 0);
	close_ok(w, path);
	expect_report(path, NULL,
		      /*
		       * trace-cmd prints the buffer-name column, then the drop
		       * notice, then the record without that column.
		       */
		      "cpus=2\n"
		      "                 <...>-1     [000]     1.000000: user_unwind_cookie:   cookie=1\n"
		      "                 <...>-1     [001]     1.000001: user_unwind_cookie:   cookie=3\n"
		      "      CPU:1 [7 EVENTS DROPPED]\n"
		      "           <...>-1     [001]     1.000002: user_unwind_cookie:   cookie=5\n"
		      "                 <...>-1     [001]     1.000003: user_unwind_cookie:   cookie=7\n"
		      "      CPU:0 [EVENTS DROPPED]\n"
		      "           <...>-1     [000]     1.000004: user_unwind_cookie:   cookie=9\n"
		      "inst: CPU:0 [7 EVENTS DROPPED]\n"
		      "           <...>-1     [000]     1.000005: user_unwind_cookie:   cookie=11\n");
	n = tt_read_records(path, 2, &r);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		long long want = 0;

		if (r[i].cpu == 1 && tt_u64(r[i].data + 8) == 5)
			want = 7;
		if (r[i].cpu == 0 && tt_u64(r[i].data + 8) == 9)
			want = -1;	/* missed, count not stored */
		if (r[i].buf[0])
			want = 7;
		assert_int_equal(r[i].missed, want);
	}
	tt_free_records(r, n);
}

/* A full page leaves no room for the count: only the missed bit is set. */
static void test_lost_full_page(void **state)
{
	const char *path = tt_path("lostfull.dat");
	struct ust_tdw *w = open_w(path, 1);
	unsigned char page[4096];
	struct tt_rec *r;
	int i, n;

	(void)state;
	assert_int_equal(ust_tdw_lost(w, 0, 0, 99, ERR), 0);
	for (i = 0; i < 204; i++)	/* 204 * 20 = 4080 */
		put_cookie(w, 0, 0, SEC + i, 1, 1);
	put_cookie(w, 0, 0, SEC + 204, 1, 3);
	close_ok(w, path);
	n = tt_read_records(path, 1, &r);
	assert_int_equal(n, 205);
	assert_int_equal(r[0].missed, -1);
	assert_int_equal(r[204].missed, 0);
	assert_int_equal(tt_read_page(path, r[0].offset, page), 0);
	assert_int_equal(tt_u64(page + 8), 4080 | (1ULL << 31));
	tt_free_records(r, n);
}

/* Pages copied verbatim (the recorder's path) mix with packed records. */
static void test_raw_page(void **state)
{
	const char *src = tt_path("rawsrc.dat"), *dst = tt_path("rawdst.dat");
	struct ust_tdw *w = open_w(src, 1);
	unsigned char page[4096];
	struct tt_rec *r;
	int n;

	(void)state;
	put_cookie(w, 0, 0, SEC, 1, 1);
	put_cookie(w, 0, 0, SEC + 1000, 1, 3);
	close_ok(w, src);
	n = tt_read_records(src, 1, &r);
	assert_int_equal(n, 2);
	assert_int_equal(tt_read_page(src, r[0].offset, page), 0);
	tt_free_records(r, n);

	w = open_w(dst, 1);
	put_cookie(w, 0, 0, SEC - 5000, 1, 5);	/* own page, ended by the raw one */
	assert_int_equal(ust_tdw_raw_page(w, 0, 0, page, 16 + 40, ERR), 0);	/* short read */
	put_cookie(w, 0, 0, SEC + 2000, 1, 7);
	assert_int_equal(ust_tdw_raw_page(w, 0, 0, page, 4097, ERR), -EINVAL);
	assert_int_equal(ust_tdw_raw_page(w, 0, 0, page, 8, ERR), -EINVAL);
	close_ok(w, dst);
	expect_report(dst, NULL,
		      "cpus=1\n"
		      "           <...>-1     [000]     0.999995: user_unwind_cookie:   cookie=5\n"
		      "           <...>-1     [000]     1.000000: user_unwind_cookie:   cookie=1\n"
		      "           <...>-1     [000]     1.000001: user_unwind_cookie:   cookie=3\n"
		      "           <...>-1     [000]     1.000002: user_unwind_cookie:   cookie=7\n");
}

static void test_errors(void **state)
{
	const char *path = tt_path("errors.dat");
	struct ust_tdw_opts o = { .nr_cpus = 2 };
	struct ust_tdw *w;
	unsigned char rec[16] = { 16 };

	(void)state;
	assert_null(ust_tdw_open(tt_path("no/such/dir/x.dat"), &o, ERR));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(msg, "No such file"));
	/* no message wanted: errno still says why */
	assert_null(ust_tdw_open(tt_path("no/such/dir/x.dat"), &o, NULL, 0));
	assert_int_equal(errno, ENOENT);
	o.nr_cpus = 0;
	assert_null(ust_tdw_open(path, &o, ERR));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(msg, "CPU count"));
	o.nr_cpus = 2;
	o.page_size = 1000;
	assert_null(ust_tdw_open(path, &o, ERR));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(msg, "page size"));
	o.page_size = 0;
	o.header_page = "nonsense";
	assert_null(ust_tdw_open(path, &o, ERR));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(msg, "header_page"));
	o.header_page = NULL;

	w = open_w(path, 2);
	assert_int_equal(ust_tdw_event(w, 0, 1, 2000, rec, sizeof(rec), ERR), 0);
	assert_int_equal(ust_tdw_event(w, 0, 1, 1999, rec, sizeof(rec), ERR), -EINVAL);
	assert_string_equal(msg,
			    "buffer top cpu 1: timestamp 1999 is before the previous record's 2000");
	/* other CPUs keep their own order */
	assert_int_equal(ust_tdw_event(w, 0, 0, 10, rec, sizeof(rec), ERR), 0);
	assert_int_equal(ust_tdw_event(w, 0, 2, 3000, rec, sizeof(rec), ERR), -EINVAL);
	assert_non_null(strstr(msg, "no CPU 2"));
	assert_int_equal(ust_tdw_event(w, 1, 0, 3000, rec, sizeof(rec), ERR), -EINVAL);
	assert_non_null(strstr(msg, "no buffer 1"));
	assert_int_equal(ust_tdw_event(w, 0, 0, 3000, rec, 0, ERR), -EINVAL);
	assert_int_equal(ust_tdw_lost(w, 0, -1, 1, ERR), -EINVAL);
	assert_int_equal(ust_tdw_lost(w, 0, -1, 1, NULL, 0), -EINVAL);
	/* formats: the same again is fine, a clash is not */
	assert_int_equal(ust_tdw_add_format(w, "ftrace",
					    ust_kbits_get("ftrace/user_unwind_cookie"), ERR), 0);
	assert_int_equal(ust_tdw_add_format(w, "ftrace",
					    ust_kbits_get("ftrace/user_unwind_stack"), ERR), 0);
	assert_int_equal(ust_tdw_add_format(w, "ftrace",
				ust_kbits_get("ftrace/user_unwind_stack.stack-only"), ERR), -EEXIST);
	assert_non_null(strstr(msg, "clashes"));
	assert_int_equal(ust_tdw_add_format(w, "x", "no header", ERR), -EINVAL);
	assert_int_equal(ust_tdw_add_cmdline(w, 5, "two\nlines", ERR), -EINVAL);
	assert_int_equal(ust_tdw_add_buffer(w, "", ERR), -EINVAL);
	/* the errors left the file intact */
	close_ok(w, path);

	/* abort removes the file */
	w = open_w(path, 1);
	assert_int_equal(ust_tdw_event(w, 0, 0, 1, rec, sizeof(rec), ERR), 0);
	ust_tdw_abort(w);
	assert_int_equal(access(path, F_OK), -1);
}

/*
 * A failed staging write stops the writer: that call returns the errno with
 * the reason, every later write and the close return the same errno, and no
 * file is left (the trace would lack a page).
 */
static void test_stopped(void **state)
{
	const char *path = tt_path("stopped.dat");
	struct ust_tdw *w = open_w(path, 1);
	unsigned char *rec = calloc(1, 4072);
	struct rlimit old, lim;
	char want[512];
	uint16_t id = 5;	/* ftrace/print, a whole page */
	int i, ret = 0;

	(void)state;
	assert_non_null(rec);
	memcpy(rec, &id, 2);
	memset(rec + 16, 'a', 4072 - 17);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 3 * 4096;	/* a few staged pages */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	/* Staged pages are buffered 256 KiB (TDW_STAGE_BUF) at a time: the
	 * write that fails is the one flushing the 65th page. */
	for (i = 0; i < 100 && !ret; i++)
		ret = ust_tdw_event(w, 0, 0, SEC + i, rec, 4072, ERR);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_in_range(i, 60, 70);
	assert_int_equal(ret, -EFBIG);
	snprintf(want, sizeof(want), "%s: staging file: write failed: File too large", path);
	assert_string_equal(msg, want);
	/* the limit is gone, the writer stays stopped */
	assert_int_equal(ust_tdw_event(w, 0, 0, 2 * SEC, rec, 4072, ERR), -EFBIG);
	snprintf(want, sizeof(want), "%s: staging file: an earlier write failed: File too large",
		 path);
	assert_string_equal(msg, want);
	assert_int_equal(ust_tdw_lost(w, 0, 0, 1, NULL, 0), -EFBIG);
	assert_int_equal(ust_tdw_close(w, ERR), -EFBIG);
	assert_int_equal(access(path, F_OK), -1);
	free(rec);
}

/*
 * Until close, the path holds a small trace that says it is unfinished (a
 * writer killed mid-way leaves it); close puts the whole file there, abort
 * removes it.
 */
static void test_unfinished(void **state)
{
	const char *path = tt_path("unfinished.dat");
	struct ust_tdw *w = open_w(path, 1);
	char *rep = tt_report(path, NULL), want[256];
	uint16_t id = 5;
	unsigned char rec[32] = { 0 };

	(void)state;
	assert_non_null(rep);
	snprintf(want, sizeof(want), "unfinished:           UNFINISHED: %s (pid %d) has not "
		 "finished writing this trace: it is still running, or it was killed before "
		 "the end; its events are not in this file\n", program_invocation_short_name,
		 (int)getpid());
	assert_non_null(strstr(rep, want));
	free(rep);
	memcpy(rec, &id, 2);
	assert_int_equal(ust_tdw_event(w, 0, 0, SEC, rec, sizeof(rec), ERR), 0);
	close_ok(w, path);
	rep = tt_report(path, NULL);
	assert_non_null(rep);
	assert_null(strstr(rep, "UNFINISHED"));
	assert_non_null(strstr(rep, "print:"));
	free(rep);
}

/* Metadata sections: kallsyms, printk formats, clock, page header. */
static void test_metadata(void **state)
{
	static const char kallsyms[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81001000 T do_thing\n";
	const char *path = tt_path("meta.dat");
	const char *argv[] = { tt.trace_cmd, "dump", "--summary", "-i", path, NULL };
	struct ust_tdw_opts o = { .nr_cpus = 3, .clock = "mono", .uname = "U" };
	struct ust_tdw *w = ust_tdw_open(path, &o, ERR);
	char *out, *err;

	(void)state;
	assert_non_null(w);
	assert_int_equal(ust_tdw_set_kallsyms(w, kallsyms, strlen(kallsyms), ERR), 0);
	assert_int_equal(ust_tdw_set_printk(w, "0xffffffff82000000 : \"hello\"\n", 29, ERR), 0);
	assert_int_equal(ust_tdw_add_format(w, "ftrace", ust_kbits_get("ftrace/print"), ERR), 0);
	{
		unsigned char rec[20] = { 5, 0, 0, 0, 1, 0, 0, 0, 0x00, 0x10, 0, 0x81, 0xff, 0xff,
					  0xff, 0xff, 'o', 'k', 0 };

		assert_int_equal(ust_tdw_event(w, 0, 2, 1000, rec, sizeof(rec), ERR), 0);
	}
	close_ok(w, path);
	assert_int_equal(tt_run(argv, NULL, &out, &err), 0);
	assert_non_null(strstr(out, "[Kallsyms, 54 bytes]"));
	assert_non_null(strstr(out, "[Trace printk, 29 bytes]"));
	assert_non_null(strstr(out, "3 [CPUs with tracing data]"));
	assert_non_null(strstr(out, "local global counter uptime perf [mono] mono_raw"));
	free(out);
	free(err);
	/* kallsyms reach the reader: %ps of the print format resolves */
	expect_report(path, NULL,
		      "cpus=3\n"
		      "           <...>-1     [002]     0.000001: print:                do_thing: ok\n");
}

/* libtracecmd's name, start and size of @addr in the file @path. */
struct named {
	char name[256];
	unsigned long long start;
	unsigned long size;
	bool found;
};

static void name_all(const char *path, const uint64_t *addrs, size_t n, struct named *out)
{
	struct tracecmd_input *h = tracecmd_open(path, 0);
	struct tep_handle *tep;

	assert_non_null(h);
	tep = tracecmd_get_tep(h);
	assert_non_null(tep);
	for (size_t i = 0; i < n; i++) {
		const char *name = NULL;

		/* 1: found (a libtraceevent boolean, not an error code). */
		out[i].found = tep_find_function_info(tep, addrs[i], &name, &out[i].start,
						      &out[i].size) == 1 && name;
		snprintf(out[i].name, sizeof(out[i].name), "%s", out[i].found ? name : "");
	}
	tracecmd_close(h);
}

/*
 * kallsyms cut to some addresses (ust_tdw_kallsyms_cut): libtracecmd names
 * each of them, from this machine's /proc/kallsyms, as it does with the
 * whole text (name, start, size), and the cut is a small part of it.
 */
static void test_kallsyms_cut(void **state)
{
	enum { MAX = 400 };
	static uint64_t addrs[MAX];
	static struct named whole[MAX], cut[MAX];
	const char *pw = tt_path("ks-whole.dat"), *pc = tt_path("ks-cut.dat");
	struct ust_tdw *w;
	size_t len = 0, cap = 0, n = 0, lines = 0, clen, step;
	char *text = NULL, *copy, line[512];
	uint64_t seed = 42;
	FILE *f;

	(void)state;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f)) {
		size_t l = strlen(line);

		if (len + l + 1 > cap) {
			text = realloc(text, cap = (cap + l + 1) * 2);
			assert_non_null(text);
		}
		memcpy(text + len, line, l);
		len += l;
		lines++;
	}
	fclose(f);
	if (!len || !strtoull(text, NULL, 16)) {
		free(text);
		skip();		/* addresses hidden (kptr_restrict) */
	}
	/* Lines spread over the file (modules' too), at, after and before
	 * their symbol; and addresses below and above every symbol. */
	step = lines / (MAX / 4 - 1) + 1;
	for (size_t pos = 0, k = 0; pos < len && n + 4 <= MAX - 2; k++) {
		char *nl = memchr(text + pos, '\n', len - pos);
		uint64_t a = strtoull(text + pos, NULL, 16);

		if (k % step == 0 && a) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			addrs[n++] = a;
			addrs[n++] = a + 1;
			addrs[n++] = a + (seed >> 56);
			addrs[n++] = a - 1;
		}
		pos = nl ? (size_t)(nl - text) + 1 : len;
	}
	addrs[n++] = 0x1000;
	addrs[n++] = ~0ULL - 0xff;
	copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, text, len);
	clen = ust_tdw_kallsyms_cut(copy, len, addrs, n);
	assert_true(clen > 0 && clen < len / 20);
	w = open_w(pw, 1);
	assert_int_equal(ust_tdw_set_kallsyms(w, text, len, ERR), 0);
	close_ok(w, pw);
	w = open_w(pc, 1);
	assert_int_equal(ust_tdw_set_kallsyms(w, copy, clen, ERR), 0);
	close_ok(w, pc);
	name_all(pw, addrs, n, whole);
	name_all(pc, addrs, n, cut);
	for (size_t i = 0, named = 0; i < n; i++) {
		named += whole[i].found;
		if (i == n - 1)
			assert_true(named >= n / 2);
		if (whole[i].found != cut[i].found || strcmp(whole[i].name, cut[i].name) ||
		    whole[i].start != cut[i].start || whole[i].size != cut[i].size)
			fail_msg("0x%llx: whole kallsyms %s 0x%llx/0x%lx, cut %s 0x%llx/0x%lx",
				 (unsigned long long)addrs[i], whole[i].name, whole[i].start,
				 whole[i].size, cut[i].name, cut[i].start, cut[i].size);
	}
	/* No address at all: nothing is kept. */
	assert_int_equal(ust_tdw_kallsyms_cut(copy, clen, NULL, 0), 0);
	free(copy);
	free(text);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_cpu),
		cmocka_unit_test(test_instance),
		cmocka_unit_test(test_time_extend),
		cmocka_unit_test(test_large_events),
		cmocka_unit_test(test_many_pages),
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_lost_full_page),
		cmocka_unit_test(test_raw_page),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_stopped),
		cmocka_unit_test(test_unfinished),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_kallsyms_cut),
	};
	int ret = tt_init(argc, argv, false);

	if (ret)
		return ret;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	tt_fini();
	return ret;
}
