// SPDX-License-Identifier: LGPL-2.1
/* ust_perf_parse: every record type, every context marker, every lie. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ustitch/perf.h"
#include "synth.h"

static struct ust_perf_layout lay;
static const struct synth_id ID = { .pid = 100, .tid = 101, .time = 123456789, .cpu = 1 };
static const uint64_t K[] = { 0xffffffff81001000ULL, 0xffffffff81002000ULL, 0xffffffff81003000ULL };
static const uint64_t U[] = { 0x555555555100ULL, 0x555555555200ULL };

static int parse(const struct synth_rec *r, size_t len, struct ust_perf_event *ev, char *what)
{
	return ust_perf_parse(&lay, r->b, len, ev, what, 160);
}

static void test_layout(void **state)
{
	struct ust_perf_layout l;
	char err[160];

	(void)state;
	assert_int_equal(ust_perf_layout_init(&l, SYNTH_SAMPLE_TYPE, true, err, sizeof(err)), 0);
	assert_int_equal(l.id_size, 24);	/* tid, time, cpu */
	assert_int_equal(ust_perf_layout_init(&l, SYNTH_SAMPLE_TYPE | PERF_SAMPLE_RAW, true, err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not supported"));
}

static void test_sample_kernel_and_deferred(void **state)
{
	struct synth_chain ch = { .kernel = K, .nr_kernel = 3, .deferred = true, .cookie = 0x1234567 };
	struct ust_perf_event ev;
	struct synth_rec r;
	char what[160];
	size_t len;

	(void)state;
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_KERNEL, &ID, K[0], 4242, &ch);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.type, PERF_RECORD_SAMPLE);
	assert_int_equal(ev.id.pid, 100);
	assert_int_equal(ev.id.tid, 101);
	assert_int_equal(ev.id.time, 123456789);
	assert_int_equal(ev.id.cpu, 1);
	assert_int_equal(ev.u.sample.ip, K[0]);
	assert_int_equal(ev.u.sample.period, 4242);
	assert_true(ev.u.sample.has_chain);
	assert_int_equal(ev.u.sample.chain.nr_kernel, 3);
	assert_int_equal(ust_perf_ip(ev.u.sample.chain.kernel, 2), K[2]);
	assert_int_equal(ev.u.sample.chain.user_kind, UST_PERF_USER_DEFERRED);
	assert_int_equal(ev.u.sample.chain.cookie, 0x1234567);
	assert_int_equal(ev.u.sample.chain.nr_user, 0);
}

static void test_sample_immediate_user(void **state)
{
	struct synth_chain ch = { .user = U, .nr_user = 2 };
	struct ust_perf_event ev;
	struct synth_rec r;
	char what[160];
	size_t len;

	(void)state;
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_USER, &ID, U[0], 1, &ch);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.u.sample.chain.nr_kernel, 0);
	assert_int_equal(ev.u.sample.chain.user_kind, UST_PERF_USER_IMMEDIATE);
	assert_int_equal(ev.u.sample.chain.nr_user, 2);
	assert_int_equal(ust_perf_ip(ev.u.sample.chain.user, 1), U[1]);
}

/* Guest and hypervisor contexts: counted, never shown as ours. */
static void test_sample_other_contexts(void **state)
{
	struct ust_perf_event ev;
	struct synth_rec r;
	char what[160];

	(void)state;
	synth_begin(&r, PERF_RECORD_SAMPLE, 0);
	synth_u64(&r, 1);		/* ip */
	synth_u32x2(&r, ID.pid, ID.tid);
	synth_u64(&r, ID.time);
	synth_u32x2(&r, ID.cpu, 0);
	synth_u64(&r, 1);		/* period */
	synth_u64(&r, 6);
	synth_u64(&r, PERF_CONTEXT_GUEST);
	synth_u64(&r, PERF_CONTEXT_GUEST_KERNEL);
	synth_u64(&r, 0xffffffff82000000ULL);
	synth_u64(&r, PERF_CONTEXT_KERNEL);
	synth_u64(&r, K[0]);
	synth_u64(&r, PERF_CONTEXT_HV);
	assert_int_equal(parse(&r, synth_end(&r), &ev, what), 0);
	assert_int_equal(ev.u.sample.chain.nr_other, 1);
	assert_int_equal(ev.u.sample.chain.nr_kernel, 1);
	assert_int_equal(ev.u.sample.chain.user_kind, UST_PERF_USER_NONE);
}

static void expect_bad(const struct synth_rec *r, size_t len, const char *needle)
{
	struct ust_perf_event ev;
	char what[160] = "";

	assert_int_equal(parse(r, len, &ev, what), -EINVAL);
	if (!strstr(what, needle))
		fail_msg("'%s' does not say '%s'", what, needle);
}

