// SPDX-License-Identifier: LGPL-2.1
/* ust_perf_maps: MMAP2 replay, overlaps, fork, exec, /proc. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/perf.h"
#include "ustitch/perf_maps.h"
#include "synth.h"

static struct ust_perf_layout lay;

static void apply(struct ust_perf_maps *m, const struct synth_rec *r, size_t len)
{
	struct ust_perf_event ev;
	char what[160];

	assert_int_equal(ust_perf_parse(&lay, r->b, len, &ev, what, sizeof(what)), 0);
	assert_int_equal(ust_perf_maps_apply(m, &ev), 0);
}

static void test_mmap2_resolve(void **state)
{
	struct ust_perf_maps *m = ust_perf_maps_new();
	struct synth_id id = { .pid = 100, .tid = 100, .time = 1 };
	struct ust_dec_frame f;
	struct synth_rec r;

	(void)state;
	apply(m, &r, synth_mmap2(&r, SYNTH_SAMPLE_TYPE, &id, 0x555555554000ULL, 0x3000, 0x1000,
				 254, 3, 777, "/bin/prog"));
	assert_true(ust_perf_maps_resolve(m, 100, 0x555555555234ULL, &f));
	assert_int_equal(f.off, 0x1234 + 0x1000);
	assert_int_equal(f.ino, 777);
	assert_int_equal(f.kdev, UST_ABI_MKKDEV(254, 3));
	/* Outside any mapping, or another process: the address itself. */
	assert_false(ust_perf_maps_resolve(m, 100, 0x555555557000ULL, &f));
	assert_int_equal(f.off, 0x555555557000ULL);
	assert_int_equal(f.ino, 0);
	assert_false(ust_perf_maps_resolve(m, 101, 0x555555555234ULL, &f));
	ust_perf_maps_free(m);
}

/* A later mapping replaces the middle of an earlier one: three pieces. */
static void test_overlap_split(void **state)
{
	struct ust_perf_maps *m = ust_perf_maps_new();
	struct ust_dec_frame f;

	(void)state;
	assert_int_equal(ust_perf_maps_add(m, 7, 0x10000, 0x10000, 0, 1, 11), 0);
	assert_int_equal(ust_perf_maps_add(m, 7, 0x14000, 0x2000, 0x8000, 1, 22), 0);
	assert_true(ust_perf_maps_resolve(m, 7, 0x13fff, &f));
	assert_int_equal(f.ino, 11);
	assert_int_equal(f.off, 0x3fff);
	assert_true(ust_perf_maps_resolve(m, 7, 0x14010, &f));
	assert_int_equal(f.ino, 22);
	assert_int_equal(f.off, 0x8010);
	/* The right piece keeps its file offset. */
	assert_true(ust_perf_maps_resolve(m, 7, 0x16010, &f));
	assert_int_equal(f.ino, 11);
	assert_int_equal(f.off, 0x6010);
	/* An anonymous mapping over it hides the file. */
	assert_int_equal(ust_perf_maps_add(m, 7, 0x10000, 0x1000, 0, 0, 0), 0);
	assert_false(ust_perf_maps_resolve(m, 7, 0x10010, &f));
	ust_perf_maps_free(m);
}

static void test_fork_exec(void **state)
{
	struct ust_perf_maps *m = ust_perf_maps_new();
	struct synth_id parent = { .pid = 200, .tid = 200, .time = 1 };
	struct synth_id child = { .pid = 201, .tid = 201, .time = 2 };
	struct synth_id thread = { .pid = 200, .tid = 202, .time = 3 };
	struct ust_dec_frame f;
	struct synth_rec r;

	(void)state;
	apply(m, &r, synth_mmap2(&r, SYNTH_SAMPLE_TYPE, &parent, 0x400000, 0x1000, 0, 8, 1, 5, "/a"));
	/* A new process gets a copy; a new thread shares by its tgid. */
	apply(m, &r, synth_task(&r, PERF_RECORD_FORK, SYNTH_SAMPLE_TYPE, &child, 200, 200));
	apply(m, &r, synth_task(&r, PERF_RECORD_FORK, SYNTH_SAMPLE_TYPE, &thread, 200, 200));
	assert_true(ust_perf_maps_resolve(m, 201, 0x400010, &f));
	assert_int_equal(f.ino, 5);
	/* exec: the child's old image is gone, the parent's stays. */
	apply(m, &r, synth_comm(&r, SYNTH_SAMPLE_TYPE, &child, "new", true));
	assert_false(ust_perf_maps_resolve(m, 201, 0x400010, &f));
	assert_true(ust_perf_maps_resolve(m, 200, 0x400010, &f));
	/* A comm change without exec keeps them. */
	apply(m, &r, synth_comm(&r, SYNTH_SAMPLE_TYPE, &parent, "renamed", false));
	assert_true(ust_perf_maps_resolve(m, 200, 0x400010, &f));
	ust_perf_maps_free(m);
}

/* This very process, by /proc: its own code resolves to its own file. */
static void test_proc(void **state)
{
	struct ust_perf_maps *m = ust_perf_maps_new();
	struct ust_dec_frame f;
	struct stat st;

	(void)state;
	assert_int_equal(ust_perf_maps_proc(m, (uint32_t)getpid(), 1000), 0);
	assert_true(ust_perf_maps_resolve(m, (uint32_t)getpid(), (uint64_t)(uintptr_t)&test_proc, &f));
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	assert_int_equal(f.ino, st.st_ino);
	assert_int_equal(f.kdev, UST_ABI_MKKDEV(major(st.st_dev), minor(st.st_dev)));
	ust_perf_maps_free(m);
}

/*
 * Maps read from /proc at 1000: the exec replayed from before (its MMAP2
 * records lost in a full ring) leaves them be; an exec after drops them.
 */
static void test_proc_after_exec(void **state)
{
	struct ust_perf_maps *m = ust_perf_maps_new();
	uint32_t pid = (uint32_t)getpid();
	struct synth_id early = { .pid = pid, .tid = pid, .time = 500 };
	struct synth_id late = { .pid = pid, .tid = pid, .time = 2000 };
	uint64_t here = (uint64_t)(uintptr_t)&test_proc_after_exec;
	struct ust_dec_frame f;
	struct synth_rec r;

	(void)state;
	assert_int_equal(ust_perf_maps_proc(m, pid, 1000), 0);
	apply(m, &r, synth_comm(&r, SYNTH_SAMPLE_TYPE, &early, "exec'd", true));
	assert_true(ust_perf_maps_resolve(m, pid, here, &f));
	apply(m, &r, synth_task(&r, PERF_RECORD_FORK, SYNTH_SAMPLE_TYPE, &early, 1, 1));
	assert_true(ust_perf_maps_resolve(m, pid, here, &f));
	apply(m, &r, synth_comm(&r, SYNTH_SAMPLE_TYPE, &late, "again", true));
	assert_false(ust_perf_maps_resolve(m, pid, here, &f));
	ust_perf_maps_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap2_resolve),
		cmocka_unit_test(test_overlap_split),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_proc_after_exec),
	};
	char err[160];

	if (ust_perf_layout_init(&lay, SYNTH_SAMPLE_TYPE, true, err, sizeof(err)))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
