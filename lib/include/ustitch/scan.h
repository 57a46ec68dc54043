/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_scan: the first pass over a trace.dat.
 *
 * trace-cmd report prints a requesting event before the kernel has even
 * written its stack (that happens when the task returns to user space), so
 * the stitched stack must be known ahead of the printing pass.  One pass
 * with libtracecmd over the top buffer and every instance buffer collects
 * cookie requests, stacks, mapping records and lost-event marks.
 */
#ifndef USTITCH_SCAN_H
#define USTITCH_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ustitch/decode.h"
#include "ustitch/hmap.h"
#include "ustitch/stitch.h"

struct tep_handle;

struct ust_scan_mapping {
	uint32_t kdev;
	uint64_t ino;
	uint8_t build_id[20];
	size_t build_id_len;
	char *path;
	int buf, cpu;		/* where its record was */
	uint64_t rec_off;
};

/*
 * A sample (ustitch/sample record) with what its CPU's next records said,
 * for folded stacks: collected when ust_scan_file() is given UST_SCAN_SAMPLES.
 */
struct ust_scan_sample {
	uint64_t cookie;	/* its user stack, with has_cookie */
	uint64_t cookie_off;	/* its cookie record: the request (ust_stitch_req_at) */
	int pid;
	int buf, cpu;		/* where its record was */
	uint64_t rec_off;
	unsigned int ustack;	/* its user_stack field: UST_PERF_ENC_USTACK_* */
	bool has_cookie;
	uint32_t comm;		/* ust_scan.names index of the task's comm, UINT32_MAX: none */
	uint32_t kfirst, nr_k;	/* its kernel frames: ust_scan.kframes[kfirst..] (innermost first) */
	uint64_t ts;		/* the record's time */
	uint64_t period;	/* its period field (cpu-clock: nanoseconds), 0: none */
	uint32_t event;		/* ust_scan.names index of its event field, UINT32_MAX: none */
	bool is_event;		/* an event with a deferred stack, not a sample: event its name */
	bool has_weight;	/* is_event, and it has the field ust_scan.weight names */
	uint64_t weight;	/* that field's value */
};

struct ust_scan {
	struct ust_stitch st;
	struct ust_stitch_stats stats;
	struct ust_scan_mapping *maps;
	unsigned long nr_maps;
	size_t cap_maps;
	char **buf_names;		/* [0] = "" (top), then instances */
	int nr_bufs;
	bool cross_buffer;		/* a "ustitch" buffer: match requests across buffers */
	unsigned long records;
	double seconds;			/* wall time of the pass */
	dev_t dev;			/* identity of the scanned file */
	ino_t ino;
	char *path;
	int page_size;			/* of its ring-buffer pages (its header's), 0: unknown */
	/* UST_SCAN_SAMPLES: the samples, their kernel frames and comms (interned). */
	bool has_samples;
	unsigned long nr_events;	/* of the samples, events with deferred stacks (is_event) */
	char *weight;			/* the events' field read as their weight (ust_scan_opts), or NULL */
	struct ust_scan_sample *samples;
	unsigned long nr_samples;
	size_t cap_samples;
	uint32_t *kframes;		/* names index per kernel frame, UINT32_MAX: no symbol */
	size_t nr_kframes, cap_kframes;
	char **names;
	size_t nr_names, cap_names;
	struct ust_hmap name_idx;	/* hash -> names index */
};

/* ust_scan_file() flags */
#define UST_SCAN_SAMPLES	(1U << 0)	/* collect the samples (ust_fold) */
#define UST_SCAN_PROGRESS	(1U << 1)	/* a progress line on a terminal (ust_progress) */

/* Scan @path.  Returns 0, or a negative errno with @err ("cannot scan ...: ..."). */
int ust_scan_file(struct ust_scan *sc, const char *path, unsigned int flags, char *err,
		  size_t errsz);

struct ust_scan_opts {
	unsigned int flags;	/* UST_SCAN_* */
	/*
	 * With UST_SCAN_SAMPLES: the field of each event with a deferred
	 * stack to keep as its weight (-O ustitch:weight=FIELD: count of
	 * sys_enter_write, the bytes written), or NULL.
	 */
	const char *weight;
};

/* ust_scan_file() with @o. */
int ust_scan_file_opts(struct ust_scan *sc, const char *path, const struct ust_scan_opts *o,
		       char *err, size_t errsz);
void ust_scan_fini(struct ust_scan *sc);

/* Is @path a trace.dat (by its magic)?  Cheap: reads 10 bytes. */
int ust_scan_is_tracedat(const char *path);

/* The page size in @path's trace.dat header (a power of two), or a negative errno. */
int ust_scan_page_size(const char *path);

#endif
