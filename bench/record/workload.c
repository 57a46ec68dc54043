// SPDX-License-Identifier: LGPL-2.1
/*
 * The recorder benchmark's workload: N getppid() calls from the bottom of a
 * 12-deep call chain (frame pointers), timed around the loop only, so the
 * recorder's own start and stop do not count.  Prints "ns calls".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile long wl_sink;

__attribute__((noinline)) void wl_leaf(long calls)
{
	for (long i = 0; i < calls; i++)
		wl_sink += getppid();
}

#include "../chain12.h"

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	wl_1(calls);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld %ld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec), calls);
	return 0;
}
