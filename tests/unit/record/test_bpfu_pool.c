// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_bpfu_pool (lib/record/bpfu_pool.c), the workers that
 * build unwind tables off the ring reader: one worker runs jobs in the
 * order they came; many run every job once; a wait with a time limit
 * says false while a job still runs and true once none does, and it
 * covers the jobs a job submits; freeing the pool lets the running job
 * finish and drops the queued ones (each told so, for its memory); a pool
 * of no threads runs a job in the submit itself.
 */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpfu_pool.h"

#define NJOBS	200

struct tally {
	pthread_mutex_t lock;
	int order[NJOBS];	/* the jobs' numbers, in the order they ran */
	int ran, dropped;
	sem_t started, release;	/* for the job that blocks */
};

struct job {
	struct tally *t;
	int n;
	bool block;		/* wait for t->release, after saying t->started */
	struct ust_bpfu_pool *spawn;	/* submit a job of number n + 1000 there */
};

static void job_fn(void *arg, bool run)
{
	struct job *j = arg;
	struct tally *t = j->t;

	if (run && j->block) {
		sem_post(&t->started);
		sem_wait(&t->release);
	}
	if (run && j->spawn) {
		static struct job child;

		child = (struct job){ .t = t, .n = j->n + 1000 };
		usleep(20000);	/* the waiter is waiting by now */
		assert_int_equal(ust_bpfu_pool_submit(j->spawn, job_fn, &child), 0);
	}
	pthread_mutex_lock(&t->lock);
	if (run) {
		if (t->ran < NJOBS)
			t->order[t->ran] = j->n;
		t->ran++;
	} else {
		t->dropped++;
	}
	pthread_mutex_unlock(&t->lock);
}

static void tally_init(struct tally *t)
{
	*t = (struct tally){ 0 };
	pthread_mutex_init(&t->lock, NULL);
	sem_init(&t->started, 0, 0);
	sem_init(&t->release, 0, 0);
}

static void test_default_threads(void **state)
{
	unsigned int n = ust_bpfu_pool_default_threads();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	(void)state;
	assert_true(n >= 2 && n <= 4);
	if (cpus >= 2 && cpus <= 4)
		assert_int_equal(n, (unsigned int)cpus);
}

static void test_fifo_one_worker(void **state)
{
	static struct job jobs[NJOBS];
	struct ust_bpfu_pool *p = ust_bpfu_pool_new(1);
	struct tally t;
	int i;

	(void)state;
	tally_init(&t);
	assert_non_null(p);
	assert_int_equal(ust_bpfu_pool_threads(p), 1);
	for (i = 0; i < NJOBS; i++) {
		jobs[i] = (struct job){ .t = &t, .n = i };
		assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &jobs[i]), 0);
	}
	assert_true(ust_bpfu_pool_wait(p, -1));
	assert_int_equal(ust_bpfu_pool_busy(p), 0);
	assert_int_equal(t.ran, NJOBS);
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(t.order[i], i);
	ust_bpfu_pool_free(p);
	assert_int_equal(t.dropped, 0);
}

static void test_many_workers_each_once(void **state)
{
	static struct job jobs[NJOBS];
	struct ust_bpfu_pool *p = ust_bpfu_pool_new(4);
	int seen[NJOBS] = { 0 }, i;
	struct tally t;

	(void)state;
	tally_init(&t);
	assert_int_equal(ust_bpfu_pool_threads(p), 4);
	for (i = 0; i < NJOBS; i++) {
		jobs[i] = (struct job){ .t = &t, .n = i };
		assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &jobs[i]), 0);
	}
	assert_true(ust_bpfu_pool_wait(p, 10000));
	assert_int_equal(t.ran, NJOBS);
	for (i = 0; i < NJOBS; i++)
		seen[t.order[i]]++;
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(seen[i], 1);
	ust_bpfu_pool_free(p);
}

static void test_wait_bounded(void **state)
{
	struct ust_bpfu_pool *p = ust_bpfu_pool_new(2);
	struct job slow, spawner;
	struct tally t;

	(void)state;
	tally_init(&t);
	slow = (struct job){ .t = &t, .n = 1, .block = true };
	assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &slow), 0);
	sem_wait(&t.started);
	assert_int_equal(ust_bpfu_pool_busy(p), 1);
	/* Still running: the wait gives up after its time, saying so. */
	assert_false(ust_bpfu_pool_wait(p, 30));
	sem_post(&t.release);
	assert_true(ust_bpfu_pool_wait(p, 10000));
	assert_int_equal(t.ran, 1);
	/* A job that submits another: the wait lasts until that one ran too. */
	spawner = (struct job){ .t = &t, .n = 2, .spawn = p };
	assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &spawner), 0);
	assert_true(ust_bpfu_pool_wait(p, -1));
	assert_int_equal(t.ran, 3);
	/* Either first: the child may run on the other worker before its parent counts. */
	assert_int_equal(t.order[1] + t.order[2], 2 + 1002);
	assert_true(t.order[1] == 2 || t.order[2] == 2);
	ust_bpfu_pool_free(p);
}

static void *release_later(void *arg)
{
	usleep(100000);
	sem_post(&((struct tally *)arg)->release);
	return NULL;
}

static void test_free_drops_queued(void **state)
{
	struct ust_bpfu_pool *p = ust_bpfu_pool_new(1);
	struct job slow, queued[3];
	struct tally t;
	pthread_t th;
	int i;

	(void)state;
	tally_init(&t);
	slow = (struct job){ .t = &t, .n = 1, .block = true };
	assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &slow), 0);
	sem_wait(&t.started);
	for (i = 0; i < 3; i++) {
		queued[i] = (struct job){ .t = &t, .n = 10 + i };
		assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &queued[i]), 0);
	}
	assert_int_equal(ust_bpfu_pool_busy(p), 4);
	/* The running job ends 100 ms into the free, which waits for it. */
	assert_int_equal(pthread_create(&th, NULL, release_later, &t), 0);
	ust_bpfu_pool_free(p);
	pthread_join(th, NULL);
	assert_int_equal(t.ran, 1);
	assert_int_equal(t.order[0], 1);
	assert_int_equal(t.dropped, 3);
}

static void test_no_threads_inline(void **state)
{
	struct ust_bpfu_pool *p = ust_bpfu_pool_new(0);
	struct job j;
	struct tally t;

	(void)state;
	tally_init(&t);
	j = (struct job){ .t = &t, .n = 7 };
	assert_int_equal(ust_bpfu_pool_threads(p), 0);
	assert_int_equal(ust_bpfu_pool_submit(p, job_fn, &j), 0);
	assert_int_equal(t.ran, 1);		/* before the submit returned */
	assert_true(ust_bpfu_pool_wait(p, 0));
	ust_bpfu_pool_free(p);
	assert_int_equal(t.dropped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_threads),
		cmocka_unit_test(test_fifo_one_worker),
		cmocka_unit_test(test_many_workers_each_once),
		cmocka_unit_test(test_wait_bounded),
		cmocka_unit_test(test_free_drops_queued),
		cmocka_unit_test(test_no_threads_inline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
