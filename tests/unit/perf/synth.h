/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Synthetic perf records and ring buffers for the unit tests, written from
 * the ABI (<linux/perf_event.h>, seed 002 constants in ustitch/abi.h) by
 * code, field by field in the kernel's order: never as hand-made blobs.
 */
#ifndef UST_TEST_PERF_SYNTH_H
#define UST_TEST_PERF_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "ustitch/abi.h"

/* What the sessions under test use: what ustitch record asks for. */
#define SYNTH_SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
				 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

struct synth_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

/* A record under construction (header size set by synth_end()). */
struct synth_rec {
	uint8_t b[8192];
	size_t len;
};

void synth_begin(struct synth_rec *r, uint32_t type, uint16_t misc);
void synth_u64(struct synth_rec *r, uint64_t v);
void synth_u32x2(struct synth_rec *r, uint32_t a, uint32_t b);
/* A string padded with NULs to a multiple of 8 bytes, as the kernel pads. */
void synth_str(struct synth_rec *r, const char *s);
/* The sample_id trailer for @sample_type (sample_id_all). */
void synth_trailer(struct synth_rec *r, uint64_t sample_type, const struct synth_id *id);
/* Sets header.size; returns the length. */
size_t synth_end(struct synth_rec *r);

/* A callchain: kernel frames, then either immediate user frames or the
 * deferred marker and its cookie (deferred = true). */
struct synth_chain {
	const uint64_t *kernel;
	unsigned int nr_kernel;
	const uint64_t *user;
	unsigned int nr_user;
	bool deferred;
	uint64_t cookie;
};

size_t synth_sample(struct synth_rec *r, uint64_t sample_type, uint16_t misc,
		    const struct synth_id *id, uint64_t ip, uint64_t period,
		    const struct synth_chain *ch);
/* As the seed's kernels write it (PERF_CONTEXT_USER in front), or with
 * @user_mark UST_ABI_PERF_DEFERRED_USER_MARK_MAINLINE as 6.19+ does. */
size_t synth_deferred(struct synth_rec *r, uint64_t sample_type, const struct synth_id *id,
		      uint64_t cookie, const uint64_t *ips, unsigned int nr);
size_t synth_deferred_abi(struct synth_rec *r, uint64_t sample_type, const struct synth_id *id,
			  uint64_t cookie, const uint64_t *ips, unsigned int nr, int user_mark);
size_t synth_lost(struct synth_rec *r, uint64_t sample_type, const struct synth_id *id,
		  uint64_t lost);
size_t synth_comm(struct synth_rec *r, uint64_t sample_type, const struct synth_id *id,
		  const char *comm, bool exec);
size_t synth_task(struct synth_rec *r, uint32_t type, uint64_t sample_type,
		  const struct synth_id *id, uint32_t ppid, uint32_t ptid);
size_t synth_mmap2(struct synth_rec *r, uint64_t sample_type, const struct synth_id *id,
		   uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min,
		   uint64_t ino, const char *filename);

/* A ring laid out as the kernel's mapping: control page and data area. */
struct synth_ring {
	struct perf_event_mmap_page meta;
	uint8_t *data;
	uint64_t size;
};

void synth_ring_init(struct synth_ring *s, uint64_t size, uint64_t start);
void synth_ring_free(struct synth_ring *s);
/* Write @len bytes at data_head, wrapping, and publish them. */
void synth_ring_put(struct synth_ring *s, const void *rec, size_t len);

#endif
