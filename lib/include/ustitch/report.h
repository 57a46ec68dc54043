/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_report: what a report host (the libtraceevent plugin) needs besides
 * its own output: which trace.dat it is reading, and the first pass's
 * mapping records handed to the resolver.
 */
#ifndef USTITCH_REPORT_H
#define USTITCH_REPORT_H

#include <sys/types.h>

#define UST_REPORT_PATH_MAX	4096
#define UST_REPORT_MAX_INPUTS	16	/* command-line trace files looked at */

struct ust_res;
struct ust_scan;

/*
 * The trace files this process was asked to read: @forced if not empty,
 * else those of its command line (/proc/self/cmdline: "-i FILE", "-iFILE"
 * or a bare argument) that are trace.dat files, else "trace.dat" if it is
 * one.  Fills at most @max paths; returns how many.
 */
int ust_report_candidates(const char *forced, char out[][UST_REPORT_PATH_MAX], int max);

/* One input of the host: the trace.dat a tep_handle was made for. */
struct ust_report_input {
	int fd;				/* the host's descriptor: never closed here */
	dev_t dev;
	ino_t ino;
	char path[UST_REPORT_PATH_MAX];	/* as the command line names it, else where @fd leads */
};

/*
 * The input the host is opening: called from a plugin loader.  libtracecmd
 * (trace-cmd report with one or several -i) loads the plugins of each input
 * into its own tep_handle right after reading that file's magic, version
 * and endianness from a descriptor of its own, which is then the one on a
 * trace.dat positioned just past those bytes (the newest, if several).
 * @skip_fds: descriptors of inputs already attributed.  0, or -ENOENT when
 * no descriptor fits (a host that reads the file another way).
 */
int ust_report_input_opening(struct ust_report_input *in, const int *skip_fds, int nr_skip);

/* Every mapping record the first pass @sc found, added to @res. */
void ust_report_add_mappings(struct ust_res *res, const struct ust_scan *sc);

/*
 * The resolver told about the trace being reported (@sc's file, else
 * @trace_path; ust_res_set_trace: its directory, time and archive, @archive
 * or TRACE.ustitch/) and given @sc's mapping records.  0, or a negative
 * errno with @err when the archive cannot be used (the rest is done).
 */
int ust_report_setup(struct ust_res *res, const struct ust_scan *sc, const char *trace_path,
		     const char *archive, char *err, size_t errsz);

#endif
