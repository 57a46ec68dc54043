// SPDX-License-Identifier: LGPL-2.1
/* Unit tests of ust_stitch, ust_hmap and ust_stack_text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/abi.h"
#include "ustitch/hmap.h"
#include "ustitch/stack_text.h"
#include "ustitch/stitch.h"

static void test_hmap(void **state)
{
	struct ust_hmap m;
	uint64_t v, i;

	(void)state;
	ust_hmap_init(&m);
	assert_false(ust_hmap_get(&m, 1, &v));
	for (i = 0; i < 100000; i++)
		assert_int_equal(ust_hmap_put(&m, i * 2 + 1, i), 0);
	assert_int_equal(m.len, 100000);
	for (i = 0; i < 100000; i++) {
		assert_true(ust_hmap_get(&m, i * 2 + 1, &v));
		assert_true(v == i);
		assert_false(ust_hmap_get(&m, i * 2 + 2, NULL));
	}
	assert_int_equal(ust_hmap_put(&m, 1, 77), 0);
	assert_true(ust_hmap_get(&m, 1, &v) && v == 77);
	assert_int_equal(m.len, 100000);
	ust_hmap_fini(&m);
}

/* A decoded stack whose frames live in @raw (full layout, long 8). */
static void mkstack(struct ust_dec_stack *s, uint8_t *raw, uint64_t cookie, unsigned int n)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->cookie = cookie;
	s->nr = n;
	s->long_size = 8;
	for (i = 0; i < n; i++) {
		uint64_t off = 0x1000 + i, ino = 100 + i;
		uint32_t dev = UST_ABI_MKKDEV(254, 3);

		memcpy(raw + i * 8, &off, 8);
		memcpy(raw + n * 8 + i * 8, &ino, 8);
		memcpy(raw + n * 16 + i * 4, &dev, 4);
	}
	s->stack = raw;
	s->inodes = raw + n * 8;
	s->dev = raw + n * 16;
}

static struct ust_stitch_req req(uint64_t off, uint64_t cookie, uint64_t ts, int cpu, int buf, int pid)
{
	struct ust_stitch_req r = {
		.rec_off = off, .cookie = cookie, .ts = ts, .cpu = cpu, .buf = buf,
		.pid = pid, .req_id = 305, .req_pid = pid, .req_off = off - 16, .req_ts = ts,
	};
	return r;
}

static void test_one_stack_many_events(void **state)
{
	struct ust_stitch st;
	struct ust_stitch_stats stats;
	struct ust_dec_stack s;
	struct ust_stitch_req r;
	struct ust_stitch_stack *e;
	uint8_t raw[512];
	uint64_t c1 = ust_abi_cookie(1, 1), c2 = ust_abi_cookie(0, 7);

	(void)state;
	ust_stitch_init(&st);
	/* three events of one kernel entry on CPU 1 ... */
	r = req(4096, c1, 100, 1, 0, 10); ust_stitch_add_request(&st, &r);
	r = req(4128, c1, 110, 1, 0, 10); ust_stitch_add_request(&st, &r);
	r = req(4160, c1, 120, 1, 0, 10); ust_stitch_add_request(&st, &r);
	/* ... whose stack lands on CPU 0 after a migration */
	mkstack(&s, raw, c1, 4);
	assert_int_equal(ust_stitch_add_stack(&st, 0, 0, 130, 8192, 10, &s, true, NULL), 0);
	/* a request whose stack never arrives */
	r = req(4192, c2, 140, 0, 0, 11); ust_stitch_add_request(&st, &r);
	/* a stack nobody asked for */
	mkstack(&s, raw, ust_abi_cookie(1, 99), 2);
	ust_stitch_add_stack(&st, 0, 1, 150, 8256, 12, &s, true, NULL);
	/* a malformed stack: its cookie is never used */
	mkstack(&s, raw, c2, 2);
	ust_stitch_add_stack(&st, 0, 1, 160, 8320, 11, &s, true, "stack array length 20 is not a multiple of 8");
	ust_stitch_finish(&st, &stats);

	assert_int_equal(stats.requests, 4);
	assert_int_equal(stats.stacks, 3);
	assert_int_equal(stats.unresolved, 1);
	assert_int_equal(stats.orphan_stacks, 1);
	assert_int_equal(stats.bad_stacks, 1);

	e = ust_stitch_lookup(&st, c1, 0);
	assert_non_null(e);
	assert_int_equal(e->nr_req, 3);
	assert_int_equal(e->nr, 4);
	assert_true(e->frames[3].off == 0x1003 && e->frames[3].ino == 103);
	assert_int_equal(e->cpu, 0);
	assert_null(ust_stitch_lookup(&st, c2, 0));
	assert_ptr_equal(ust_stitch_stack_at(&st, 8192), e);
	assert_non_null(ust_stitch_req_at(&st, 4160));
	assert_null(ust_stitch_req_at(&st, 4161));
	assert_false(ust_stitch_lost_after(&st, 140));
	ust_stitch_fini(&st);
}

