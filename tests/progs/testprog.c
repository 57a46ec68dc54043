// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-testprog: a known call chain main -> ust_a -> ust_b -> ust_c ->
 * getppid() for the symbolizer tests and the end-to-end traces.  The
 * functions are global and noinline so that every build keeps one
 * symbol per function; the volatile sink keeps -O2 from merging them.
 */
#include <stdlib.h>
#include <unistd.h>

int ust_a(int n);
int ust_b(int n);
int ust_c(int n);

volatile int ust_sink;

__attribute__((noinline)) int ust_c(int n)
{
	int r = 0;

	for (int i = 0; i < n; i++)
		r += (int)getppid();
	ust_sink = r;
	return r;
}

__attribute__((noinline)) int ust_b(int n)
{
	int r = ust_c(n);

	ust_sink = r + 1;
	return r;
}

__attribute__((noinline)) int ust_a(int n)
{
	int r = ust_b(n);

	ust_sink = r + 2;
	return r;
}

/* usage: ust-testprog [loops]; loops of the chain, each one getppid(). */
int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < loops; i++)
		ust_a(1);
	return 0;
}
