// SPDX-License-Identifier: LGPL-2.1
/*
 * A CFI test program: calls through the PLT into libcfitest (linked
 * -z lazy, so the PLT carries binutils' lazy-binding CFA expression),
 * and a stack-realigned frame (an over-aligned local beside a VLA: the
 * CFA becomes *(rbp - 8), rbp saved at rbp + 0).  Built -O2
 * -fomit-frame-pointer, PIE and not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cfit_leaf(int x);
long cfit_sum(const int *v, int n);
int cfit_recurse(int depth, int acc);

__attribute__((noinline)) static long realigned(int n)
{
	int big[16] __attribute__((aligned(64)));
	char vla[n];
	long s = 0;
	int i;

	memset(vla, n, (size_t)n);
	for (i = 0; i < 16; i++)
		big[i] = vla[i % n] + i;
	__asm__ volatile("" : : "r"(big), "r"(vla) : "memory");
	for (i = 0; i < 16; i++)
		s += cfit_leaf(big[i]);
	return s;
}

int main(int argc, char **argv)
{
	int v[8], i;

	for (i = 0; i < 8; i++)
		v[i] = argc + i;
	printf("%ld %d %ld\n", cfit_sum(v, 8), cfit_recurse(argc + 2, 0),
	       realigned(argc + (argv[0] ? 20 : 0)));
	return 0;
}
