// SPDX-License-Identifier: LGPL-2.1
/*
 * The shared library of the CFI test programs: a few frames of each
 * kind, built -O2 -fomit-frame-pointer like Debian's libraries.
 */
#include <string.h>

int cfit_leaf(int x);
long cfit_sum(const int *v, int n);
int cfit_recurse(int depth, int acc);

int cfit_leaf(int x)
{
	return x * 3 + 1;
}

long cfit_sum(const int *v, int n)
{
	long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += cfit_leaf(v[i]);
	return s;
}

/* Big frames: CFA offsets above 127 and callee-saved registers pushed. */
int cfit_recurse(int depth, int acc)
{
	volatile char pad[4096];

	memset((char *)pad, depth, sizeof(pad));
	if (depth <= 0)
		return acc + pad[17];
	return cfit_recurse(depth - 1, acc + pad[depth % 4096]) + 1;
}
