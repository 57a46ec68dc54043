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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long perf_sink;

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

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

int main(int argc, char **argv)
{
	double user_ms = argc > 1 ? atof(argv[1]) : 500, kernel_ms = argc > 2 ? atof(argv[2]) : 0;
	const char *extra = argc > 3 ? argv[3] : "";
	pthread_t thr;
	bool thread = strchr(extra, 't') != NULL, fork_child = strchr(extra, 'f') != NULL;
	pid_t child = -1;

	if (thread && pthread_create(&thr, NULL, thr_main, &user_ms))
		return 1;
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
