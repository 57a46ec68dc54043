// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-lttng-app: known call chains and known lock nesting for the LTTng
 * tests.  Every function is noinline and built with frame pointers, so the
 * stacks are the same in every build; each tracepoint carries a tag that
 * the expected output is keyed by.
 *
 *   ust-lttng-app basic            the chains and lock sets of test-lttng.sh
 *   ust-lttng-app late PROVIDER    tag 1, dlopen(PROVIDER), tag 2
 *   ust-lttng-app pause FILE       tag 1, creates FILE.ready, waits (60 s
 *                                  at most) for FILE, tag 1 again
 *   ust-lttng-app live FILE basic|again
 *                                  for a live reader (test-lttng-relayd.sh):
 *                                  tag 99 every 50 ms until FILE exists,
 *                                  then the basic chains (called from main,
 *                                  as for basic) or, for again, tag 1 with
 *                                  the very stack of a tag 1 emitted before
 *                                  the markers; then quiet until FILE.end
 *                                  (60 s at most)
 *   ust-lttng-app stress THREADS ITERS
 *                                  threads recursing to random depths under
 *                                  random locks, signal handlers tracing
 *   ust-lttng-app bench MODE DEPTH N
 *                                  N events at recursion depth DEPTH
 *                                  (MODE lock: under two mutexes); prints
 *                                  the thread's CPU ns per event
 *   ust-lttng-app mix N            N events of ~150 distinct stacks and
 *                                  lock sets, one thread, no signals
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ust_lttng_app_tp.h"

#define NOINLINE __attribute__((noinline))

pthread_mutex_t lt_lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lt_lock_b = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t lt_rwlock = PTHREAD_RWLOCK_INITIALIZER;
pthread_spinlock_t lt_spin;
volatile int lt_sink;

NOINLINE void lt_emit(int tag, int n)
{
	lttng_ust_tracepoint(ustlt, work, tag, n);
	lt_sink++;
}

/* tag 1: main -> lt_outer -> lt_middle -> lt_inner -> lt_emit */
NOINLINE void lt_inner(int tag)
{
	lt_emit(tag, 0);
	lt_sink++;
}

NOINLINE void lt_middle(int tag)
{
	lt_inner(tag);
	lt_sink++;
}

NOINLINE void lt_outer(int tag)
{
	lt_middle(tag);
	lt_sink++;
}

/* tag 2: under lt_lock_a; tag 3: under lt_lock_a then lt_lock_b */
NOINLINE void lt_locked_inner(void)
{
	pthread_mutex_lock(&lt_lock_b);
	lt_emit(3, 2);
	pthread_mutex_unlock(&lt_lock_b);
}

NOINLINE void lt_locked(void)
{
	pthread_mutex_lock(&lt_lock_a);
	lt_emit(2, 1);
	lt_locked_inner();
	pthread_mutex_unlock(&lt_lock_a);
}

/* tag 4: read lock, then a spinlock inside it; tag 5: released again */
NOINLINE void lt_rw_spin(void)
{
	pthread_rwlock_rdlock(&lt_rwlock);
	pthread_spin_lock(&lt_spin);
	lt_emit(4, 2);
	pthread_spin_unlock(&lt_spin);
	pthread_rwlock_unlock(&lt_rwlock);
	lt_emit(5, 0);
}

/* tag 6: the same stack three times (one id, one ustitch:stack) */
NOINLINE void lt_repeat(void)
{
	for (int i = 0; i < 3; i++)
		lt_emit(6, i);
}

/* tag 7: lt_recurse nested @depth times, then lt_emit */
NOINLINE void lt_recurse(int depth, int tag, int n)
{
	if (depth > 1)
		lt_recurse(depth - 1, tag, n);
	else
		lt_emit(tag, n);
	lt_sink++;
}

/* tag 8: a thread: lt_thread -> lt_thread_work -> lt_emit, under a
 * trylock; tag 9: a heap mutex (no symbol: shown as an address) */