/* A chain of one item fewer than nr says: the record is cut. */
static void test_sample_truncated(void **state)
{
	struct synth_chain ch = { .kernel = K, .nr_kernel = 3 };
	struct synth_rec r;
	size_t len;

	(void)state;
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, 0, &ID, 1, 1, &ch);
	/* Shrink the record (header too): the chain no longer fits. */
	r.len = len - 8;
	expect_bad(&r, synth_end(&r), "callchain of 4 items ends past");
	/* nr far beyond the record, chosen to overflow a naive nr * 8. */
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, 0, &ID, 1, 1, &ch);
	{
		uint64_t nr = (1ULL << 61) + 1;

		memcpy(r.b + 48, &nr, 8);
	}
	expect_bad(&r, len, "ends past");
	/* Too short for the fixed fields. */
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, 0, &ID, 1, 1, NULL);
	r.len = 24;
	expect_bad(&r, synth_end(&r), "ends past");
	/* Bytes after the last field. */
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, 0, &ID, 1, 1, &ch);
	r.len = len;
	synth_u64(&r, 0);
	expect_bad(&r, synth_end(&r), "after its last field");
	/* A header size that disagrees with the record's. */
	len = synth_sample(&r, SYNTH_SAMPLE_TYPE, 0, &ID, 1, 1, &ch);
	expect_bad(&r, len + 8, "header says");
	expect_bad(&r, 4, "shorter than its header");
}

static void test_deferred_marker_rules(void **state)
{
	struct synth_rec r;

	(void)state;
	/* The marker without its cookie (a chain cut after the marker). */
	synth_begin(&r, PERF_RECORD_SAMPLE, 0);
	synth_u64(&r, 1);
	synth_u32x2(&r, ID.pid, ID.tid);
	synth_u64(&r, ID.time);
	synth_u32x2(&r, ID.cpu, 0);
	synth_u64(&r, 1);
	synth_u64(&r, 1);
	synth_u64(&r, UST_ABI_PERF_CONTEXT_USER_DEFERRED);
	expect_bad(&r, synth_end(&r), "cookie is missing");
	/* Items after the cookie. */
	synth_begin(&r, PERF_RECORD_SAMPLE, 0);
	synth_u64(&r, 1);
	synth_u32x2(&r, ID.pid, ID.tid);
	synth_u64(&r, ID.time);
	synth_u32x2(&r, ID.cpu, 0);
	synth_u64(&r, 1);
	synth_u64(&r, 3);
	synth_u64(&r, UST_ABI_PERF_CONTEXT_USER_DEFERRED);
	synth_u64(&r, 77);
	synth_u64(&r, U[0]);
	expect_bad(&r, synth_end(&r), "items follow its cookie");
	/* Immediate user frames and a deferred marker: two user parts. */
	synth_begin(&r, PERF_RECORD_SAMPLE, 0);
	synth_u64(&r, 1);
	synth_u32x2(&r, ID.pid, ID.tid);
	synth_u64(&r, ID.time);
	synth_u32x2(&r, ID.cpu, 0);
	synth_u64(&r, 1);
	synth_u64(&r, 4);
	synth_u64(&r, PERF_CONTEXT_USER);
	synth_u64(&r, U[0]);
	synth_u64(&r, UST_ABI_PERF_CONTEXT_USER_DEFERRED);
	synth_u64(&r, 77);
	expect_bad(&r, synth_end(&r), "two user parts");
}

