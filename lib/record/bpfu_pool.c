// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfu_pool: see bpfu_pool.h.  One mutex over a FIFO of jobs; the
 * workers sleep on one condition, ust_bpfu_pool_wait() on another that
 * the last job to finish signals.  The ring reader only ever takes the
 * mutex for a queue operation, never while a job runs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bpfu_pool.h"

#define POOL_MAX_THREADS	4

struct job {
	ust_bpfu_pool_fn fn;
	void *arg;
	struct job *next;
};

struct ust_bpfu_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a job was queued, or the pool is stopping */
	pthread_cond_t idle;	/* busy dropped to 0 */
	struct job *head, *tail;
	unsigned int busy;	/* queued + running */
	bool stop;
	unsigned int nr;
	pthread_t threads[POOL_MAX_THREADS];
};

unsigned int ust_bpfu_pool_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 2)
		return 2;
	return n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (unsigned int)n;
}

/*
 * How much a worker is favoured over the recorded programs (nice).  A
 * table is what parked walks wait for: while a compiler started by a
 * build runs on every CPU, a worker at the same nice got a third of one
 * and cc1's table took 144 ms instead of 45, every sample of the first
 * cc1s parking meanwhile (a copy of its stack each).  A build is brief;
 * losing it costs the workload more.  Best effort: without the right to
 * raise it (not root, no CAP_SYS_NICE) the worker runs as it was.
 */
#define POOL_NICE	(-10)

static void *worker(void *arg)
{
	struct ust_bpfu_pool *p = arg;
	struct job *j;

	/* Linux: per thread, by its tid. */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), POOL_NICE);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		j = p->head;
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		j->fn(j->arg, true);
		free(j);
		pthread_mutex_lock(&p->lock);
		if (--p->busy == 0)
			pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct ust_bpfu_pool *ust_bpfu_pool_new(unsigned int threads)
{
	struct ust_bpfu_pool *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	sigset_t all, old;

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	/* Waits are timed by CLOCK_MONOTONIC: a clock step must not stretch them. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->idle, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&p->work, NULL);
	if (threads > POOL_MAX_THREADS)
		threads = POOL_MAX_THREADS;
	/* The recorder's signals (SIGINT, SIGCHLD) stay with the thread that handles them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (p->nr = 0; p->nr < threads; p->nr++)
		if (pthread_create(&p->threads[p->nr], NULL, worker, p))
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p;
}

unsigned int ust_bpfu_pool_threads(const struct ust_bpfu_pool *p)
{
	return p->nr;
}

int ust_bpfu_pool_submit(struct ust_bpfu_pool *p, ust_bpfu_pool_fn fn, void *arg)
{
	struct job *j;

	if (!p->nr) {
		fn(arg, true);
		return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fn = fn;
	j->arg = arg;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	p->busy++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

unsigned int ust_bpfu_pool_busy(struct ust_bpfu_pool *p)
{
	unsigned int n;

	pthread_mutex_lock(&p->lock);
	n = p->busy;
	pthread_mutex_unlock(&p->lock);
	return n;
}

bool ust_bpfu_pool_wait(struct ust_bpfu_pool *p, int timeout_ms)
{
	struct timespec end;
	bool done;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	while (p->busy) {
		if (timeout_ms < 0)
			pthread_cond_wait(&p->idle, &p->lock);
		else if (pthread_cond_timedwait(&p->idle, &p->lock, &end) == ETIMEDOUT)
			break;
	}
	done = !p->busy;
	pthread_mutex_unlock(&p->lock);
	return done;
}

void ust_bpfu_pool_free(struct ust_bpfu_pool *p)
{
	struct job *j, *next;
	unsigned int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	j = p->head;
	p->head = p->tail = NULL;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nr; i++)
		pthread_join(p->threads[i], NULL);
	for (; j; j = next) {
		next = j->next;
		j->fn(j->arg, false);
		free(j);
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
