/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf_stitch: join perf samples to the user stacks recorded later,
 * when their task returned to user space (seed 002).
 *
 * Records come from several streams (one per CPU ring buffer) and are
 * merged by time, each stream keeping its own order for equal times.  A
 * sample whose callchain ends with PERF_CONTEXT_USER_DEFERRED carries a
 * cookie; the PERF_RECORD_CALLCHAIN_DEFERRED with the same task and cookie
 * is its user stack, whatever CPU's buffer it landed in, and serves every
 * sample of that kernel entry.  The cookie is what makes this safe after
 * lost records (patch 3): a stack recorded for a later entry has a later
 * cookie and is never given to an earlier sample.  A sample whose stack
 * never arrives keeps its kernel frames and is marked lost.
 *
 * The BPF backport (ust_bpfu) is stitched the same way: its cookies arrive
 * as requests, one per sample, matched to the sample they were made for
 * (same CPU, task, ip and period, between the previous sample of that CPU
 * and this one), and its stacks as deferred items carrying the bytes of a
 * user_unwind_stack record.
 */
#ifndef USTITCH_PERF_STITCH_H
#define USTITCH_PERF_STITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustitch/perf.h"

enum ust_perf_item_kind {
	UST_PERF_ITEM_OTHER,		/* COMM, EXIT, FORK, MMAP2, ...: ev is decoded */
	UST_PERF_ITEM_REQUEST,		/* a cookie for one sample, made by BPF */
	UST_PERF_ITEM_SAMPLE,
	UST_PERF_ITEM_DEFERRED,		/* a user stack for (tid, cookie) */
	UST_PERF_ITEM_LOST,		/* LOST, LOST_SAMPLES, or records the BPF side dropped */
};

/* What became of a sample's user stack. */
enum ust_perf_ustack {
	UST_PERF_US_NONE,		/* none asked for, or a kernel thread */
	UST_PERF_US_IMMEDIATE,		/* in the sample itself */
	UST_PERF_US_DEFERRED,		/* stitched: ->stack */
	UST_PERF_US_LOST,		/* never arrived, and records were lost after the sample */
	UST_PERF_US_UNFINISHED,		/* never arrived: the trace ended first */
	UST_PERF_US_NO_COOKIE,		/* its BPF cookie was lost or cannot be told apart */
};

struct ust_perf_item {
	enum ust_perf_item_kind kind;
	unsigned int stream;
	uint64_t seq;			/* order of arrival */
	uint64_t time;
	uint32_t cpu, pid, tid;
	struct ust_perf_event ev;	/* decoded perf record (not for BPF-made items) */
	/* SAMPLE */
	bool has_cookie;
	uint64_t cookie;
	enum ust_perf_ustack ustack;
	const struct ust_perf_item *stack;	/* the DEFERRED item, US_DEFERRED only */
	/* DEFERRED: a BPF-made stack's record bytes, NULL for perf's own */
	const void *blob;
	size_t blob_len;
	unsigned int served;		/* samples it was stitched to */
	/* REQUEST */
	uint64_t ip, period;
	bool dropped_before;		/* the BPF side dropped a request just before this one */
	const struct ust_perf_item *sample;	/* matched sample, or NULL */
	/* LOST */
	uint64_t lost;
	/* private */
	void *raw;
	long next_same_key;
	long stack_idx, sample_idx;
	bool tried;			/* SAMPLE: its request was looked for */
	bool decided;			/* SAMPLE: ustack is final */
};

struct ust_perf_stitch_stats {
	unsigned long records, bad_records, other_records;
	unsigned long samples, with_cookie, deferred_ok, immediate, lost, unfinished,
		      no_cookie, no_user;
	unsigned long deferred, orphan_deferred, dup_deferred;
	unsigned long requests, requests_matched, requests_ambiguous;
	unsigned long lost_marks;
	uint64_t lost_count;
};

struct ust_perf_stitch;

struct ust_perf_stitch *ust_perf_stitch_new(void);
void ust_perf_stitch_free(struct ust_perf_stitch *st);

/*
 * Samples without a cookie of their own will get one from a BPF request:
 * those of user tasks (tid != 0) that end up without one are marked
 * US_NO_COOKIE instead of US_NONE.
 */
void ust_perf_stitch_expect_requests(struct ust_perf_stitch *st, bool on);

/*
 * A record read from @stream, whose ring belongs to CPU @cpu (used when the
 * record carries no CPU).  The record is copied.  Returns 0; 1 for a
 * malformed one, which is counted and skipped, with the reason in @err;
 * -ENOMEM; -EINVAL after ust_perf_stitch_finish().
 */
int ust_perf_stitch_add_record(struct ust_perf_stitch *st, unsigned int stream, uint32_t cpu,
			       const struct ust_perf_layout *l, const void *rec, size_t size,
			       char *err, size_t errsz);
/* BPF-made items (the backport), each 0, -ENOMEM, or -EINVAL once finished:
 * a cookie for the sample at @time... */
int ust_perf_stitch_add_request(struct ust_perf_stitch *st, uint32_t cpu, uint64_t time,
				uint32_t pid, uint32_t tid, uint64_t ip, uint64_t period,
				uint64_t cookie, bool dropped_before);
/* ... a user stack, as the bytes of its user_unwind_stack record (copied) ... */
int ust_perf_stitch_add_stack(struct ust_perf_stitch *st, uint32_t cpu, uint64_t time,
			      uint32_t pid, uint32_t tid, uint64_t cookie,
			      const void *blob, size_t len);
/* ... records lost before @time. */
int ust_perf_stitch_add_lost(struct ust_perf_stitch *st, uint32_t cpu, uint64_t time,
			     uint64_t count);

/*
 * Merge, match and resolve the items older than @before, and hand @cb,
 * in time order, each of them whose fate is known; then forget those (the
 * pointers @cb got are valid during the call only).  Kept for later:
 * samples whose stack has not come yet, and requests and stacks less than
 * 10 ms older than @before (their samples may lie just after it).  Items
 * added later must be younger than @before, or they are stitched with
 * what is left only.  Between adds, any number of times: a long recording
 * then holds only its last moments.  0, -ENOMEM, or -EINVAL once finished.
 */
int ust_perf_stitch_flush(struct ust_perf_stitch *st, uint64_t before,
			  void (*cb)(const struct ust_perf_item *it, void *ctx), void *ctx);
/* Items held (0 once finished), and the latest time of any item added. */
size_t ust_perf_stitch_pending(const struct ust_perf_stitch *st);
uint64_t ust_perf_stitch_newest(const struct ust_perf_stitch *st);

/* Merge, match, resolve what is left.  Call once, after the last add.
 * @stats: of every item, flushed ones included.  0, -ENOMEM, or -EINVAL
 * when called again. */
int ust_perf_stitch_finish(struct ust_perf_stitch *st, struct ust_perf_stitch_stats *stats);

/* After finish: every item left (not flushed) in time order. */
size_t ust_perf_stitch_count(const struct ust_perf_stitch *st);
const struct ust_perf_item *ust_perf_stitch_at(const struct ust_perf_stitch *st, size_t i);

/* "deferred", "lost", ... */
const char *ust_perf_ustack_name(enum ust_perf_ustack u);

#endif
