// SPDX-License-Identifier: LGPL-2.1
/*
 * The sampling benchmark's workload: a fixed amount of CPU-bound work at
 * the bottom of a 12-deep call chain (frame pointers), timed around the
 * work only, so that the recorder's start and stop do not count.  Sampling
 * costs show as a longer loop.  Prints "wall_ns cpu_ns": the CPU time
 * includes what the kernel charges to the task (the task_work's unwinding;
 * interrupt time too, unless the kernel accounts it apart).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long wl_sink;

__attribute__((noinline)) void wl_leaf(long iters)
{
	unsigned long x = wl_sink;

	for (long i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	wl_sink = x;
}

#include "../chain12.h"

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000000000L;
	struct timespec a, b, ca, cb;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	wl_1(iters);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld %lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec),
	       (long long)(cb.tv_sec - ca.tv_sec) * 1000000000LL + (cb.tv_nsec - ca.tv_nsec));
	return 0;
}
