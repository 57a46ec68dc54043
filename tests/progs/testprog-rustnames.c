// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-testprog-rustnames: Rust symbol names without rustc.  C functions
 * whose symbols (asm labels) are what rustc emits for
 *
 *   mycrate::module::work                        legacy: _ZN...17h<hash>E
 *   <mycrate::module::Thing>::run                v0:     _RNvM...
 *   <[u8; 4] as mycrate::module::Trait>::f       v0, a ';' in the name
 *
 * called main -> work -> run -> f -> getppid(), so that their frames can
 * be named in a trace.
 */
#include <stdlib.h>
#include <unistd.h>

int rs_work(int n) __asm__("_ZN7mycrate6module4work17h0123456789abcdefE");
int rs_run(int n) __asm__("_RNvMNtCs4fqI2P2rA04_7mycrate6moduleNtB2_5Thing3run");
int rs_f(int n) __asm__("_RNvXNtCs1234_7mycrate6moduleAhj4_NtB2_5Trait1f");

volatile int rs_sink;

__attribute__((noinline)) int rs_f(int n)
{
	int r = 0;

	for (int i = 0; i < n; i++)
		r += (int)getppid();
	rs_sink = r;
	return r;
}

__attribute__((noinline)) int rs_run(int n)
{
	int r = rs_f(n);

	rs_sink = r + 1;
	return r;
}

__attribute__((noinline)) int rs_work(int n)
{
	int r = rs_run(n);

	rs_sink = r + 2;
	return r;
}

int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < loops; i++)
		rs_work(1);
	return 0;
}
