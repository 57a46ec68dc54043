// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOADed by bench/dwarf into a recorder and the program it records:
 * at exit each process appends one line to $UST_BENCH_RUSAGE,
 *   PID PPID COMM SELF_US CHILDREN_US MAXRSS_KB
 * its own CPU time (user + system, all its threads) and that of the
 * children it waited for.  That separates a program's CPU from its
 * recorder's without a wrapper process between them: perf 6.1 unwinds one
 * frame only for a program a wrapper fork()ed or exec()ed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static long long rusage_us(const struct rusage *ru)
{
	return (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000LL + ru->ru_utime.tv_usec +
	       ru->ru_stime.tv_usec;
}

__attribute__((destructor)) static void ustb_rusage_at_exit(void)
{
	const char *path = getenv("UST_BENCH_RUSAGE");
	struct rusage self, kids;
	char line[256];
	int fd, n, saved = errno;

	if (!path || getrusage(RUSAGE_SELF, &self) || getrusage(RUSAGE_CHILDREN, &kids))
		return;
	n = snprintf(line, sizeof(line), "%d %d %s %lld %lld %ld\n", (int)getpid(), (int)getppid(),
		     program_invocation_short_name, rusage_us(&self), rusage_us(&kids), self.ru_maxrss);
	/* One write() with O_APPEND: lines of processes exiting together stay whole. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, line, (size_t)n);

		(void)w;	/* nothing to do about a lost line: the row shows it */
		close(fd);
	}
	errno = saved;
}
