// SPDX-License-Identifier: LGPL-2.1
/* ust_perf_ring against synthetic rings: order, wrap-around, corruption. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/perf.h"
#include "ustitch/perf_ring.h"
#include "synth.h"

struct got {
	uint64_t times[64];
	size_t sizes[64];
	int n;
	bool aligned;
	int stop_after;		/* return -1 for record number stop_after (1-based) */
};

static int collect(const void *rec, size_t size, void *ctx)
{
	struct got *g = ctx;
	struct ust_perf_layout l;
	struct ust_perf_event ev;
	char what[160], err[160];

	if (g->stop_after && g->n + 1 == g->stop_after)
		return -1;
	assert_int_equal(ust_perf_layout_init(&l, SYNTH_SAMPLE_TYPE, true, err, sizeof(err)), 0);
	if ((uintptr_t)rec & 7)
		g->aligned = false;
	assert_int_equal(ust_perf_parse(&l, rec, size, &ev, what, sizeof(what)), 0);
	g->times[g->n] = ev.id.time;
	g->sizes[g->n] = size;
	g->n++;
	return 0;
}

static size_t put_sample(struct synth_ring *s, uint64_t time, unsigned int nr_kernel)
{
	uint64_t k[32];
	struct synth_chain ch = { .kernel = k, .nr_kernel = nr_kernel };
	struct synth_id id = { .pid = 10, .tid = 11, .time = time, .cpu = 1 };
	struct synth_rec r;
	size_t len;
	unsigned int i;

	for (i = 0; i < nr_kernel; i++)
		k[i] = 0xffffffff81000000ULL + i;
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_KERNEL, &id, k[0], 1000, &ch);
	synth_ring_put(s, r.b, len);
	return len;
}

static void test_in_order(void **state)
{
	struct synth_ring s;
	struct ust_perf_ring r;
	struct got g = { .aligned = true };
	int i;

	(void)state;
	synth_ring_init(&s, 4096, 0);
	assert_int_equal(ust_perf_ring_init(&r, &s.meta, s.data, s.size), 0);
	for (i = 0; i < 5; i++)
		put_sample(&s, 100 + i, 3);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(g.times[i], 100 + i);
	assert_true(g.aligned);
	/* Everything consumed: the tail caught up with the head. */
	assert_int_equal(s.meta.data_tail, s.meta.data_head);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 0);
	ust_perf_ring_fini(&r);
	synth_ring_free(&s);
}

/* Records straddling the end of the data area come out whole. */
static void test_wrap(void **state)
{
	struct synth_ring s;
	struct ust_perf_ring r;
	struct got g = { .aligned = true };
	uint64_t start;
	int i, total = 0;

	(void)state;
	/* Start a few bytes before the end, and go round several times. */
	for (start = 1024 - 64; start < 1024; start += 8) {
		synth_ring_init(&s, 1024, start + 1024 * 3);
		assert_int_equal(ust_perf_ring_init(&r, &s.meta, s.data, s.size), 0);
		g.n = 0;
		for (i = 0; i < 3; i++)
			put_sample(&s, 200 + i, 7);	/* 8 + 40 + 8 + 64 = 120 bytes each */
		assert_int_equal(ust_perf_ring_read(&r, collect, &g), 3);
		for (i = 0; i < 3; i++)
			assert_int_equal(g.times[i], 200 + i);
		total += g.n;
		assert_int_equal(r.bad, 0);
		ust_perf_ring_fini(&r);
		synth_ring_free(&s);
	}
	assert_int_equal(total, 3 * 8);
	assert_true(g.aligned);
}

/* The kernel is still writing: a partial header, or a size past the head. */
static void test_oversized_and_truncated(void **state)
{
	struct synth_ring s;
	struct ust_perf_ring r;
	struct got g = { .aligned = true };
	struct synth_rec rec;
	struct synth_id id = { .pid = 1, .tid = 1, .time = 5, .cpu = 0 };
	size_t len;

	(void)state;
	synth_ring_init(&s, 4096, 0);
	assert_int_equal(ust_perf_ring_init(&r, &s.meta, s.data, s.size), 0);
	put_sample(&s, 1, 2);
	/* A header claiming more bytes than were written. */
	len = synth_sample(&rec, SYNTH_SAMPLE_TYPE, 0, &id, 0, 1, NULL);
	synth_ring_put(&s, rec.b, len - 8);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 1);
	assert_int_equal(g.n, 1);
	assert_int_equal(r.bad, 1);
	assert_int_equal(s.meta.data_tail, s.meta.data_head);	/* skipped, not reread */

	/* Four bytes: not even a header. */
	synth_ring_put(&s, rec.b, 4);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 0);
	assert_int_equal(r.bad, 2);

	/* A size that is not a multiple of 8, and one below the header's. */
	synth_end(&rec);
	rec.b[6] = (uint8_t)(len - 4);
	synth_ring_put(&s, rec.b, len);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 0);
	assert_int_equal(r.bad, 3);
	rec.b[6] = 4;
	rec.b[7] = 0;
	synth_ring_put(&s, rec.b, len);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 0);
	assert_int_equal(r.bad, 4);

	/* A head more than a ring ahead of the tail. */
	s.meta.data_head = s.meta.data_tail + s.size + 8;
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 0);
	assert_int_equal(r.bad, 5);

	/* And reading goes on afterwards. */
	put_sample(&s, 9, 1);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 1);
	assert_int_equal(g.times[g.n - 1], 9);
	ust_perf_ring_fini(&r);
	synth_ring_free(&s);
}

/* A callback that stops leaves its record for the next read. */
static void test_stop(void **state)
{
	struct synth_ring s;
	struct ust_perf_ring r;
	struct got g = { .aligned = true, .stop_after = 2 };

	(void)state;
	synth_ring_init(&s, 4096, 0);
	assert_int_equal(ust_perf_ring_init(&r, &s.meta, s.data, s.size), 0);
	put_sample(&s, 1, 1);
	put_sample(&s, 2, 1);
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 1);
	g.stop_after = 0;
	assert_int_equal(ust_perf_ring_read(&r, collect, &g), 1);
	assert_int_equal(g.times[1], 2);
	ust_perf_ring_fini(&r);
	synth_ring_free(&s);
}

static void test_bad_size(void **state)
{
	struct ust_perf_ring r;
	struct synth_ring s;

	(void)state;
	synth_ring_init(&s, 4096, 0);
	assert_int_equal(ust_perf_ring_init(&r, &s.meta, s.data, 3000), -EINVAL);
	synth_ring_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_oversized_and_truncated),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_bad_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
