// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_stitch on synthetic per-CPU streams: stitching across CPUs, one
 * deferred callchain for several samples, the lost-record scenario of
 * seed 002 patch 3, and the BPF backport's requests.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/perf_stitch.h"
#include "synth.h"

static struct ust_perf_layout lay;
static const uint64_t K[] = { 0xffffffff81001000ULL, 0xffffffff81002000ULL };
static const uint64_t U1[] = { 0x5555555551a0ULL, 0x555555555230ULL, 0x5555555552c0ULL };
static const uint64_t U2[] = { 0x7ffff7e00000ULL };

#define TID	101
#define PID	100

/* A sample in kernel mode (a syscall) whose user stack is deferred. */
static void add_sample(struct ust_perf_stitch *st, unsigned int stream, uint32_t cpu,
		       uint32_t tid, uint64_t time, uint64_t cookie)
{
	struct synth_chain ch = { .kernel = K, .nr_kernel = 2, .deferred = true, .cookie = cookie };
	struct synth_id id = { .pid = PID, .tid = tid, .time = time, .cpu = cpu };
	struct synth_rec r;
	size_t len = synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_KERNEL, &id, K[0], 1000, &ch);

	assert_int_equal(ust_perf_stitch_add_record(st, stream, cpu, &lay, r.b, len, NULL, 0), 0);
}

static void add_deferred(struct ust_perf_stitch *st, unsigned int stream, uint32_t cpu,
			 uint32_t tid, uint64_t time, uint64_t cookie, const uint64_t *ips,
			 unsigned int nr)
{
	struct synth_id id = { .pid = PID, .tid = tid, .time = time, .cpu = cpu };
	struct synth_rec r;
	size_t len = synth_deferred(&r, SYNTH_SAMPLE_TYPE, &id, cookie, ips, nr);

	assert_int_equal(ust_perf_stitch_add_record(st, stream, cpu, &lay, r.b, len, NULL, 0), 0);
}

static void add_lost(struct ust_perf_stitch *st, unsigned int stream, uint32_t cpu,
		     uint64_t time, uint64_t n)
{
	struct synth_id id = { .pid = 0, .tid = 0, .time = time, .cpu = cpu };
	struct synth_rec r;
	size_t len = synth_lost(&r, SYNTH_SAMPLE_TYPE, &id, n);

	assert_int_equal(ust_perf_stitch_add_record(st, stream, cpu, &lay, r.b, len, NULL, 0), 0);
}

/* The samples in time order. */
static int samples(const struct ust_perf_stitch *st, const struct ust_perf_item **out, int max)
{
	size_t i;
	int n = 0;

	for (i = 0; i < ust_perf_stitch_count(st); i++) {
		const struct ust_perf_item *it = ust_perf_stitch_at(st, i);

		if (it->kind == UST_PERF_ITEM_SAMPLE && n < max)
			out[n++] = it;
	}
	return n;
}

/* The sample on CPU 0, its stack recorded on CPU 1 when it left the kernel. */
static void test_across_cpus(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[4];

	(void)state;
	add_deferred(st, 1, 1, TID, 150, 0x11, U1, 3);
	add_sample(st, 0, 0, TID, 100, 0x11);
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	assert_int_equal(samples(st, sm, 4), 1);
	assert_int_equal(sm[0]->ustack, UST_PERF_US_DEFERRED);
	assert_non_null(sm[0]->stack);
	assert_int_equal(sm[0]->stack->cpu, 1);
	assert_int_equal(sm[0]->stack->ev.u.deferred.nr, 3);
	assert_int_equal(ust_perf_ip(sm[0]->stack->ev.u.deferred.ips, 2), U1[2]);
	assert_int_equal(s.deferred_ok, 1);
	assert_int_equal(s.orphan_deferred, 0);
	/* Merged by time: the sample (100) before its stack (150). */
	assert_int_equal(ust_perf_stitch_at(st, 0)->kind, UST_PERF_ITEM_SAMPLE);
	assert_int_equal(ust_perf_stitch_at(st, 1)->kind, UST_PERF_ITEM_DEFERRED);
	ust_perf_stitch_free(st);
}

