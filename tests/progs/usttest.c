// SPDX-License-Identifier: LGPL-2.1
/*
 * libusttest.so: a shared library in the test chain, linked so that its
 * segments' p_vaddr differs from their p_offset (see meson.build), which
 * is the case file-offset-to-address translation must get right.
 */
#include <unistd.h>

int ust_lib_entry(int n);
int ust_lib_inner(int n);

volatile int ust_lib_sink;

__attribute__((noinline)) int ust_lib_inner(int n)
{
	int r = 0;

	for (int i = 0; i < n; i++)
		r += (int)getppid();
	ust_lib_sink = r;
	return r;
}

__attribute__((noinline)) int ust_lib_entry(int n)
{
	int r = ust_lib_inner(n);

	ust_lib_sink = r + 1;
	return r;
}
