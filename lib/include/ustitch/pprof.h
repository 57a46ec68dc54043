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
#include <stdint.h>

struct ust_dec_frame;
struct ust_fold_names;
struct ust_scan;

/*
 * A profile being built, from whatever reads the samples (a trace.dat's
 * first pass, babeltrace2's messages).  User frames are (file offset,
 * inode, device) named through @n (ust_render, as the report names them;
 * @lines: each location with its source line and the functions inlined
 * there as lines of it); a file's Mapping is named by @map (its path and
 * build-id; NULL, or a NULL path: the frame's object name).
 */
struct ust_pprof;
typedef void (*ust_pprof_map_fn)(void *ctx, uint32_t kdev, uint64_t ino, const char **path,
				 const uint8_t **build_id, size_t *build_id_len);

struct ust_pprof *ust_pprof_new(const struct ust_fold_names *n, bool lines, ust_pprof_map_fn map,
				void *ctx);
void ust_pprof_free(struct ust_pprof *p);
/* The sample types, in order, all before the first sample. */
void ust_pprof_type(struct ust_pprof *p, const char *type, const char *unit);

struct ust_pprof_sample {
	const struct ust_dec_frame *user;	/* innermost first */
	unsigned int nr_user;
	uint64_t user_key;		/* not 0: the same for every stack of these frames, */
					/* named as now (ust_fold_put_user()): located once */
	bool has_files;			/* user frames are file offsets with (dev, inode) */
	bool lost;			/* no user stack: "[user stack lost]", label stack=lost */
	const char *const *kernel;	/* kernel function names, innermost first */
	unsigned int nr_kernel;
	const int64_t *values;		/* one per sample type */
	const char *comm;		/* NULL: "[unknown]" */
	int tid;
	int cpu;			/* < 0: no cpu label */
	const char *event;		/* NULL: no event label */
};
void ust_pprof_add(struct ust_pprof *p, const struct ust_pprof_sample *s);

struct ust_pprof_times {
	uint64_t time_ns;		/* the profile's start (since the epoch), 0: unknown */
	uint64_t duration_ns;
	const char *period_type, *period_unit;	/* NULL: no period */
	uint64_t period;
};
/* Finish the profile (once) and write it gzipped to @dest.  0, or a negative errno with @err. */
int ust_pprof_write(struct ust_pprof *p, const char *dest, const struct ust_pprof_times *t,
		    char *err, size_t errsz);
uint64_t ust_pprof_nr_locations(const struct ust_pprof *p);
uint64_t ust_pprof_nr_functions(const struct ust_pprof *p);

#endif
