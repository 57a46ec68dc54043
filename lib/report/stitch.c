// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_stitch: requests and stacks are appended while one pass reads the
 * file.  A request keeps 24 bytes (ust_stitch_rq) in an array sorted by
 * record offset once the pass is over; a stack record keeps its cookie,
 * place and task, and points at its frames, which are stored once per
 * distinct content.  Hash maps answer "which stack for this cookie" and
 * "which stack at this offset" in O(1), a binary search "which request at
 * this offset", so the printing pass never scans.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "ustitch/stitch.h"

void ust_stitch_init(struct ust_stitch *st)
{
	memset(st, 0, sizeof(*st));
	ust_hmap_init(&st->content_by_hash);
	ust_hmap_init(&st->stack_by_off);
	ust_hmap_init(&st->stack_by_cookie);
	ust_hmap_init(&st->bad_by_cookie);
	ust_hmap_init(&st->flags_by_cookie);
}

void ust_stitch_fini(struct ust_stitch *st)
{
	unsigned long i;

	for (i = 0; i < st->nr_stacks; i++)
		free(st->stacks[i].bad);
	for (i = 0; i < st->nr_contents; i++) {
		free(st->contents[i].frames);
		free(st->contents[i].rendered);
	}
	free(st->contents);
	free(st->stacks);
	free(st->reqs);
	free(st->flag_recs);
	free(st->lost_ts);
	ust_hmap_fini(&st->content_by_hash);
	ust_hmap_fini(&st->stack_by_off);
	ust_hmap_fini(&st->stack_by_cookie);
	ust_hmap_fini(&st->bad_by_cookie);
	ust_hmap_fini(&st->flags_by_cookie);
	ust_stitch_init(st);
}

int ust_stitch_add_request(struct ust_stitch *st, const struct ust_stitch_req *r)
{
	void *n = ust_grow(st->reqs, &st->cap_reqs, st->nr_reqs + 1, sizeof(*st->reqs), 256);

	if (!n)
		return -ENOMEM;
	st->reqs = n;
	st->reqs[st->nr_reqs++] = (struct ust_stitch_rq){
		.rec_off = r->rec_off, .cookie = r->cookie,
		.req_pid = r->req_pid < 0 ? -1 : r->req_pid, .buf = (int16_t)r->buf,
	};
	return 0;
}

/* (buf, cpu, rec_off) order: the order of a buffer-major, CPU-major pass. */
static bool before(const struct ust_stitch_stack *a, const struct ust_stitch_stack *b)
{
	if (a->buf != b->buf)
		return a->buf < b->buf;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu;
	return a->rec_off < b->rec_off;
}

static uint64_t hash_frames(const struct ust_dec_stack *s, bool has_files)
{
	uint64_t h = ust_hmap_mix(s->nr * 2 + has_files);
	struct ust_dec_frame f;
	unsigned int i;

	for (i = 0; i < s->nr; i++) {
		ust_dec_frame_at(s, i, &f);
		h = ust_hmap_mix(h ^ f.off);
		h = ust_hmap_mix(h ^ f.ino ^ ((uint64_t)f.kdev << 40));
	}
	return h;
}

static bool same_frames(const struct ust_stitch_frames *c, const struct ust_dec_stack *s,
			bool has_files)
{
	struct ust_dec_frame f;
	unsigned int i;

	if (c->nr != s->nr || c->has_files != has_files)
		return false;
	for (i = 0; i < s->nr; i++) {
		ust_dec_frame_at(s, i, &f);
		if (f.off != c->frames[i].off || f.ino != c->frames[i].ino ||
		    f.kdev != c->frames[i].kdev)
			return false;
	}
	return true;
}