/* One kernel entry sampled three times, on two CPUs: one stack for all. */
static void test_one_stack_many_samples(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[4];
	int i;

	(void)state;
	add_sample(st, 0, 0, TID, 100, 0x21);
	add_sample(st, 0, 0, TID, 120, 0x21);
	add_sample(st, 1, 1, TID, 130, 0x21);
	add_deferred(st, 1, 1, TID, 200, 0x21, U1, 3);
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	assert_int_equal(samples(st, sm, 4), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(sm[i]->ustack, UST_PERF_US_DEFERRED);
		assert_ptr_equal(sm[i]->stack, sm[0]->stack);
	}
	assert_int_equal(sm[0]->stack->served, 3);
	assert_int_equal(sm[0]->time, 100);
	assert_int_equal(sm[2]->time, 130);
	assert_int_equal(s.deferred, 1);
	ust_perf_stitch_free(st);
}

/*
 * Seed 002, patch 3: a sample asks for a deferred stack; then records are
 * lost (that stack, and the next entry's sample); then the next entry's
 * stack arrives.  By task alone it would be attached to the first sample.
 * By cookie it is not: the first sample keeps its kernel stack and is
 * marked lost, and the stack of the later entry serves no sample.
 */
static void test_patch3_lost_records(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[4];
	size_t i;

	(void)state;
	add_sample(st, 0, 0, TID, 100, 0x31);		/* kernel stack + USER_DEFERRED, cookie 0x31 */
	/* [ dropped: CALLCHAIN_DEFERRED 0x31; user space; the kernel again;
	 *   SAMPLE with cookie 0x33 ] */
	add_lost(st, 0, 0, 300, 2);
	add_deferred(st, 0, 0, TID, 400, 0x33, U2, 1);	/* the later entry's stack */
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	assert_int_equal(samples(st, sm, 4), 1);
	assert_int_equal(sm[0]->ustack, UST_PERF_US_LOST);
	assert_null(sm[0]->stack);
	assert_true(sm[0]->ev.u.sample.chain.nr_kernel == 2);	/* its kernel frames stay */
	for (i = 0; i < ust_perf_stitch_count(st); i++) {
		const struct ust_perf_item *it = ust_perf_stitch_at(st, i);

		if (it->kind == UST_PERF_ITEM_DEFERRED)
			assert_int_equal(it->served, 0);
	}
	assert_int_equal(s.lost, 1);
	assert_int_equal(s.orphan_deferred, 1);
	assert_int_equal(s.lost_count, 2);
	ust_perf_stitch_free(st);
}

/* Never arrived, nothing lost: the trace ended before the return. */
static void test_unfinished_and_foreign(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[4];

	(void)state;
	add_sample(st, 0, 0, TID, 100, 0x41);
	/* The same cookie from another task is not this task's stack. */
	add_deferred(st, 1, 1, TID + 1, 150, 0x41, U1, 3);
	add_sample(st, 1, 1, TID, 500, 0x43);
	add_lost(st, 1, 1, 400, 1);	/* lost before the second sample only */
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	assert_int_equal(samples(st, sm, 4), 2);
	/* A loss at 400 is after the first sample (100): its stack may have
	 * been among them. */
	assert_int_equal(sm[0]->ustack, UST_PERF_US_LOST);
	/* Nothing lost after the second: the trace simply ended. */
	assert_int_equal(sm[1]->ustack, UST_PERF_US_UNFINISHED);
	assert_int_equal(s.unfinished, 1);
	ust_perf_stitch_free(st);
}

/* Duplicates: the first stack recorded answers. */
static void test_duplicate_stacks(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[2];

	(void)state;
	add_sample(st, 0, 0, TID, 100, 0x51);
	add_deferred(st, 1, 1, TID, 300, 0x51, U2, 1);
	add_deferred(st, 0, 0, TID, 200, 0x51, U1, 3);
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	assert_int_equal(samples(st, sm, 2), 1);
	assert_int_equal(sm[0]->stack->time, 200);
	assert_int_equal(s.dup_deferred, 1);
	ust_perf_stitch_free(st);
}

