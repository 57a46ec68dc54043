// SPDX-License-Identifier: LGPL-2.1
/*
 * The library of the --addr-filter live test.  af_lib_call() enters the
 * kernel itself (an inline syscall instruction, not libc's getppid()), so
 * the user IP at its sys_enter_getppid events lies inside af_lib_call.
 */
#include <sys/syscall.h>

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
