// SPDX-License-Identifier: LGPL-2.1
/*
 * The recorder benchmark's workload: N getppid() calls from the bottom of a
 * 12-deep call chain (frame pointers), timed around the loop only, so the
 * recorder's own start and stop do not count.  A second argument adds
 * that many frames above the chain (40 frames deep: 28); a third, "alt",
 * makes every other call another way (see wl_alt).  Prints
 * "ns calls cpu_ns": the loop's wall time, and its CPU time (what the
 * tracing costs this task, whatever else shares the machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile long wl_sink;
static int wl_alt;

/*
 * wl_alt (a third argument "alt"): every other call through syscall(2),
 * another libc function, so that no two stacks in a row are alike and no
 * walk can reuse the last one (the BPF walk's memo): the cost of a walk
 * itself.
 */
__attribute__((noinline)) void wl_leaf(long calls)
{
	for (long i = 0; i < calls; i++) {
		if (wl_alt && (i & 1))
			wl_sink += syscall(SYS_getppid);
		else
			wl_sink += getppid();
	}
}

#include "../chain12.h"

/* The call after the recursion keeps it from becoming a jump. */
__attribute__((noinline)) void wl_deep(long calls, int extra)
{
	if (extra > 0)
		wl_deep(calls, extra - 1);
	else
		wl_1(calls);
	wl_sink++;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100000;
	int extra = argc > 2 ? atoi(argv[2]) : 0;
	struct timespec a, b, ca, cb;

	wl_alt = argc > 3 && !strcmp(argv[3], "alt");
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	wl_deep(calls, extra);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld %ld %lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec),
	       calls, (long long)(cb.tv_sec - ca.tv_sec) * 1000000000LL + (cb.tv_nsec - ca.tv_nsec));
	return 0;
}