static void test_buffers_and_duplicates(void **state)
{
	struct ust_stitch st;
	struct ust_dec_stack s;
	struct ust_stitch_req r;
	uint8_t raw[512];
	uint64_t c = ust_abi_cookie(0, 3);

	(void)state;
	ust_stitch_init(&st);
	r = req(100, c, 10, 0, 1, 5); ust_stitch_add_request(&st, &r);
	r = req(200, c, 10, 0, 0, 5); ust_stitch_add_request(&st, &r);
	mkstack(&s, raw, c, 1);
	ust_stitch_add_stack(&st, 0, 0, 20, 300, 5, &s, true, NULL);
	mkstack(&s, raw, c, 2);
	ust_stitch_add_stack(&st, 1, 0, 21, 400, 5, &s, true, NULL);
	ust_stitch_add_lost(&st, 50, 7);
	ust_stitch_finish(&st, NULL);
	/* each instance buffer prefers its own stack */
	assert_int_equal(ust_stitch_lookup(&st, c, 0)->nr, 1);
	assert_int_equal(ust_stitch_lookup(&st, c, 1)->nr, 2);
	/* a buffer without one takes the first that arrived */
	assert_int_equal(ust_stitch_lookup(&st, c, 2)->nr, 1);
	assert_int_equal(ust_stitch_lookup(&st, c, 0)->nr_dup, 1);
	assert_true(ust_stitch_lost_after(&st, 40));
	assert_false(ust_stitch_lost_after(&st, 51));
	assert_int_equal(st.lost_events, 7);
	ust_stitch_fini(&st);
}

/* The stack of the request whose cookie record is at @off: its frame count. */
static int req_frames(const struct ust_stitch *st, uint64_t off)
{
	const struct ust_stitch_stack *e = ust_stitch_req_stack(st, ust_stitch_req_at(st, off));

	return e ? (int)e->nr : 0;
}

/* A request of task @pid at @ts, and when @nr, its stack @nr frames long,
 * on CPU @scpu at @sts (file offsets: the times, times 10). */
static void entry(struct ust_stitch *st, uint64_t cookie, int pid, uint64_t ts, int nr, int scpu,
		  uint64_t sts)
{
	struct ust_stitch_req r = req(ts * 10, cookie, ts, 2, 0, pid);
	struct ust_dec_stack s;
	uint8_t raw[512];

	ust_stitch_add_request(st, &r);
	if (!nr)
		return;
	mkstack(&s, raw, cookie, (unsigned int)nr);
	ust_stitch_add_stack(st, 0, scpu, sts, sts * 10, pid, &s, true, NULL);
}

/*
 * A cookie reused after its CPU's counter wrapped, with records lost: each
 * request gets the stack of its own kernel entry, or none, never the other
 * holder's (the lost-event torture, tests/e2e/torture.sh, found both).
 */
static void test_reused_cookie(void **state)
{
	struct ust_stitch st;
	uint64_t c = ust_abi_cookie(2, 5), d = ust_abi_cookie(2, 6);

	(void)state;
	ust_stitch_init(&st);
	/* task 10 holds c, then task 11 after the wrap: each its own stack,
	 * though task 11's stack comes first by CPU */
	entry(&st, c, 10, 100, 1, 3, 110);
	entry(&st, c, 11, 200, 2, 1, 210);
	/* task 12 holds c; its stack is lost; then d; then c again after a
	 * wrap, whose stack arrives: not the first entry's */
	entry(&st, c, 12, 300, 0, 0, 0);
	entry(&st, d, 12, 400, 4, 2, 410);
	entry(&st, c, 12, 500, 3, 2, 510);
	/* task 13's stack is lost; no other holder's is shown for it */
	entry(&st, c, 13, 600, 0, 0, 0);
	ust_stitch_finish(&st, NULL);

	assert_int_equal(req_frames(&st, 1000), 1);
	assert_int_equal(req_frames(&st, 2000), 2);
	assert_int_equal(req_frames(&st, 3000), 0);
	assert_int_equal(req_frames(&st, 4000), 4);
	assert_int_equal(req_frames(&st, 5000), 3);
	assert_int_equal(req_frames(&st, 6000), 0);
	assert_int_equal(ust_stitch_stack_at(&st, 5100)->nr_req, 1);
	ust_stitch_fini(&st);
}

/*
 * A coarse trace clock (a guest's, in milliseconds): a task's entries and
 * their stacks all at one time, on one CPU, in file order.  Each request
 * gets the stack written after it in its CPU's records (the kernel's own
 * records in the vm lane's 7.3-deferred guest lost all but the first two).
 */
