/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The sampling tests' programs spin for a given time of their own thread's
 * CPU, so that the samples they get do not depend on the machine's load.
 */
#ifndef UST_TEST_CPU_MS_H
#define UST_TEST_CPU_MS_H

#include <time.h>

/* This thread's CPU time, in milliseconds. */
static inline double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#endif
