// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-paths: two call chains that tell their events apart, for the checks
 * that a stack is never given to another event (lost events, stitching by
 * cookie).  Call i goes main -> ust_even or ust_odd (by i's parity) ->
 * ust_leaf -> lseek(-1, i, SEEK_SET): the lseek event's offset names the
 * path its stack must show.  lseek on no file fails at once, so a loop
 * makes events as fast as the kernel traces them.
 */
#include <stdlib.h>
#include <unistd.h>

int ust_even(long i);
int ust_odd(long i);
int ust_leaf(long i);

volatile long ust_sink;

__attribute__((noinline)) int ust_leaf(long i)
{
	ust_sink = (long)lseek(-1, (off_t)i, SEEK_SET);
	return 0;
}

__attribute__((noinline)) int ust_even(long i)
{
	int r = ust_leaf(i);

	ust_sink = i + 1;
	return r;
}

__attribute__((noinline)) int ust_odd(long i)
{
	int r = ust_leaf(i);

	ust_sink = i + 2;
	return r;
}

/* usage: ust-paths [calls] */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < n; i++)
		if (i & 1)
			ust_odd(i);
		else
			ust_even(i);
	return 0;
}
