/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_lh_perf: one tracepoint recorded through perf, one event per CPU
 * (pid -1: every task; the BPF filter chooses), each with its ring buffer
 * (ust_perf_ring), and the samples read back as (tid, time, cpu, kernel
 * callchain, raw record).
 */
#ifndef USTITCH_LH_PERFREAD_H
#define USTITCH_LH_PERFREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustitch/perf_ring.h"

struct ust_lh_ring {
	struct ust_perf_ring r;	/* mapped when r.map */
	uint64_t lost_rec;	/* samples lost, by PERF_RECORD_LOST */
	uint64_t lost_marked;	/* of those, already reported by the caller */
};

struct ust_lh_perf {
	int nr_cpus;
	int *fds;		/* -1: CPU offline */
	struct ust_lh_ring *rings;
	bool callchain;
	bool lost_fmt;		/* read() gives the lost count (PERF_FORMAT_LOST, 6.0+) */
	uint64_t samples, lost, bad;
};

struct ust_lh_sample {
	uint32_t pid, tid;
	uint64_t time;		/* CLOCK_MONOTONIC ns (use_clockid) */
	uint32_t cpu;
	uint64_t nr_ips;	/* kernel callchain, with perf's context markers (>= -4095) */
	const uint64_t *ips;
	const void *raw;	/* the ftrace record (common_type first) */
	uint32_t raw_size;
};

/*
 * Open @sys:@ev on every CPU, with the ftrace filter @filter (may be NULL)
 * set by PERF_EVENT_IOC_SET_FILTER, disabled.  @pages per CPU (power of
 * two).  0, or -1 with @err.
 */
int ust_lh_perf_open(struct ust_lh_perf *p, const char *sys, const char *ev, const char *filter,
		     bool callchain, unsigned int pages, char *err, size_t errlen);
/* The first open fd (to attach the BPF filter to the tracepoint), or -1. */
int ust_lh_perf_fd(const struct ust_lh_perf *p);
int ust_lh_perf_enable(struct ust_lh_perf *p, bool on);
/* Fix each ring's readable end now: records written later wait for the next round. */
void ust_lh_perf_snapshot(struct ust_lh_perf *p);
/* Hand the samples of @cpu up to its snapshot to @fn; lost counts go to ->lost. */
long ust_lh_perf_read(struct ust_lh_perf *p, int cpu,
		      void (*fn)(const struct ust_lh_sample *s, void *ctx), void *ctx);
/*
 * Samples of @cpu lost since the last call (its ring was full), as the
 * kernel counts them where it can tell (PERF_FORMAT_LOST: also those a
 * PERF_RECORD_LOST has not reported yet, which it writes only once space
 * frees up), else by PERF_RECORD_LOST.  Adds them to ->lost.
 */
uint64_t ust_lh_perf_take_lost(struct ust_lh_perf *p, int cpu);
/* Add each CPU's fd to the epoll set @epfd: readable at the wakeup watermark. */
int ust_lh_perf_wait_fds(const struct ust_lh_perf *p, int epfd);
/* Is some ring filling up (an eighth of it or more at the last snapshot)? */
bool ust_lh_perf_busy(const struct ust_lh_perf *p);
void ust_lh_perf_close(struct ust_lh_perf *p);

/* Parse one PERF_RECORD_SAMPLE body (after the header) of our layout. 0 or -1. */
int ust_lh_perf_parse(const void *body, size_t len, bool callchain, struct ust_lh_sample *s);

#endif