/* Equal times: each stream keeps its order; streams merge. */
static void test_merge_order(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	uint64_t last = 0;
	size_t i;

	(void)state;
	add_sample(st, 1, 1, TID, 50, 0x61);
	add_sample(st, 1, 1, TID + 2, 50, 0x63);
	add_sample(st, 0, 0, TID, 10, 0x61);
	add_sample(st, 0, 0, TID, 70, 0x61);
	add_sample(st, 2, 0, TID, 60, 0x65);
	assert_int_equal(ust_perf_stitch_finish(st, NULL), 0);
	assert_int_equal(ust_perf_stitch_count(st), 5);
	for (i = 0; i < 5; i++) {
		const struct ust_perf_item *it = ust_perf_stitch_at(st, i);

		assert_true(it->time >= last);
		last = it->time;
	}
	assert_int_equal(ust_perf_stitch_at(st, 1)->tid, TID);
	assert_int_equal(ust_perf_stitch_at(st, 2)->tid, TID + 2);
	assert_null(ust_perf_stitch_at(st, 5));
	ust_perf_stitch_free(st);
}

/* Malformed records are counted and left out; immediate stacks pass. */
static void test_bad_and_immediate(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct synth_chain ch = { .user = U1, .nr_user = 3 };
	struct synth_id id = { .pid = PID, .tid = TID, .time = 10, .cpu = 0 };
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[2];
	struct synth_rec r;
	char what[160];
	size_t len;

	(void)state;
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_USER, &id, U1[0], 1, &ch);
	assert_int_equal(ust_perf_stitch_add_record(st, 0, 0, &lay, r.b, len, NULL, 0), 0);
	assert_int_equal(ust_perf_stitch_add_record(st, 0, 0, &lay, r.b, len - 8, what,
						    sizeof(what)), 1);
	assert_non_null(strstr(what, "header says"));
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	assert_int_equal(s.bad_records, 1);
	assert_int_equal(samples(st, sm, 2), 1);
	assert_int_equal(sm[0]->ustack, UST_PERF_US_IMMEDIATE);
	assert_int_equal(s.immediate, 1);
	/* Nothing may be added once finished. */
	assert_int_equal(ust_perf_stitch_add_lost(st, 0, 1, 1), -EINVAL);
	assert_int_equal(ust_perf_stitch_add_record(st, 0, 0, &lay, r.b, len, NULL, 0), -EINVAL);
	assert_int_equal(ust_perf_stitch_finish(st, &s), -EINVAL);
	ust_perf_stitch_free(st);
}

/* ---- the BPF backport ------------------------------------------------- */

/* A user-mode sample without a cookie of its own (BPF makes it). */
static void add_plain_sample(struct ust_perf_stitch *st, uint32_t cpu, uint32_t tid,
			     uint64_t time, uint64_t ip, uint64_t period)
{
	struct synth_id id = { .pid = PID, .tid = tid, .time = time, .cpu = cpu };
	struct synth_chain ch = { 0 };
	struct synth_rec r;
	size_t len = synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_USER, &id, ip, period, &ch);

	assert_int_equal(ust_perf_stitch_add_record(st, cpu, cpu, &lay, r.b, len, NULL, 0), 0);
}

static const unsigned char BLOB[40] = { 1, 2, 3 };

/*
 * A sample and the BPF request of its overflow handler.  Where perf stamps
 * the sample, before or after the program runs, is the kernel's business
 * (6.18: before): @d = +1 puts the request after its sample, -1 before.
 */
static void add_pair(struct ust_perf_stitch *st, int d, uint32_t cpu, uint32_t tid,
		     uint64_t time, uint64_t ip, uint64_t cookie, bool sample, bool request,
		     bool dropped_before)
{
	if (request)
		ust_perf_stitch_add_request(st, cpu, (uint64_t)((int64_t)time + d), PID, tid, ip, 1001,
					    cookie, dropped_before);
	if (sample)
		add_plain_sample(st, cpu, tid, time, ip, 1001);
}

/* Enough ordinary pairs on @cpu for the side to be clear. */
static void add_pairs(struct ust_perf_stitch *st, int d, uint32_t cpu, uint64_t from, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t c = 0x1000 + (uint64_t)(from / 10) + (uint64_t)i * 2;

		add_pair(st, d, cpu, TID + 7, from + (uint64_t)i * 10, 0x9000 + (uint64_t)i, c, true,
			 true, false);
		ust_perf_stitch_add_stack(st, cpu, from + (uint64_t)i * 10 + 5, PID, TID + 7, c, BLOB,
					  sizeof(BLOB));
	}
}