NOINLINE void lt_thread_work(void)
{
	pthread_mutex_t *heap = malloc(sizeof(*heap));

	pthread_mutex_init(heap, NULL);
	if (pthread_mutex_trylock(&lt_lock_b) == 0) {
		lt_emit(8, 1);
		pthread_mutex_unlock(&lt_lock_b);
	}
	pthread_mutex_lock(heap);
	lt_emit(9, 1);
	pthread_mutex_unlock(heap);
	pthread_mutex_destroy(heap);
	free(heap);
}

NOINLINE void *lt_thread(void *arg)
{
	(void)arg;
	lt_thread_work();
	return NULL;
}

static int basic(void)
{
	pthread_t th;

	lt_outer(1);
	lt_locked();
	lt_rw_spin();
	lt_repeat();
	lt_recurse(10, 7, 10);
	if (pthread_create(&th, NULL, lt_thread, NULL) || pthread_join(th, NULL))
		return 1;
	return 0;
}

static int late(const char *provider)
{
	lt_outer(1);
	if (!dlopen(provider, RTLD_NOW)) {
		fprintf(stderr, "dlopen %s: %s\n", provider, dlerror());
		return 1;
	}
	lt_outer(2);
	return 0;
}

static int pause_for(const char *file)
{
	char ready[4096];
	FILE *f;

	lt_outer(1);
	snprintf(ready, sizeof(ready), "%s.ready", file);
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fclose(f);
	for (int i = 0; i < 6000 && access(file, F_OK); i++)
		usleep(10000);
	lt_outer(1);
	return 0;
}

/* --- live ---------------------------------------------------------------- */

/* Up to 60 s for @file; 0 when it came. */
static int wait_file(const char *file)
{
	for (int i = 0; i < 6000; i++) {
		if (!access(file, F_OK))
			return 0;
		usleep(10000);
	}
	return 1;
}

/* tag 99, from its own call site, until @file exists: a live reader has
 * attached once it prints one. */
NOINLINE static int lt_markers(const char *file)
{
	for (int i = 0; i < 1200; i++) {
		if (!access(file, F_OK))
			return 0;
		lt_emit(99, i);
		usleep(50000);
	}
	return 1;
}

/* tag 1 twice with one stack (one call site), markers in between. */
NOINLINE static int lt_again(const char *file)
{
	for (int i = 0; i < 2; i++) {
		lt_outer(1);
		if (!i && lt_markers(file))
			return 1;
	}
	return 0;
}

static int live_end(const char *file)
{
	char end[4096];

	snprintf(end, sizeof(end), "%s.end", file);
	return wait_file(end);
}

/* --- stress ------------------------------------------------------------ */

static volatile sig_atomic_t stop_signals;
static int workers_done;
static pthread_t stress_threads[64];
static int nr_stress_threads;

NOINLINE static void lt_on_signal(int signo)
{
	/* A signal handler taking a tracepoint (and a lock, briefly: a
	 * trylock is async-signal-safe enough for a test). */
	if (pthread_spin_trylock(&lt_spin) == 0) {
		lttng_ust_tracepoint(ustlt, sig, signo);
		pthread_spin_unlock(&lt_spin);
	} else {
		lttng_ust_tracepoint(ustlt, sig, signo);
	}
}

NOINLINE static void lt_stress_step(unsigned int *seed, int iter)
{
	int depth = 1 + (int)(rand_r(seed) % 48);
	int locks = (int)(rand_r(seed) % 3);

	if (locks > 0)
		pthread_mutex_lock(&lt_lock_a);
	if (locks > 1)
		pthread_rwlock_wrlock(&lt_rwlock);
	lt_recurse(depth, 10 + locks, iter);
	if (locks > 1)
		pthread_rwlock_unlock(&lt_rwlock);
	if (locks > 0)
		pthread_mutex_unlock(&lt_lock_a);
}

struct stress_arg {
	int iters;
	unsigned int seed;
};

