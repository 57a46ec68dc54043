// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_ring.  The protocol of tools/lib/perf/mmap.c: load data_head
 * with acquire semantics (the kernel's smp_wmb() before it), read, then
 * store data_tail with release semantics so that the kernel does not
 * overwrite bytes still being read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ustitch/perf_ring.h"

static uint64_t load_head(const struct ust_perf_ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
}

static void store_tail(struct ust_perf_ring *r, uint64_t tail)
{
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

int ust_perf_ring_init(struct ust_perf_ring *r, void *meta, void *data, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	if (!size || (size & (size - 1)))
		return -EINVAL;
	r->meta = meta;
	r->data = data;
	r->size = size;
	return 0;
}

int ust_perf_ring_mmap(struct ust_perf_ring *r, int fd, unsigned int data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = page * ((size_t)data_pages + 1);
	struct perf_event_mmap_page *meta;
	uint64_t off, size;
	void *map;

	memset(r, 0, sizeof(*r));
	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	meta = map;
	/* data_offset/data_size exist since 4.1; before, data follows the page. */
	off = meta->data_offset ? meta->data_offset : page;
	size = meta->data_size ? meta->data_size : len - page;
	if (off + size > len || ust_perf_ring_init(r, meta, (uint8_t *)map + off, size)) {
		munmap(map, len);
		return -EPROTO;
	}
	r->map = map;
	r->map_len = len;
	return 0;
}

void ust_perf_ring_fini(struct ust_perf_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	free(r->bounce);
	memset(r, 0, sizeof(*r));
}

uint64_t ust_perf_ring_pending(const struct ust_perf_ring *r)
{
	return load_head(r) - r->meta->data_tail;
}

/* @len bytes at ring position @pos, which may wrap, into @dst. */
static void copy_out(const struct ust_perf_ring *r, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = len;

	if (off + len > r->size)
		first = (size_t)(r->size - off);
	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

void ust_perf_ring_snapshot(struct ust_perf_ring *r)
{
	r->limit = load_head(r);
	r->limited = true;
}

long ust_perf_ring_read(struct ust_perf_ring *r, ust_perf_rec_fn fn, void *ctx)
{
	uint64_t head = r->limited ? r->limit : load_head(r), tail = r->meta->data_tail;
	long n = 0;

	r->limited = false;
	if (head - tail > r->size) {
		/* More than the ring holds: the tail we were given is stale. */
		r->bad++;
		r->bad_bytes += head - tail;
		store_tail(r, head);
		return 0;
	}
	while (tail != head) {
		uint64_t avail = head - tail, off = tail & (r->size - 1);
		struct perf_event_header h;
		const void *rec;

		if (avail < sizeof(h))
			goto corrupt;
		copy_out(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > avail)
			goto corrupt;
		if (off + h.size <= r->size) {
			rec = r->data + off;
		} else {
			if (h.size > r->bounce_cap) {
				void *b = realloc(r->bounce, h.size);

				if (!b) {
					store_tail(r, tail);
					return -ENOMEM;
				}
				r->bounce = b;
				r->bounce_cap = h.size;
			}
			copy_out(r, tail, r->bounce, h.size);
			rec = r->bounce;
		}
		if (fn && fn(rec, h.size, ctx) < 0)
			break;
		tail += h.size;
		r->records++;
		n++;
	}
	store_tail(r, tail);
	return n;
corrupt:
	/* No way to find the next record boundary: skip what was written. */
	r->bad++;
	r->bad_bytes += head - tail;
	store_tail(r, head);
	return n;
}
