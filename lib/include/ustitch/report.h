/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_report: what a report host (the libtraceevent plugin) needs besides
 * its own output: which trace.dat it is reading, and the first pass's
 * mapping records handed to the resolver.
 */
#ifndef USTITCH_REPORT_H
#define USTITCH_REPORT_H

#define UST_REPORT_PATH_MAX	4096

struct ust_res;
struct ust_scan;

/*
 * The trace files this process was asked to read: @forced if not empty,
 * else those of its command line (/proc/self/cmdline: "-i FILE", "-iFILE"
 * or a bare argument) that are trace.dat files, else "trace.dat" if it is
 * one.  Fills at most @max paths; returns how many.
 */
int ust_report_candidates(const char *forced, char out[][UST_REPORT_PATH_MAX], int max);

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