static void test_same_time(void **state)
{
	struct ust_stitch st;
	struct ust_dec_stack s;
	uint8_t raw[512];
	int i;

	(void)state;
	ust_stitch_init(&st);
	for (i = 0; i < 5; i++) {
		uint64_t c = ust_abi_cookie(0, 3 + i);
		struct ust_stitch_req r = req(1000 + 100 * i, c, 5000, 2, 0, 10);

		ust_stitch_add_request(&st, &r);
		mkstack(&s, raw, c, (unsigned int)(i + 1));
		ust_stitch_add_stack(&st, 0, 2, 5000, 1050 + 100 * i, 10, &s, true, NULL);
	}
	ust_stitch_finish(&st, NULL);
	for (i = 0; i < 5; i++) {
		assert_int_equal(req_frames(&st, 1000 + 100 * i), i + 1);
		assert_int_equal(ust_stitch_stack_at(&st, 1050 + 100 * i)->nr_req, 1);
	}
	ust_stitch_fini(&st);
}

/* @n contents of one raw frame each, 0x100000 + i: "\n=> 0x1000XX", 13 bytes kept. */
#define TEXT_LEN	13

static void mkcontents(struct ust_stitch *st, unsigned int n)
{
	unsigned int i;

	ust_stitch_init(st);
	st->contents = calloc(n, sizeof(*st->contents));
	assert_non_null(st->contents);
	st->nr_contents = st->cap_contents = n;
	for (i = 0; i < n; i++) {
		st->contents[i].frames = calloc(1, sizeof(struct ust_dec_frame));
		assert_non_null(st->contents[i].frames);
		st->contents[i].frames[0].off = 0x100000 + i;
		st->contents[i].nr = 1;
	}
}

static void get_text(struct ust_stack_text *t, struct ust_stitch *st, struct ust_render *r,
		     uint32_t i)
{
	char want[32];

	snprintf(want, sizeof(want), "\n=> 0x%x", 0x100000 + i);
	assert_string_equal(ust_stack_text_get(t, st, i, r), want);
}

static void test_stack_text(void **state)
{
	struct ust_render r = { 0 };
	struct ust_stack_text t;
	struct ust_stitch st;
	uint32_t i;

	(void)state;
	mkcontents(&st, 400);
	/* 256 texts fill the budget and the ring, not wrapped */
	ust_stack_text_init(&t, 256 * TEXT_LEN);
	for (i = 0; i < 256; i++)
		get_text(&t, &st, &r, i);
	assert_int_equal(t.bytes, 256 * TEXT_LEN);
	assert_int_equal(t.ring_nr, 256);
	/* all printed since: a round of second chances, then the oldest goes */
	get_text(&t, &st, &r, 256);
	assert_null(st.contents[0].rendered);
	assert_non_null(st.contents[1].rendered);
	assert_int_equal(t.bytes, 256 * TEXT_LEN);
	/* 1 printed again stays; 2, not, goes */
	get_text(&t, &st, &r, 1);
	get_text(&t, &st, &r, 257);
	assert_non_null(st.contents[1].rendered);
	assert_null(st.contents[2].rendered);
	assert_non_null(st.contents[3].rendered);
	/* a full ring, wrapped, grows in order: 3..256, 1, 257, then 258 */
	assert_int_equal(t.ring_nr, t.ring_cap);
	assert_int_not_equal(t.ring_head, 0);
	t.budget = 300 * TEXT_LEN;
	get_text(&t, &st, &r, 258);
	assert_int_equal(t.ring_head, 0);
	assert_int_equal(t.ring_nr, 257);
	for (i = 0; i < 254; i++)
		assert_int_equal(t.ring[i], 3 + i);
	assert_int_equal(t.ring[254], 1);
	assert_int_equal(t.ring[255], 257);
	assert_int_equal(t.ring[256], 258);
	/* a text over the budget is printed, not kept; one freed, rendered again */
	t.budget = TEXT_LEN - 1;
	get_text(&t, &st, &r, 399);
	assert_null(st.contents[399].rendered);
	get_text(&t, &st, &r, 0);
	assert_null(st.contents[0].rendered);
	assert_int_equal(t.peak, 257 * TEXT_LEN);
	assert_int_equal(ust_stack_text_peak_bytes(&t), 257 * TEXT_LEN + t.ring_cap * sizeof(uint32_t));
	ust_stack_text_fini(&t);
	ust_render_fini(&r);
	ust_stitch_fini(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmap),
		cmocka_unit_test(test_one_stack_many_events),
		cmocka_unit_test(test_buffers_and_duplicates),
		cmocka_unit_test(test_reused_cookie),
		cmocka_unit_test(test_same_time),
		cmocka_unit_test(test_stack_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