static void bpf_requests(int d)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[32];
	int n;

	ust_perf_stitch_expect_requests(st, true);
	add_pairs(st, d, 0, 1000, 5);
	add_pairs(st, d, 1, 1000, 5);
	/* CPU 0: a sample and its request; the stack comes on CPU 1. */
	add_pair(st, d, 0, TID, 100, 0x5000, 0x71, true, true, false);
	ust_perf_stitch_add_stack(st, 1, 103, PID, TID, 0x71, BLOB, sizeof(BLOB));
	/* CPU 1: perf lost a sample, not its request; then ours. */
	add_pair(st, d, 1, TID + 1, 200, 0x6000, 0x73, false, true, false);
	add_pair(st, d, 1, TID + 1, 210, 0x6000, 0x75, true, true, false);
	ust_perf_stitch_add_stack(st, 1, 213, PID, TID + 1, 0x75, BLOB, sizeof(BLOB));
	/* CPU 0: a neighbouring request that is not this sample's (other ip). */
	add_pair(st, d, 0, TID, 300, 0x5008, 0x77, false, true, false);
	add_plain_sample(st, 0, TID, 300 + (uint64_t)(2 * d), 0x5010, 1001);
	/* The idle task: no request is ever made for it. */
	add_plain_sample(st, 0, 0, 400, 0xffffffff81000000ULL, 1001);
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	n = samples(st, sm, 32);
	assert_int_equal(n, 14);
	assert_int_equal(sm[0]->ustack, UST_PERF_US_DEFERRED);
	assert_int_equal(sm[0]->cookie, 0x71);
	assert_ptr_equal(sm[0]->stack->blob, sm[0]->stack->raw);
	assert_int_equal(sm[0]->stack->blob_len, sizeof(BLOB));
	assert_int_equal(sm[1]->cookie, 0x75);
	assert_int_equal(sm[1]->ustack, UST_PERF_US_DEFERRED);
	assert_int_equal(sm[2]->ustack, UST_PERF_US_NO_COOKIE);
	assert_int_equal(sm[3]->ustack, UST_PERF_US_NONE);
	for (int i = 4; i < n; i++)
		assert_int_equal(sm[i]->ustack, UST_PERF_US_DEFERRED);
	assert_int_equal(s.requests, 14);
	assert_int_equal(s.requests_matched, 12);
	ust_perf_stitch_free(st);
}

static void test_bpf_requests_after(void **state)
{
	(void)state;
	bpf_requests(+1);
}

static void test_bpf_requests_before(void **state)
{
	(void)state;
	bpf_requests(-1);
}

/*
 * The BPF side dropped a sample's request (ring full), and perf lost the
 * sample whose request neighbours it, same task, ip and period: that
 * request must not be taken for the sample's.  The next request says a
 * drop happened; the sample is given up, never guessed.
 */
static void bpf_gap(int d)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[32];
	int n;

	ust_perf_stitch_expect_requests(st, true);
	add_pairs(st, d, 0, 1000, 6);
	if (d > 0) {
		/* S (request dropped); L (lost, its request says "dropped before
		 * me"); S2 and its request. */
		add_pair(st, d, 0, TID, 100, 0x5000, 0x83, true, false, false);
		add_pair(st, d, 0, TID, 149, 0x5000, 0x81, false, true, true);
		add_pair(st, d, 0, TID, 200, 0x5000, 0x85, true, true, false);
	} else {
		/* L (lost) and its request; S (request dropped); S2, whose
		 * request says "dropped before me". */
		add_pair(st, d, 0, TID, 99, 0x5000, 0x81, false, true, false);
		add_pair(st, d, 0, TID, 100, 0x5000, 0x83, true, false, false);
		add_pair(st, d, 0, TID, 200, 0x5000, 0x85, true, true, true);
	}
	ust_perf_stitch_add_stack(st, 0, 160, PID, TID, 0x81, BLOB, sizeof(BLOB));
	ust_perf_stitch_add_stack(st, 0, 205, PID, TID, 0x85, BLOB, sizeof(BLOB));
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	n = samples(st, sm, 32);
	assert_int_equal(n, 8);
	/* Never L's stack: the sample is given up. */
	assert_int_equal(sm[0]->ustack, UST_PERF_US_NO_COOKIE);
	assert_false(sm[0]->has_cookie);
	assert_int_equal(s.requests_ambiguous, 1);
	/* The next one is unaffected. */
	assert_int_equal(sm[1]->ustack, UST_PERF_US_DEFERRED);
	assert_int_equal(sm[1]->cookie, 0x85);
	ust_perf_stitch_free(st);
}