/* The contents index of @s's frames, added if new; UINT32_MAX when out of memory. */
static uint32_t intern_frames(struct ust_stitch *st, const struct ust_dec_stack *s, bool has_files)
{
	uint64_t h = hash_frames(s, has_files), i;
	bool hashed = ust_hmap_get(&st->content_by_hash, h, &i);
	struct ust_stitch_frames *c;
	unsigned int k;
	void *n;

	if (hashed && same_frames(&st->contents[i], s, has_files))
		return (uint32_t)i;
	n = ust_grow(st->contents, &st->cap_contents, st->nr_contents + 1, sizeof(*c), 256);
	if (!n)
		return UINT32_MAX;
	st->contents = n;
	c = &st->contents[st->nr_contents];
	memset(c, 0, sizeof(*c));
	c->has_files = has_files;
	if (s->nr) {
		c->frames = calloc(s->nr, sizeof(*c->frames));
		if (!c->frames)
			return UINT32_MAX;
		for (k = 0; k < s->nr; k++)
			ust_dec_frame_at(s, k, &c->frames[k]);
		c->nr = s->nr;
	}
	/* Another content with the same hash keeps it: this one is only not shared. */
	if (!hashed && ust_hmap_put(&st->content_by_hash, h, st->nr_contents)) {
		free(c->frames);
		return UINT32_MAX;
	}
	st->nr_frames += s->nr;
	return (uint32_t)st->nr_contents++;
}

int ust_stitch_add_stack(struct ust_stitch *st, int buf, int cpu, uint64_t ts,
			 uint64_t rec_off, int pid, const struct ust_dec_stack *s,
			 bool has_files, const char *bad)
{
	struct ust_stitch_stack *e;
	unsigned long idx = st->nr_stacks;
	uint64_t first;
	void *n = ust_grow(st->stacks, &st->cap_stacks, idx + 1, sizeof(*e), 256);

	if (!n)
		return -ENOMEM;
	st->stacks = n;
	e = &st->stacks[idx];
	memset(e, 0, sizeof(*e));
	e->cookie = s->cookie;
	e->rec_off = rec_off;
	e->ts = ts;
	e->cpu = (int16_t)cpu;
	e->buf = (int16_t)buf;
	e->pid = pid;
	e->has_files = has_files;
	e->next_same_cookie = -1;
	e->content = UINT32_MAX;
	if (bad) {
		e->bad = strdup(bad);
		if (!e->bad)
			return -ENOMEM;
	} else {
		e->content = intern_frames(st, s, has_files);
		if (e->content == UINT32_MAX)
			return -ENOMEM;
		e->nr = s->nr;
	}
	if (ust_hmap_put(&st->stack_by_off, rec_off, idx))
		return -ENOMEM;
	/* A malformed record's cookie cannot be trusted: never stitch by it,
	 * only use it to explain why a request got no stack. */
	if (bad && s->cookie) {
		if (!ust_hmap_get(&st->bad_by_cookie, s->cookie, &first) ||
		    before(e, &st->stacks[first])) {
			if (ust_hmap_put(&st->bad_by_cookie, s->cookie, idx))
				return -ENOMEM;
		}
	} else if (!bad) {
		if (ust_hmap_get(&st->stack_by_cookie, s->cookie, &first)) {
			/* Into the chain at its place: the first by (buf, cpu,
			 * offset) stays the answer, whatever the order of adds. */
			long j = (long)first, prev = -1;

			while (j >= 0 && before(&st->stacks[j], e)) {
				prev = j;
				j = st->stacks[j].next_same_cookie;
			}
			e->next_same_cookie = (int32_t)j;
			if (prev >= 0)
				st->stacks[prev].next_same_cookie = (int32_t)idx;
			else if (ust_hmap_put(&st->stack_by_cookie, s->cookie, idx))
				return -ENOMEM;
		} else if (ust_hmap_put(&st->stack_by_cookie, s->cookie, idx)) {
			return -ENOMEM;
		}
	}
	st->nr_stacks++;
	return 0;
}

void ust_stitch_add_flags(struct ust_stitch *st, int buf, int cpu, uint64_t rec_off,
			  uint64_t cookie, uint32_t flags)
{
	struct ust_stitch_flag f = { .rec_off = rec_off, .flags = flags,
				     .buf = (int16_t)buf, .cpu = (int16_t)cpu };
	uint64_t i;
	void *n;

	if (ust_hmap_get(&st->flags_by_cookie, cookie, &i)) {
		struct ust_stitch_flag *o = &st->flag_recs[i];

		/* The last by (buf, cpu, offset) wins. */
		if (o->buf < f.buf || (o->buf == f.buf && (o->cpu < f.cpu ||
		    (o->cpu == f.cpu && o->rec_off < f.rec_off))))
			*o = f;
		return;
	}
	n = ust_grow(st->flag_recs, &st->cap_flags, st->nr_flags + 1, sizeof(f), 64);
	if (!n)
		return;
	st->flag_recs = n;
	if (ust_hmap_put(&st->flags_by_cookie, cookie, st->nr_flags))
		return;
	st->flag_recs[st->nr_flags++] = f;
}

