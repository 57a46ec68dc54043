/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_pprof: the samples of a trace as a gzipped profile.proto, the format
 * `go tool pprof`, Grafana Pyroscope, Parca and OpenTelemetry's profiles
 * take in.  Sample types samples/count and cpu/nanoseconds (the period of
 * each sample); a Mapping per object (its path and build-id; the kernel's
 * as [kernel.kallsyms]), a Location per (object, file offset), a Function
 * per name; labels per sample: comm, tid, cpu, event, and "stack" where
 * its user stack was lost (it keeps its sample).
 */
#ifndef USTITCH_PPROF_H
#define USTITCH_PPROF_H

#include <stdbool.h>
#include <stddef.h>

struct ust_fold_names;
struct ust_scan;

/*
 * What `-O ustitch:pprof=PATH` does at the end of a report: the samples of
 * @path (@scan: its first pass, or NULL) into PATH, a line on stdout
 * saying where; @lines (-O ustitch:lines=1): each location with its source
 * line and the functions inlined there as lines of it.  Sample types:
 * samples/count and cpu/nanoseconds for sampling events, events/count for
 * events with deferred stacks, and with @weight (-O ustitch:weight=FIELD)
 * one more named after the field, each event's value of it summed.  0, or
 * a negative errno with @err.
 */
int ust_pprof_report(const char *dest, const char *path, const struct ust_scan *scan,
		     const struct ust_fold_names *names, bool lines, const char *weight, char *err,
		     size_t errsz);

#endif
