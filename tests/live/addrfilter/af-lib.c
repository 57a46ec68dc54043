// SPDX-License-Identifier: LGPL-2.1
/*
 * The library of the --addr-filter live test.  af_lib_call() enters the
 * kernel itself (an inline syscall instruction, not libc's getppid()), so
 * the user IP at its sys_enter_getppid events lies inside af_lib_call.
 * af_lib_spin() spins in user mode, for the sampling tests.
 */
#include <sys/syscall.h>
#include <time.h>

volatile unsigned long af_lib_sink;

__attribute__((noinline)) long af_lib_call(int n)
{
	long r = 0, ret;
	int i;

	for (i = 0; i < n; i++) {
		__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
		r += ret;
	}
	return r;
}

/* About @ms of CPU time, nearly all of it in this function. */
__attribute__((noinline)) void af_lib_spin(double ms)
{
	struct timespec t;
	double until = -1, now;
	int i;

	for (;;) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		now = (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
		if (until < 0)
			until = now + ms;
		if (now >= until)
			break;
		for (i = 0; i < 200000; i++)
			af_lib_sink += (unsigned long)i * 7;
	}
}
