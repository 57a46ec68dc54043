// SPDX-License-Identifier: LGPL-2.1
/*
 * lock_held() benchmark workload: N events, or N lock-heavy operations,
 * timed; prints nanoseconds of the process's CPU time per operation (what
 * recording costs the traced task, whatever else runs on the machine: the
 * recorder's own work is on other CPUs or between the loop's slices).
 *   lh-bench events N   getppid() N times (one syscalls:sys_enter_getppid each)
 *   lh-bench mmap N     mmap() + munmap() N times (mmap_write_lock twice each)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000, i;
	double t0;

	if (argc < 2)
		return 2;
	t0 = now();
	if (!strcmp(argv[1], "events")) {
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else {
		for (i = 0; i < n; i++) {
			void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return 1;
			munmap(p, 4096);
		}
	}
	printf("%.1f\n", (now() - t0) / (double)n);
	return 0;
}
