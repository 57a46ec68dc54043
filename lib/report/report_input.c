// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_report_input: which trace file a report host is opening while it
 * loads the plugins.
 *
 * `trace-cmd report -i a.dat -i b.dat` opens each input with its own
 * tracecmd_alloc_fd(), and so its own tep_handle and its own call of every
 * plugin's loader.  libtracecmd calls the loaders after reading the file's
 * magic, its version string and its endianness byte from the descriptor it
 * opened for that input, before anything else: the one descriptor on a
 * trace.dat whose offset is exactly past those bytes belongs to the tep
 * being set up.  The name a user typed (the command line's) is kept for
 * the messages when it is the same file; a file given twice is told apart
 * by its descriptor, which earlier inputs already claimed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustitch/report.h"

#define HEAD_MAX	64

static const char magic[10] = "\027\010\104tracing";

/* The offset libtracecmd's descriptor has when plugins load; 0: not a trace.dat. */
static off_t header_end(int fd)
{
	char buf[HEAD_MAX];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	const char *nul;

	if (n < (ssize_t)sizeof(magic) + 2 || memcmp(buf, magic, sizeof(magic)))
		return 0;
	nul = memchr(buf + sizeof(magic), '\0', (size_t)n - sizeof(magic));
	if (!nul || nul + 2 > buf + n)
		return 0;
	return (off_t)(nul + 1 - buf) + 1;	/* the version's NUL, then the endian byte */
}

static bool skipped(int fd, const int *skip, int nr_skip)
{
	int i;

	for (i = 0; i < nr_skip; i++)
		if (skip[i] == fd)
			return true;
	return false;
}

/* The newest (highest) descriptor on a trace.dat at its header's end; -1: none. */
static int opening_fd(const int *skip, int nr_skip, struct stat *st)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int best = -1, self = d ? dirfd(d) : -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct stat s;
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		off_t pos;

		if (*end || end == de->d_name || fd == self || fd <= best ||
		    skipped((int)fd, skip, nr_skip))
			continue;
		if (fstat((int)fd, &s) || !S_ISREG(s.st_mode))
			continue;
		pos = lseek((int)fd, 0, SEEK_CUR);
		if (pos <= 0 || pos != header_end((int)fd))
			continue;
		best = (int)fd;
		*st = s;
	}
	closedir(d);
	return best;
}

int ust_report_input_opening(struct ust_report_input *in, const int *skip_fds, int nr_skip)
{
	char cand[UST_REPORT_MAX_INPUTS][UST_REPORT_PATH_MAX], link[64];
	struct stat st = { 0 };
	int i, n;
	ssize_t len;

	memset(in, 0, sizeof(*in));
	in->fd = opening_fd(skip_fds, nr_skip, &st);
	if (in->fd < 0)
		return -ENOENT;
	in->dev = st.st_dev;
	in->ino = st.st_ino;
	n = ust_report_candidates(NULL, cand, UST_REPORT_MAX_INPUTS);
	for (i = 0; i < n; i++) {
		struct stat cs;

		if (!stat(cand[i], &cs) && cs.st_dev == st.st_dev && cs.st_ino == st.st_ino) {
			memcpy(in->path, cand[i], sizeof(in->path));
			return 0;
		}
	}
	/* Not named on the command line (another host): where the descriptor leads. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", in->fd);
	len = readlink(link, in->path, sizeof(in->path) - 1);
	if (len <= 0) {
		snprintf(in->path, sizeof(in->path), "%s", link);
		return 0;
	}
	in->path[len] = '\0';
	return 0;
}