static void test_deferred_record(void **state)
{
	struct ust_perf_event ev;
	struct synth_rec r;
	char what[160];
	size_t len;

	(void)state;
	len = synth_deferred(&r, SYNTH_SAMPLE_TYPE, &ID, 0xabc, U, 2);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.type, UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED);
	assert_int_equal(ev.u.deferred.cookie, 0xabc);
	assert_int_equal(ev.u.deferred.nr, 2);
	assert_int_equal(ust_perf_ip(ev.u.deferred.ips, 0), U[0]);
	assert_int_equal(ev.id.tid, 101);
	assert_int_equal(ev.id.time, 123456789);
	assert_int_equal(ev.id.cpu, 1);

	/* nr one more than the items: runs into the trailer. */
	memcpy(&r.b[16], &(uint64_t){ 4 }, 8);
	expect_bad(&r, len, "past");
	/* nr one less: leftover bytes before the trailer. */
	memcpy(&r.b[16], &(uint64_t){ 2 }, 8);
	expect_bad(&r, len, "after its last field");
	/* Mainline's layout: the frames without PERF_CONTEXT_USER in front. */
	len = synth_deferred_abi(&r, SYNTH_SAMPLE_TYPE, &ID, 0xabd, U, 2,
				 UST_ABI_PERF_DEFERRED_USER_MARK_MAINLINE);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.u.deferred.cookie, 0xabd);
	assert_int_equal(ev.u.deferred.nr, 2);
	assert_int_equal(ust_perf_ip(ev.u.deferred.ips, 0), U[0]);
	assert_int_equal(ust_perf_ip(ev.u.deferred.ips, 1), U[1]);
	assert_int_equal(ev.id.tid, 101);
	/* ... and a marker among them. */
	memcpy(&r.b[32], &(uint64_t){ PERF_CONTEXT_USER }, 8);
	expect_bad(&r, len, "context marker at item 1");
	/* A marker among the frames. */
	len = synth_deferred(&r, SYNTH_SAMPLE_TYPE, &ID, 0xabc, U, 2);
	memcpy(&r.b[40], &(uint64_t){ PERF_CONTEXT_KERNEL }, 8);
	expect_bad(&r, len, "context marker at item 2");
	/* Shorter than its trailer. */
	synth_begin(&r, UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED, 0);
	synth_u64(&r, 1);
	expect_bad(&r, synth_end(&r), "too short for its 24-byte sample_id");
}

static void test_lost_comm_task_mmap2(void **state)
{
	struct ust_perf_event ev;
	struct synth_rec r;
	char what[160];
	size_t len;

	(void)state;
	len = synth_lost(&r, SYNTH_SAMPLE_TYPE, &ID, 17);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.type, PERF_RECORD_LOST);
	assert_int_equal(ev.u.lost.lost, 17);
	assert_int_equal(ev.id.time, ID.time);

	synth_begin(&r, PERF_RECORD_LOST_SAMPLES, 0);
	synth_u64(&r, 5);
	synth_trailer(&r, SYNTH_SAMPLE_TYPE, &ID);
	assert_int_equal(parse(&r, synth_end(&r), &ev, what), 0);
	assert_int_equal(ev.u.lost.lost, 5);

	len = synth_comm(&r, SYNTH_SAMPLE_TYPE, &ID, "ust-live-chain", true);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_string_equal(ev.u.comm.comm, "ust-live-chain");
	assert_true(ev.u.comm.exec);
	assert_int_equal(ev.u.comm.tid, 101);
	/* A comm that fills its space without a NUL. */
	memset(r.b + 16, 'x', len - 16 - 24);
	expect_bad(&r, len, "not NUL-terminated");

	len = synth_task(&r, PERF_RECORD_FORK, SYNTH_SAMPLE_TYPE, &ID, 99, 98);
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.u.task.pid, 100);
	assert_int_equal(ev.u.task.ppid, 99);
	assert_int_equal(ev.u.task.ptid, 98);

	len = synth_mmap2(&r, SYNTH_SAMPLE_TYPE, &ID, 0x555555554000ULL, 0x2000, 0x1000, 254, 3,
			  1340007, "/usr/bin/ust-testprog");
	assert_int_equal(parse(&r, len, &ev, what), 0);
	assert_int_equal(ev.u.mmap2.addr, 0x555555554000ULL);
	assert_int_equal(ev.u.mmap2.pgoff, 0x1000);
	assert_int_equal(ev.u.mmap2.maj, 254);
	assert_int_equal(ev.u.mmap2.min, 3);
	assert_int_equal(ev.u.mmap2.ino, 1340007);
	assert_string_equal(ev.u.mmap2.filename, "/usr/bin/ust-testprog");

	/* Unknown types: 1, with the trailer decoded. */
	synth_begin(&r, PERF_RECORD_THROTTLE, 0);
	synth_u64(&r, 0);
	synth_u64(&r, 0);
	synth_u64(&r, 0);
	synth_trailer(&r, SYNTH_SAMPLE_TYPE, &ID);
	assert_int_equal(parse(&r, synth_end(&r), &ev, what), 1);
	assert_int_equal(ev.id.time, ID.time);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_sample_kernel_and_deferred),
		cmocka_unit_test(test_sample_immediate_user),
		cmocka_unit_test(test_sample_other_contexts),
		cmocka_unit_test(test_sample_truncated),
		cmocka_unit_test(test_deferred_marker_rules),
		cmocka_unit_test(test_deferred_record),
		cmocka_unit_test(test_lost_comm_task_mmap2),
	};
	char err[160];

	if (ust_perf_layout_init(&lay, SYNTH_SAMPLE_TYPE, true, err, sizeof(err)))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
