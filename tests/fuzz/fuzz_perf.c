// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the perf ring reader and record parser, with
 * PERF_RECORD_CALLCHAIN_DEFERRED.  Input: an 8-byte header, then the bytes
 * the "kernel" wrote into the ring:
 *   [0] bit 0: sample_id_all; bits 1-2: sample_type variant
 *   [1] log2 of the data area (clamped to 6..14)
 *   [2..3] where data_tail/data_head start (wraps the records around the end)
 * Every record the ring hands over goes through ust_perf_parse(); the payload
 * is also parsed as one record on its own (exact-size copy).
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ustitch/abi.h"
#include "ustitch/perf.h"
#include "ustitch/perf_ring.h"

#define BASE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static const uint64_t types[4] = {
	BASE_TYPE,
	BASE_TYPE | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID,
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN,
	UST_PERF_SAMPLE_SUPPORTED,
};

static void check(const struct ust_perf_event *ev, size_t size)
{
	volatile uint64_t sink = 0;

	/* Every frame pointer the parser returns must lie inside the record. */
	if (ev->type == PERF_RECORD_SAMPLE && ev->u.sample.has_chain) {
		const struct ust_perf_chain *c = &ev->u.sample.chain;

		if ((size_t)c->nr_kernel * 8 > size || (size_t)c->nr_user * 8 > size)
			abort();
		for (unsigned int i = 0; i < c->nr_kernel; i++)
			sink += ust_perf_ip(c->kernel, i);
		for (unsigned int i = 0; i < c->nr_user; i++)
			sink += ust_perf_ip(c->user, i);
	} else if (ev->type == UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED) {
		if ((size_t)ev->u.deferred.nr * 8 > size)
			abort();
		for (unsigned int i = 0; i < ev->u.deferred.nr; i++)
			sink += ust_perf_ip(ev->u.deferred.ips, i);
	} else if (ev->type == PERF_RECORD_COMM) {
		sink += strlen(ev->u.comm.comm);
	} else if (ev->type == PERF_RECORD_MMAP2) {
		sink += strlen(ev->u.mmap2.filename);
	}
	(void)sink;
}

struct ctx {
	struct ust_perf_layout lay;
};

static int on_rec(const void *rec, size_t size, void *p)
{
	struct ctx *c = p;
	struct ust_perf_event ev;
	char err[256];

	err[0] = '\0';
	int r = ust_perf_parse(&c->lay, rec, size, &ev, err, sizeof(err));

	if (r == 0)
		check(&ev, size);
	else if (r < 0 && !err[0])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_mmap_page *meta;
	struct ust_perf_ring ring;
	struct ctx c;
	char err[256];
	uint64_t rsize, start, len;
	uint8_t *area, *rec;
	unsigned int lg;

	if (size < 8 || size > 65536)
		return 0;
	if (ust_perf_layout_init(&c.lay, types[(data[0] >> 1) & 3], data[0] & 1, err, sizeof(err)))
		abort();
	lg = data[1];
	if (lg < 6)
		lg = 6;
	if (lg > 14)
		lg = 14;
	rsize = 1ULL << lg;
	start = (uint64_t)(data[2] | data[3] << 8);
	len = size - 8;
	if (len > rsize)
		len = rsize;

	/* One record on its own. */
	rec = malloc(size - 8 ? size - 8 : 1);
	if (!rec)
		abort();
	memcpy(rec, data + 8, size - 8);
	on_rec(rec, size - 8, &c);
	free(rec);

	/* The ring as the kernel would leave it after writing @len bytes. */
	meta = calloc(1, sizeof(*meta));
	area = calloc(1, rsize);
	if (!meta || !area)
		abort();
	for (uint64_t i = 0; i < len; i++)
		area[(start + i) & (rsize - 1)] = data[8 + i];
	meta->data_offset = 4096;
	meta->data_size = rsize;
	meta->data_tail = start;
	meta->data_head = start + len;
	if (ust_perf_ring_init(&ring, meta, area, rsize))
		abort();
	ust_perf_ring_snapshot(&ring);
	(void)ust_perf_ring_read(&ring, on_rec, &c);
	(void)ust_perf_ring_pending(&ring);
	(void)ust_perf_ring_read(&ring, on_rec, &c);
	ust_perf_ring_fini(&ring);
	free(area);
	free(meta);
	return 0;
}
