/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ustitch record: perf sampling events (-e cpu-clock -F 999 -g) as a
 * record source.  Samples go into the trace's "ustitch" buffer as
 * ustitch/sample records, each followed on its CPU by its kernel stack
 * (ftrace/kernel_stack) and its user stack (user_unwind_cookie, and the
 * user_unwind_stack recorded when the task returned to user space).
 */
#ifndef USTITCH_REC_PERF_H
#define USTITCH_REC_PERF_H

#include <stdbool.h>
#include <stdio.h>

struct rec_opts;
struct ust_probe_report;

/* getopt code of --call-graph (no short option, as in perf record). */
#define REC_PERF_OPT_CALL_GRAPH	0x100

/* Is @name (an -e argument without ':') a perf sampling event? */
bool rec_perf_is_event(const char *name);
/* -e NAME of a sampling event.  0, or 2 after printing why. */
int rec_perf_add_event(struct rec_opts *o, const char *name);
/* -F, -c, -g, --call-graph (REC_PERF_OPT_CALL_GRAPH).  0, or 2. */
int rec_perf_option(struct rec_opts *o, int opt, const char *arg);
/* Are sampling events recorded? */
bool rec_perf_wanted(const struct rec_opts *o);
/*
 * After parsing, before anything is touched: the options hang together,
 * the events open on this kernel, the user stacks have a way to be made
 * (the BPF unwinder, perf's defer_callchain, or perf's immediate
 * callchain: see rec_perf.c).  Sets the trace clock to mono.
 * 0, or 2 after printing why.
 */
int rec_perf_validate(struct rec_opts *o);
/* For ustitch probe, after @r's probes: how -g (and --call-graph defer)
 * make user stacks here, and why (loads the BPF unwinder for a moment). */
void rec_perf_probe_default(const struct ust_probe_report *r, FILE *out);
/* The usage lines of these options. */
void rec_perf_usage(FILE *out);

#endif