/*
 * Requests usually follow their sample here, but the first sample after
 * lost records is stamped after its program ran (seen on 6.18): its
 * request is its neighbour on the other side, which is taken, and the
 * requests of the samples perf lost before it are not.
 */
static void test_bpf_flipped(void **state)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	struct ust_perf_stitch_stats s;
	const struct ust_perf_item *sm[32];
	int n;

	(void)state;
	ust_perf_stitch_expect_requests(st, true);
	add_pairs(st, +1, 0, 1000, 6);
	add_pair(st, +1, 0, TID, 500, 0x5000, 0x91, false, true, false);	/* lost */
	add_pair(st, +1, 0, TID, 550, 0x5000, 0x93, false, true, false);	/* lost */
	add_pair(st, -1, 0, TID, 600, 0x5000, 0x95, true, true, false);	/* flipped */
	add_pair(st, +1, 0, TID, 700, 0x5000, 0x97, true, true, false);
	ust_perf_stitch_add_stack(st, 0, 650, PID, TID, 0x95, BLOB, sizeof(BLOB));
	ust_perf_stitch_add_stack(st, 0, 750, PID, TID, 0x97, BLOB, sizeof(BLOB));
	assert_int_equal(ust_perf_stitch_finish(st, &s), 0);
	n = samples(st, sm, 32);
	assert_int_equal(n, 8);
	assert_int_equal(sm[0]->cookie, 0x95);
	assert_int_equal(sm[1]->cookie, 0x97);
	assert_int_equal(s.requests_matched, 8);
	ust_perf_stitch_free(st);
}

static void test_bpf_gap_after(void **state)
{
	(void)state;
	bpf_gap(+1);
}

static void test_bpf_gap_before(void **state)
{
	(void)state;
	bpf_gap(-1);
}


/* ---- flush: a long recording in bounded memory ------------------------- */

/* What a sample became, to compare one way of stitching with another. */
struct fate {
	uint64_t time;
	uint32_t tid;
	uint64_t cookie;
	int ustack;
	unsigned int served;	/* DEFERRED: samples it served */
	int kind;
};

struct fates {
	struct fate v[20000];
	int n;
};

static void note_fate(const struct ust_perf_item *it, void *ctx)
{
	struct fates *f = ctx;

	if (it->kind != UST_PERF_ITEM_SAMPLE && it->kind != UST_PERF_ITEM_DEFERRED)
		return;
	assert_true(f->n < (int)(sizeof(f->v) / sizeof(f->v[0])));
	f->v[f->n++] = (struct fate){ .time = it->time, .tid = it->tid,
				      .cookie = it->has_cookie || it->kind == UST_PERF_ITEM_DEFERRED ?
						it->cookie : 0,
				      .ustack = it->kind == UST_PERF_ITEM_SAMPLE ? (int)it->ustack : -1,
				      .served = it->served, .kind = it->kind };
}

