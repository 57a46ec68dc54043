/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * lock_held() events in ustitch record: an event whose -f uses lock_held()
 * is taken out of ftrace and recorded by this source through perf (one
 * tracepoint event per CPU, the ftrace part of the filter set on it, the
 * BPF filter attached), into the trace.dat's "ustitch" buffer.
 */
#ifndef USTITCH_REC_LOCKHELD_H
#define USTITCH_REC_LOCKHELD_H

struct rec_opts;

/*
 * After event expansion: parse, resolve against this kernel and compile
 * every lock_held() filter, move those events into a rec_source.  Touches
 * nothing.  0, or prints "ustitch record: ..." and returns -1.
 */
int rec_lockheld_claim(struct rec_opts *o);

#endif
