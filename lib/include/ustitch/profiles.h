/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_profiles: what `-O ustitch:folded=, flamegraph=, pprof=, top=` make
 * at the end of a report, all from one pass over the first pass's entries
 * (ust_scan's samples, or in a recording without samples its events with
 * deferred stacks): entries alike (the same user stack by its frames, task,
 * CPU, event, kernel frames) are counted together first, so that naming
 * frames, folding and writing is done once per distinct one.
 */
#ifndef USTITCH_PROFILES_H
#define USTITCH_PROFILES_H

#include <stdbool.h>

struct ust_fold_names;
struct ust_scan;

struct ust_profiles_opts {
	const char *folded;		/* "1": on stdout; a path; NULL: none */
	const char *flamegraph;		/* PATH.svg, or NULL */
	bool icicle, per_thread;	/* the flame graph's variants */
	const char *pprof;		/* PATH.pb.gz, or NULL */
	bool lines;			/* pprof: source lines, inlined frames */
	const char *weight;		/* pprof: the events' field summed as a type, or NULL */
	unsigned int top;		/* functions per summary table, 0: none */
	const char *subtitle;		/* the flame graph's (the trace) */
};

/*
 * The outputs @o asks for, of the trace.dat @path (@scan: its first pass,
 * or NULL: one is made here), each said on stdout (where it went) and its
 * failure on stderr ("ustitch: pprof: ..."), the others still made.  0, or
 * the first failure's negative errno.
 */
int ust_profiles_report(const struct ust_profiles_opts *o, const char *path,
			const struct ust_scan *scan, const struct ust_fold_names *names);

#endif