static int cmp_fate(const void *a, const void *b)
{
	const struct fate *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

#define MS	1000000ULL

/*
 * 3,000 samples 100 us apart on two CPUs: most with a BPF request and a
 * stack taken at the sample; every 7th in the kernel, its stack 30 ms
 * later on the other CPU; every 50th never getting one; records lost now
 * and then.  Stitched at the end only, and flushed every 64 adds up to
 * 100 ms before the newest item: the same fate for every sample and
 * stack, the same counts, and no more items held than the last 100 ms.
 */
static void run_long(struct fates *f, struct ust_perf_stitch_stats *s, bool flush,
		     size_t *most)
{
	struct ust_perf_stitch *st = ust_perf_stitch_new();
	int i, adds = 0;
	size_t j;

	ust_perf_stitch_expect_requests(st, true);
	*most = 0;
	for (i = 0; i < 3000; i++) {
		uint64_t t = 1000 * MS + (uint64_t)i * 100000;
		uint32_t cpu = (uint32_t)i & 1;

		if (i % 50 == 49) {
			add_sample(st, cpu, cpu, TID + 3, t, 0x900000 + (uint64_t)i);
		} else if (i % 7 == 6) {
			add_sample(st, cpu, cpu, TID + 2, t, 0x100000 + (uint64_t)i);
			add_deferred(st, 1 - cpu, 1 - cpu, TID + 2, t + 30 * MS, 0x100000 + (uint64_t)i,
				     U1, 3);
		} else {
			add_pair(st, +1, cpu, TID, t, 0x4000 + (uint64_t)i, 0x1000 + (uint64_t)i, true,
				 true, false);
			ust_perf_stitch_add_stack(st, cpu, t + 5, PID, TID, 0x1000 + (uint64_t)i, BLOB,
						  sizeof(BLOB));
		}
		if (i % 400 == 399)
			add_lost(st, cpu, cpu, t + 50, 1);
		if (ust_perf_stitch_pending(st) > *most)
			*most = ust_perf_stitch_pending(st);
		if (flush && ++adds % 64 == 0)
			assert_int_equal(ust_perf_stitch_flush(st, ust_perf_stitch_newest(st) - 100 * MS,
							       note_fate, f), 0);
	}
	assert_int_equal(ust_perf_stitch_finish(st, s), 0);
	for (j = 0; j < ust_perf_stitch_count(st); j++)
		note_fate(ust_perf_stitch_at(st, j), f);
	qsort(f->v, (size_t)f->n, sizeof(f->v[0]), cmp_fate);
	ust_perf_stitch_free(st);
}

static void test_flush_same_as_finish(void **state)
{
	static struct fates whole, flushed;
	struct ust_perf_stitch_stats a, b;
	size_t most_a, most_b;
	int i;

	(void)state;
	run_long(&whole, &a, false, &most_a);
	run_long(&flushed, &b, true, &most_b);
	assert_int_equal(whole.n, flushed.n);
	for (i = 0; i < whole.n; i++) {
		assert_int_equal(whole.v[i].time, flushed.v[i].time);
		assert_int_equal(whole.v[i].kind, flushed.v[i].kind);
		assert_int_equal(whole.v[i].tid, flushed.v[i].tid);
		assert_int_equal(whole.v[i].cookie, flushed.v[i].cookie);
		assert_int_equal(whole.v[i].ustack, flushed.v[i].ustack);
		assert_int_equal(whole.v[i].served, flushed.v[i].served);
	}
	assert_int_equal(a.samples, 3000);
	assert_int_equal(a.samples, b.samples);
	assert_int_equal(a.with_cookie, b.with_cookie);
	assert_int_equal(a.deferred_ok, b.deferred_ok);
	assert_int_equal(a.deferred_ok, 3000 - 60);
	assert_int_equal(a.lost + a.unfinished, 60);
	assert_int_equal(a.lost, b.lost);
	assert_int_equal(a.unfinished, b.unfinished);
	assert_int_equal(a.no_cookie, b.no_cookie);
	assert_int_equal(a.no_cookie, 0);
	assert_int_equal(a.deferred, b.deferred);
	assert_int_equal(a.orphan_deferred, b.orphan_deferred);
	assert_int_equal(a.requests, b.requests);
	assert_int_equal(a.requests_matched, b.requests_matched);
	assert_int_equal(a.requests_ambiguous, b.requests_ambiguous);
	assert_int_equal(a.lost_marks, b.lost_marks);
	assert_int_equal(a.lost_count, b.lost_count);
	/* Everything held till the end (8,467 items), against the last 100 ms
	 * or so (1,000 samples, about three items each) and the samples still
	 * waiting for their stacks. */
	assert_int_equal(most_a, 8467);
	assert_true(most_b < 2500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_across_cpus),
		cmocka_unit_test(test_one_stack_many_samples),
		cmocka_unit_test(test_patch3_lost_records),
		cmocka_unit_test(test_unfinished_and_foreign),
		cmocka_unit_test(test_duplicate_stacks),
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_bad_and_immediate),
		cmocka_unit_test(test_bpf_requests_after),
		cmocka_unit_test(test_bpf_requests_before),
		cmocka_unit_test(test_bpf_flipped),
		cmocka_unit_test(test_bpf_gap_after),
		cmocka_unit_test(test_bpf_gap_before),
		cmocka_unit_test(test_flush_same_as_finish),
	};
	char err[160];

	if (ust_perf_layout_init(&lay, SYNTH_SAMPLE_TYPE, true, err, sizeof(err)))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
