/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_bpfu_pool: a few worker threads running jobs in the order they were
 * submitted, so that what takes long (an unwind table's build: cc1plus's
 * takes ~400 ms) never runs on the thread that reads the BPF ring
 * (bpfu_cfi.c).  Private to lib/record.
 */
#ifndef UST_BPFU_POOL_H
#define UST_BPFU_POOL_H

#include <stdbool.h>

struct ust_bpfu_pool;

/* A job: @run false when it is dropped unrun (the pool is freed): release @arg only. */
typedef void (*ust_bpfu_pool_fn)(void *arg, bool run);

/* 2, or the number of CPUs up to 4. */
unsigned int ust_bpfu_pool_default_threads(void);

/*
 * @threads workers (0: jobs run in ust_bpfu_pool_submit() itself).  A
 * pool whose threads could not all be started works with those that
 * were, or inline.  NULL only when out of memory.
 */
struct ust_bpfu_pool *ust_bpfu_pool_new(unsigned int threads);
/* Jobs still queued are dropped (@fn with run false); those running finish first. */
void ust_bpfu_pool_free(struct ust_bpfu_pool *p);
/* The worker threads running. */
unsigned int ust_bpfu_pool_threads(const struct ust_bpfu_pool *p);

/* 0, or -ENOMEM (@fn not called). */
int ust_bpfu_pool_submit(struct ust_bpfu_pool *p, ust_bpfu_pool_fn fn, void *arg);
/* Jobs queued or running. */
unsigned int ust_bpfu_pool_busy(struct ust_bpfu_pool *p);
/*
 * Until every job submitted so far (and those they submit) has run, at
 * most @timeout_ms (negative: no limit).  true when none is left.
 */
bool ust_bpfu_pool_wait(struct ust_bpfu_pool *p, int timeout_ms);

#endif