NOINLINE static void *lt_stress_thread(void *p)
{
	struct stress_arg *a = p;

	for (int i = 0; i < a->iters; i++)
		lt_stress_step(&a->seed, i);
	__atomic_add_fetch(&workers_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *signaller(void *p)
{
	(void)p;
	while (!stop_signals) {
		for (int i = 0; i < nr_stress_threads; i++)
			pthread_kill(stress_threads[i], SIGUSR1);
		kill(getpid(), SIGALRM);
		usleep(50);
	}
	return NULL;
}

static int stress(int threads, int iters)
{
	struct stress_arg args[64];
	struct sigaction sa;
	stack_t ss;
	pthread_t sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = lt_on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	/* SIGALRM on an alternate stack (main thread's): the walk must
	 * leave it without faulting. */
	ss.ss_sp = malloc(64 * 1024);
	ss.ss_size = 64 * 1024;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigaction(SIGALRM, &sa, NULL);
	if (threads > 64)
		threads = 64;
	for (int i = 0; i < threads; i++) {
		args[i].iters = iters;
		args[i].seed = (unsigned int)i * 7919u + 1;
		if (pthread_create(&stress_threads[i], NULL, lt_stress_thread, &args[i]))
			return 1;
		nr_stress_threads++;
	}
	pthread_create(&sig, NULL, signaller, NULL);
	for (int i = 0; i < iters; i++) {
		unsigned int seed = (unsigned int)i;

		lt_stress_step(&seed, i);
	}
	/* Stop the signals before any worker is joined: a joined thread's
	 * id must not be signalled any more. */
	while (__atomic_load_n(&workers_done, __ATOMIC_SEQ_CST) < nr_stress_threads)
		usleep(1000);
	stop_signals = 1;
	pthread_join(sig, NULL);
	for (int i = 0; i < nr_stress_threads; i++)
		pthread_join(stress_threads[i], NULL);
	return 0;
}

/* --- bench ------------------------------------------------------------- */

/* This thread's CPU time: other processes on the machine do not count. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINLINE static void lt_bench_loop(int n)
{
	for (int i = 0; i < n; i++)
		lttng_ust_tracepoint(ustlt, work, 0, i);
}

NOINLINE static void lt_bench_at(int depth, int n)
{
	if (depth > 1)
		lt_bench_at(depth - 1, n);
	else
		lt_bench_loop(n);
	lt_sink++;
}

static int bench(const char *mode, int depth, int n)
{
	long long t0;

	if (!strcmp(mode, "lock"))
		pthread_mutex_lock(&lt_lock_a);
	if (!strcmp(mode, "lock"))
		pthread_mutex_lock(&lt_lock_b);
	t0 = now_ns();
	lt_bench_at(depth, n);
	printf("%.1f\n", (double)(now_ns() - t0) / n);
	if (!strcmp(mode, "lock")) {
		pthread_mutex_unlock(&lt_lock_b);
		pthread_mutex_unlock(&lt_lock_a);
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_spin_init(&lt_spin, PTHREAD_PROCESS_PRIVATE);
	if (argc >= 2 && !strcmp(argv[1], "basic"))
		return basic();
	if (argc >= 3 && !strcmp(argv[1], "late"))
		return late(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "stress"))
		return stress(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "pause"))
		return pause_for(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "live") && !strcmp(argv[3], "basic")) {
		if (lt_markers(argv[2]) || basic())
			return 1;
		return live_end(argv[2]);
	}
	if (argc >= 4 && !strcmp(argv[1], "live") && !strcmp(argv[3], "again"))
		return lt_again(argv[2]) || live_end(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "mix")) {
		unsigned int seed = 1;

		for (int i = 0, n = atoi(argv[2]); i < n; i++)
			lt_stress_step(&seed, i);
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "bench"))
		return bench(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: %s basic | late PROVIDER | pause FILE | live FILE basic|again |"
		" stress THREADS ITERS | mix N |"
		" bench MODE DEPTH N\n",
		argv[0]);
	return 2;
}
