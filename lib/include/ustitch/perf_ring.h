/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf_ring: read a perf event's mmap'ed ring buffer (one per CPU).
 *
 * The kernel writes records at data_head; the reader consumes up to it and
 * then publishes data_tail.  A record may wrap around the end of the data
 * area: it is then copied into a bounce buffer, so the callback always sees
 * one contiguous, 8-byte aligned record.  A header whose size is too small,
 * not a multiple of 8, or larger than what the kernel has written is
 * corruption: the rest of the data is skipped (record boundaries are lost)
 * and counted in ->bad.
 */
#ifndef USTITCH_PERF_RING_H
#define USTITCH_PERF_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_event_mmap_page;

struct ust_perf_ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;			/* of the data area, a power of two */
	uint8_t *bounce;
	size_t bounce_cap;
	void *map;			/* what ust_perf_ring_mmap() mapped */
	size_t map_len;
	uint64_t limit;			/* ust_perf_ring_snapshot()'s head... */
	bool limited;			/* ...for the next read */
	uint64_t records;		/* handed to the callback */
	uint64_t bad;			/* resynchronisations after corruption */
	uint64_t bad_bytes;		/* bytes skipped by them */
};

/* Map @data_pages (a power of two) pages after the control page of @fd.
 * 0, or a negative errno (-EINVAL: not a power of two; mmap's; -EPROTO: the
 * control page's data area does not fit). */
int ust_perf_ring_mmap(struct ust_perf_ring *r, int fd, unsigned int data_pages);
/*
 * A ring over memory laid out like the mapping (tests, replays): @meta is
 * the control page, @data the @size-byte data area.  Returns -EINVAL if
 * @size is not a power of two.
 */
int ust_perf_ring_init(struct ust_perf_ring *r, void *meta, void *data, uint64_t size);
void ust_perf_ring_fini(struct ust_perf_ring *r);

/* Return < 0 to stop: the record is then not consumed. */
typedef int (*ust_perf_rec_fn)(const void *rec, size_t size, void *ctx);

/* Hand every complete record to @fn in ring order and free their space.
 * Returns the number of records handed over, or -ENOMEM. */
long ust_perf_ring_read(struct ust_perf_ring *r, ust_perf_rec_fn fn, void *ctx);

/*
 * Make the next ust_perf_ring_read() stop at what is written now: records
 * written later wait for the read after (a reader that pairs them with
 * another buffer read in between needs them not to be newer than it).
 */
void ust_perf_ring_snapshot(struct ust_perf_ring *r);

/* Bytes written and not yet consumed. */
uint64_t ust_perf_ring_pending(const struct ust_perf_ring *r);

#endif