void ust_stitch_add_lost(struct ust_stitch *st, uint64_t ts, long long missed)
{
	void *n = ust_grow(st->lost_ts, &st->cap_lost, st->nr_lost + 1, sizeof(uint64_t), 256);

	if (!n)
		return;
	st->lost_ts = n;
	st->lost_ts[st->nr_lost++] = ts;
	if (missed > 0)
		st->lost_events += (unsigned long)missed;
}

struct ust_stitch_stack *ust_stitch_lookup(const struct ust_stitch *st, uint64_t cookie, int buf)
{
	uint64_t first;
	long j;

	if (!ust_hmap_get(&st->stack_by_cookie, cookie, &first))
		return NULL;
	for (j = (long)first; j >= 0; j = st->stacks[j].next_same_cookie)
		if (st->stacks[j].buf == buf)
			return &st->stacks[j];
	return &st->stacks[first];
}

static int cmp_rq(const void *a, const void *b)
{
	const struct ust_stitch_rq *x = a, *y = b;

	return x->rec_off < y->rec_off ? -1 : x->rec_off > y->rec_off;
}

void ust_stitch_finish(struct ust_stitch *st, struct ust_stitch_stats *stats)
{
	unsigned long i;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (st->nr_reqs > 1)
		qsort(st->reqs, st->nr_reqs, sizeof(*st->reqs), cmp_rq);
	for (i = 0; i < st->nr_stacks; i++) {
		struct ust_stitch_stack *s = &st->stacks[i];
		uint64_t f;
		long j;

		if (s->bad)
			continue;
		s->frames = s->content != UINT32_MAX ? st->contents[s->content].frames : NULL;
		if (ust_hmap_get(&st->flags_by_cookie, s->cookie, &f))
			s->flags = st->flag_recs[f].flags;
		/* The chain's head counts the others. */
		if (ust_hmap_get(&st->stack_by_cookie, s->cookie, &f) && f == i)
			for (j = s->next_same_cookie; j >= 0; j = st->stacks[j].next_same_cookie)
				s->nr_dup++;
	}
	for (i = 0; i < st->nr_reqs; i++) {
		struct ust_stitch_stack *s = ust_stitch_lookup(st, st->reqs[i].cookie, st->reqs[i].buf);

		/* A stack is only ever some other task's by corruption or a
		 * bug: never hand it to this request. */
		if (s && st->reqs[i].req_pid >= 0 && s->pid != st->reqs[i].req_pid)
			s->nr_foreign++;
		else if (s)
			s->nr_req++;
		else if (stats)
			stats->unresolved++;
	}
	if (stats) {
		stats->requests = st->nr_reqs;
		stats->stacks = st->nr_stacks;
		for (i = 0; i < st->nr_stacks; i++) {
			if (st->stacks[i].bad)
				stats->bad_stacks++;
			else if (!st->stacks[i].nr_req)
				stats->orphan_stacks++;
		}
		stats->lost_events = st->lost_events;
	}
	st->finished = true;
}

const struct ust_stitch_rq *ust_stitch_req_at(const struct ust_stitch *st, uint64_t rec_off)
{
	unsigned long lo = 0, hi = st->nr_reqs;

	while (lo < hi) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (st->reqs[mid].rec_off < rec_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nr_reqs && st->reqs[lo].rec_off == rec_off ? &st->reqs[lo] : NULL;
}

struct ust_stitch_stack *ust_stitch_stack_at(const struct ust_stitch *st, uint64_t rec_off)
{
	uint64_t i;

	return ust_hmap_get(&st->stack_by_off, rec_off, &i) ? &st->stacks[i] : NULL;
}

const struct ust_stitch_stack *ust_stitch_bad_for(const struct ust_stitch *st, uint64_t cookie)
{
	uint64_t i;

	return ust_hmap_get(&st->bad_by_cookie, cookie, &i) ? &st->stacks[i] : NULL;
}

bool ust_stitch_lost_after(const struct ust_stitch *st, uint64_t ts)
{
	unsigned long i;

	for (i = 0; i < st->nr_lost; i++)
		if (st->lost_ts[i] >= ts)
			return true;
	return false;
}
