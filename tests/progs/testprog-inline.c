// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-testprog-inline (-O2): ust_inl_leaf is always inlined into
 * ust_inl_mid, and ust_inl_mid into nothing (noinline), so the getppid()
 * call site sits in an inlined subroutine of ust_inl_mid: DWARF carries
 * two frames for one return address.  ust_inl_deep adds a second inline
 * level (ust_inl_deep -> ust_inl_leaf2 -> ust_inl_leaf).
 */
#include <stdlib.h>
#include <unistd.h>

int ust_inl_mid(int n);
int ust_inl_deep(int n);

volatile int ust_inl_sink;

static inline __attribute__((always_inline)) int ust_inl_leaf(int n)
{
	int r = 0;

	for (int i = 0; i < n; i++)
		r += (int)getppid();
	ust_inl_sink = r;
	return r;
}

static inline __attribute__((always_inline)) int ust_inl_leaf2(int n)
{
	int r = ust_inl_leaf(n + 1);

	ust_inl_sink = r + 3;
	return r;
}

__attribute__((noinline)) int ust_inl_mid(int n)
{
	int r = ust_inl_leaf(n);

	ust_inl_sink = r + 1;
	return r;
}

__attribute__((noinline)) int ust_inl_deep(int n)
{
	int r = ust_inl_leaf2(n);

	ust_inl_sink = r + 2;
	return r;
}

int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < loops; i++) {
		ust_inl_mid(1);
		ust_inl_deep(1);
	}
	return 0;
}
