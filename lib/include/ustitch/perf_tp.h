/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf_tp: one tracepoint recorded through perf, one event per CPU
 * (pid -1: every task; the BPF filter chooses), each with its ring buffer
 * (ust_perf_ring), and the samples read back as (tid, time, cpu, kernel
 * callchain, raw record).
 */
#ifndef USTITCH_PERF_TP_H
#define USTITCH_PERF_TP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustitch/perf_ring.h"

struct ust_perf_tp_ring {
	struct ust_perf_ring r;	/* mapped when r.map */
	uint64_t lost_rec;	/* samples lost, by PERF_RECORD_LOST */
	uint64_t lost_marked;	/* of those, already reported by the caller */
};

struct ust_perf_tp {
	int nr_cpus;
	int *fds;		/* -1: CPU offline */
	struct ust_perf_tp_ring *rings;
	bool callchain;
	bool lost_fmt;		/* read() gives the lost count (PERF_FORMAT_LOST, 6.0+) */
	uint64_t samples, lost, bad;
};

struct ust_perf_tp_sample {
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
 * two).  0, or a negative errno with @err (-ENOENT: no such event,
 * -ENODEV: no CPU, perf_event_open's, the filter ioctl's, -ENOMEM).
 */
int ust_perf_tp_open(struct ust_perf_tp *p, const char *sys, const char *ev, const char *filter,
		     bool callchain, unsigned int pages, char *err, size_t errsz);
/* The first open fd (to attach the BPF filter to the tracepoint), or -ENOENT. */
int ust_perf_tp_fd(const struct ust_perf_tp *p);
/* 0, or the negative errno of the last ioctl that failed. */
int ust_perf_tp_enable(struct ust_perf_tp *p, bool on);
/* Fix each ring's readable end now: records written later wait for the next round. */
void ust_perf_tp_snapshot(struct ust_perf_tp *p);
/* Hand the samples of @cpu up to its snapshot to @fn; lost counts go to ->lost.
 * Returns the number of samples, or -ENOMEM. */
long ust_perf_tp_read(struct ust_perf_tp *p, int cpu,
		      void (*fn)(const struct ust_perf_tp_sample *s, void *ctx), void *ctx);
/*
 * Samples of @cpu lost since the last call (its ring was full), as the
 * kernel counts them where it can tell (PERF_FORMAT_LOST: also those a
 * PERF_RECORD_LOST has not reported yet, which it writes only once space
 * frees up), else by PERF_RECORD_LOST.  Adds them to ->lost.
 */
uint64_t ust_perf_tp_take_lost(struct ust_perf_tp *p, int cpu);
/* Add each CPU's fd to the epoll set @epfd: readable at the wakeup watermark.
 * 0, or epoll_ctl's negative errno. */
int ust_perf_tp_wait_fds(const struct ust_perf_tp *p, int epfd);
/* Is some ring filling up (an eighth of it or more at the last snapshot)? */
bool ust_perf_tp_busy(const struct ust_perf_tp *p);
void ust_perf_tp_close(struct ust_perf_tp *p);

/* Parse one PERF_RECORD_SAMPLE body (after the header) of our layout. 0 or -EINVAL. */
int ust_perf_tp_parse(const void *body, size_t len, bool callchain, struct ust_perf_tp_sample *s);

#endif
