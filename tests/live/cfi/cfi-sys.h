/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Raw system calls (the `syscall` instruction inline, no libc wrapper, so
 * the function that contains it is the top frame) and the attributes that
 * keep each chain function a real, separately named frame.
 */
#ifndef CFI_SYS_H
#define CFI_SYS_H

#include <sys/syscall.h>

#ifdef __clang__
#define CFI_FN __attribute__((noinline, used))
#else
#define CFI_FN __attribute__((noinline, noclone, used))
#endif

static inline __attribute__((always_inline)) long cfi_sys0(long nr)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr) : "rcx", "r11", "memory");
	return ret;
}

static inline __attribute__((always_inline)) long cfi_sys2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}

#endif
