// SPDX-License-Identifier: LGPL-2.1
/* Synthetic perf records: the kernel's field order (perf_output_sample()). */
#include <stdlib.h>
#include <string.h>

#include "synth.h"

void synth_begin(struct synth_rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &h, sizeof(h));
	r->len = sizeof(h);
}

void synth_u64(struct synth_rec *r, uint64_t v)
{
	memcpy(r->b + r->len, &v, 8);
	r->len += 8;
}

void synth_u32x2(struct synth_rec *r, uint32_t a, uint32_t b)
{
	memcpy(r->b + r->len, &a, 4);
	memcpy(r->b + r->len + 4, &b, 4);
	r->len += 8;
}

void synth_str(struct synth_rec *r, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 7) & ~(size_t)7;

	memset(r->b + r->len, 0, padded);
	memcpy(r->b + r->len, s, n);
	r->len += padded;
}

void synth_trailer(struct synth_rec *r, uint64_t st, const struct synth_id *id)
{
	if (st & PERF_SAMPLE_TID)
		synth_u32x2(r, id->pid, id->tid);
	if (st & PERF_SAMPLE_TIME)
		synth_u64(r, id->time);
	if (st & PERF_SAMPLE_ID)
		synth_u64(r, 0);
	if (st & PERF_SAMPLE_STREAM_ID)
		synth_u64(r, 0);
	if (st & PERF_SAMPLE_CPU)
		synth_u32x2(r, id->cpu, 0);
	if (st & PERF_SAMPLE_IDENTIFIER)
		synth_u64(r, 0);
}

size_t synth_end(struct synth_rec *r)
{
	uint16_t size = (uint16_t)r->len;

	memcpy(r->b + offsetof(struct perf_event_header, size), &size, 2);
	return r->len;
}

size_t synth_sample(struct synth_rec *r, uint64_t st, uint16_t misc, const struct synth_id *id,
		    uint64_t ip, uint64_t period, const struct synth_chain *ch)
{
	unsigned int i;

	synth_begin(r, PERF_RECORD_SAMPLE, misc);
	if (st & PERF_SAMPLE_IDENTIFIER)
		synth_u64(r, 0);
	if (st & PERF_SAMPLE_IP)
		synth_u64(r, ip);
	if (st & PERF_SAMPLE_TID)
		synth_u32x2(r, id->pid, id->tid);
	if (st & PERF_SAMPLE_TIME)
		synth_u64(r, id->time);
	if (st & PERF_SAMPLE_ADDR)
		synth_u64(r, 0);
	if (st & PERF_SAMPLE_ID)
		synth_u64(r, 0);
	if (st & PERF_SAMPLE_STREAM_ID)
		synth_u64(r, 0);
	if (st & PERF_SAMPLE_CPU)
		synth_u32x2(r, id->cpu, 0);
	if (st & PERF_SAMPLE_PERIOD)
		synth_u64(r, period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = 0;

		if (ch && ch->nr_kernel)
			nr += 1 + ch->nr_kernel;
		if (ch && ch->deferred)
			nr += UST_ABI_PERF_DEFERRED_ITEMS;
		else if (ch && ch->nr_user)
			nr += 1 + ch->nr_user;
		synth_u64(r, nr);
		if (ch && ch->nr_kernel) {
			synth_u64(r, PERF_CONTEXT_KERNEL);
			for (i = 0; i < ch->nr_kernel; i++)
				synth_u64(r, ch->kernel[i]);
		}
		if (ch && ch->deferred) {
			synth_u64(r, UST_ABI_PERF_CONTEXT_USER_DEFERRED);
			synth_u64(r, ch->cookie);
		} else if (ch && ch->nr_user) {
			synth_u64(r, PERF_CONTEXT_USER);
			for (i = 0; i < ch->nr_user; i++)
				synth_u64(r, ch->user[i]);
		}
	}
	return synth_end(r);
}

size_t synth_deferred_abi(struct synth_rec *r, uint64_t st, const struct synth_id *id,
			  uint64_t cookie, const uint64_t *ips, unsigned int nr, int user_mark)
{
	unsigned int i;

	synth_begin(r, UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	synth_u64(r, cookie);
	synth_u64(r, (uint64_t)nr + (user_mark ? 1 : 0));	/* the mark counts */
	if (user_mark)
		synth_u64(r, PERF_CONTEXT_USER);
	for (i = 0; i < nr; i++)
		synth_u64(r, ips[i]);
	synth_trailer(r, st, id);
	return synth_end(r);
}

size_t synth_deferred(struct synth_rec *r, uint64_t st, const struct synth_id *id,
		      uint64_t cookie, const uint64_t *ips, unsigned int nr)
{
	return synth_deferred_abi(r, st, id, cookie, ips, nr, UST_ABI_PERF_DEFERRED_USER_MARK_SEED);
}

size_t synth_lost(struct synth_rec *r, uint64_t st, const struct synth_id *id, uint64_t lost)
{
	synth_begin(r, PERF_RECORD_LOST, 0);
	synth_u64(r, 0);	/* id */
	synth_u64(r, lost);
	synth_trailer(r, st, id);
	return synth_end(r);
}

size_t synth_comm(struct synth_rec *r, uint64_t st, const struct synth_id *id,
		  const char *comm, bool exec)
{
	synth_begin(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	synth_u32x2(r, id->pid, id->tid);
	synth_str(r, comm);
	synth_trailer(r, st, id);
	return synth_end(r);
}

size_t synth_task(struct synth_rec *r, uint32_t type, uint64_t st, const struct synth_id *id,
		  uint32_t ppid, uint32_t ptid)
{
	synth_begin(r, type, 0);
	synth_u32x2(r, id->pid, ppid);
	synth_u32x2(r, id->tid, ptid);
	synth_u64(r, id->time);
	synth_trailer(r, st, id);
	return synth_end(r);
}

size_t synth_mmap2(struct synth_rec *r, uint64_t st, const struct synth_id *id,
		   uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min,
		   uint64_t ino, const char *filename)
{
	synth_begin(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	synth_u32x2(r, id->pid, id->tid);
	synth_u64(r, addr);
	synth_u64(r, len);
	synth_u64(r, pgoff);
	synth_u32x2(r, maj, min);
	synth_u64(r, ino);
	synth_u64(r, 0);	/* ino_generation */
	synth_u32x2(r, 5 /* PROT_READ | PROT_EXEC */, 2 /* MAP_PRIVATE */);
	synth_str(r, filename);
	synth_trailer(r, st, id);
	return synth_end(r);
}

void synth_ring_init(struct synth_ring *s, uint64_t size, uint64_t start)
{
	memset(&s->meta, 0, sizeof(s->meta));
	s->data = calloc(1, size);
	s->size = size;
	s->meta.data_head = start;
	s->meta.data_tail = start;
	s->meta.data_size = size;
}

void synth_ring_free(struct synth_ring *s)
{
	free(s->data);
	s->data = NULL;
}

void synth_ring_put(struct synth_ring *s, const void *rec, size_t len)
{
	uint64_t head = s->meta.data_head;
	size_t i;

	for (i = 0; i < len; i++)
		s->data[(head + i) & (s->size - 1)] = ((const uint8_t *)rec)[i];
	__atomic_store_n(&s->meta.data_head, head + len, __ATOMIC_RELEASE);
}
