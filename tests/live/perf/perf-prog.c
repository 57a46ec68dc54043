// SPDX-License-Identifier: LGPL-2.1
/*
 * perf-prog: a CPU-bound program with known call chains for the sampling
 * tests and benchmarks.
 *
 *   main -> perf_a -> perf_b -> perf_c         spins in user mode
 *   main -> perf_k -> perf_read -> read()      reads /dev/zero: samples in
 *                                              the kernel, a user stack above
 *   thr_main -> thr_a -> perf_c                a thread ('t'), on its own CPU
 *   main -> child_x -> child_y -> perf_c       a child process ('f')
 *
 * Each phase runs for the given milliseconds of its own CPU time.
 * usage: perf-prog [user_ms [kernel_ms [t][f]]]
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_ms.h"

volatile unsigned long perf_sink;

__attribute__((noinline)) void perf_c(double ms)
{
	double until = cpu_ms() + ms;

	while (cpu_ms() < until)
		for (int i = 0; i < 100000; i++)
			perf_sink += (unsigned long)i * 7;
}

__attribute__((noinline)) void perf_b(double ms)
{
	perf_c(ms);
	perf_sink++;
}

__attribute__((noinline)) void perf_a(double ms)
{
	perf_b(ms);
	perf_sink++;
}

__attribute__((noinline)) void perf_read(int fd, char *buf, double ms)
{
	double until = cpu_ms() + ms;

	while (cpu_ms() < until)
		if (read(fd, buf, 1 << 20) < 0)
			break;
}

__attribute__((noinline)) void perf_k(double ms)
{
	char *buf = malloc(1 << 20);
	int fd = open("/dev/zero", O_RDONLY);

	if (buf && fd >= 0)
		perf_read(fd, buf, ms);
	if (fd >= 0)
		close(fd);
	free(buf);
	perf_sink++;
}

__attribute__((noinline)) void thr_a(double ms)
{
	perf_c(ms);
	perf_sink++;
}

static void *thr_main(void *arg)
{
	thr_a(*(double *)arg);
	return NULL;
}

__attribute__((noinline)) void child_y(double ms)
{
	perf_c(ms);
	perf_sink++;
}

__attribute__((noinline)) void child_x(double ms)
{
	child_y(ms);
	perf_sink++;
}

/*
 * With 't', main (and a child it forks) on the first CPU it may use and the
 * thread on the second: the tests check that samples come from several
 * CPUs' rings, and on a loaded machine the scheduler may otherwise keep
 * every task of the program on one CPU for the whole run.  Nothing is
 * pinned when only one CPU is allowed.
 */
static void pin_apart(pthread_attr_t *thr_attr)
{
	cpu_set_t allowed, one;
	int first = -1, second = -1;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
		if (CPU_ISSET(c, &allowed)) {
			if (first < 0)
				first = c;
			else
				second = c;
		}
	if (second < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(second, &one);
	if (pthread_attr_setaffinity_np(thr_attr, sizeof(one), &one))
		return;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

int main(int argc, char **argv)
{
	double user_ms = argc > 1 ? atof(argv[1]) : 500, kernel_ms = argc > 2 ? atof(argv[2]) : 0;
	const char *extra = argc > 3 ? argv[3] : "";
	pthread_t thr;
	pthread_attr_t thr_attr;
	bool thread = strchr(extra, 't') != NULL, fork_child = strchr(extra, 'f') != NULL;
	pid_t child = -1;

	if (thread) {
		if (pthread_attr_init(&thr_attr))
			return 1;
		pin_apart(&thr_attr);
		if (pthread_create(&thr, &thr_attr, thr_main, &user_ms))
			return 1;
		pthread_attr_destroy(&thr_attr);
	}
	if (fork_child && (child = fork()) == 0) {
		child_x(user_ms);
		_exit(0);
	}
	perf_a(user_ms);
	if (kernel_ms > 0)
		perf_k(kernel_ms);
	if (thread)
		pthread_join(thr, NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
