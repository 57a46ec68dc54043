// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_stitch: requests and stacks are appended while one pass reads the
 * file; the hash maps make every later question (at this record offset?
 * for this cookie?) O(1), so the printing pass never searches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "ustitch/stitch.h"

void ust_stitch_init(struct ust_stitch *st)
{
	memset(st, 0, sizeof(*st));
	ust_hmap_init(&st->req_by_off);
	ust_hmap_init(&st->stack_by_off);
	ust_hmap_init(&st->stack_by_cookie);
	ust_hmap_init(&st->bad_by_cookie);
	ust_hmap_init(&st->flags_by_cookie);
}

void ust_stitch_fini(struct ust_stitch *st)
{
	unsigned long i;

	for (i = 0; i < st->nr_stacks; i++) {
		free(st->stacks[i].frames);
		free(st->stacks[i].bad);
		free(st->stacks[i].rendered);
	}
	free(st->stacks);
	free(st->reqs);
	free(st->lost_ts);
	ust_hmap_fini(&st->req_by_off);
	ust_hmap_fini(&st->stack_by_off);
	ust_hmap_fini(&st->stack_by_cookie);
	ust_hmap_fini(&st->bad_by_cookie);
	ust_hmap_fini(&st->flags_by_cookie);
	ust_stitch_init(st);
}

int ust_stitch_add_request(struct ust_stitch *st, const struct ust_stitch_req *r)
{
	void *n = ust_grow(st->reqs, &st->cap_reqs, st->nr_reqs + 1, sizeof(*r), 256);

	if (!n)
		return -ENOMEM;
	st->reqs = n;
	st->reqs[st->nr_reqs] = *r;
	if (ust_hmap_put(&st->req_by_off, r->rec_off, st->nr_reqs))
		return -ENOMEM;
	st->nr_reqs++;
	return 0;
}

int ust_stitch_add_stack(struct ust_stitch *st, int buf, int cpu, uint64_t ts,
			 uint64_t rec_off, int pid, const struct ust_dec_stack *s,
			 bool has_files, const char *bad)
{
	struct ust_stitch_stack *e;
	unsigned long idx = st->nr_stacks;
	uint64_t first;
	unsigned int i;
	void *n = ust_grow(st->stacks, &st->cap_stacks, idx + 1, sizeof(*e), 256);

	if (!n)
		return -ENOMEM;
	st->stacks = n;
	e = &st->stacks[idx];
	memset(e, 0, sizeof(*e));
	e->cookie = s->cookie;
	e->rec_off = rec_off;
	e->ts = ts;
	e->cpu = cpu;
	e->buf = buf;
	e->pid = pid;
	e->has_files = has_files;
	e->next_same_cookie = -1;
	if (bad) {
		e->bad = strdup(bad);
		if (!e->bad)
			return -ENOMEM;
	} else if (s->nr) {
		e->frames = malloc(s->nr * sizeof(*e->frames));
		if (!e->frames)
			return -ENOMEM;
		for (i = 0; i < s->nr; i++)
			ust_dec_frame_at(s, i, &e->frames[i]);
		e->nr = s->nr;
	}
	if (ust_hmap_put(&st->stack_by_off, rec_off, idx))
		return -ENOMEM;
	/* A malformed record's cookie cannot be trusted: never stitch by it,
	 * only use it to explain why a request got no stack. */
	if (bad && s->cookie && !ust_hmap_get(&st->bad_by_cookie, s->cookie, NULL)) {
		if (ust_hmap_put(&st->bad_by_cookie, s->cookie, idx))
			return -ENOMEM;
	} else if (!bad) {
		if (ust_hmap_get(&st->stack_by_cookie, s->cookie, &first)) {
			/* Append to the chain: the first arrival stays the answer. */
			unsigned long j = (unsigned long)first;

			st->stacks[j].nr_dup++;
			while (st->stacks[j].next_same_cookie >= 0)
				j = (unsigned long)st->stacks[j].next_same_cookie;
			st->stacks[j].next_same_cookie = (int)idx;
		} else if (ust_hmap_put(&st->stack_by_cookie, s->cookie, idx)) {
			return -ENOMEM;
		}
	}
	st->nr_stacks++;
	return 0;
}

void ust_stitch_add_flags(struct ust_stitch *st, uint64_t cookie, uint32_t flags)
{
	ust_hmap_put(&st->flags_by_cookie, cookie, flags);
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

void ust_stitch_finish(struct ust_stitch *st, struct ust_stitch_stats *stats)
{
	unsigned long i;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	for (i = 0; i < st->nr_stacks; i++) {
		uint64_t f;

		if (!st->stacks[i].bad && ust_hmap_get(&st->flags_by_cookie, st->stacks[i].cookie, &f))
			st->stacks[i].flags = (uint32_t)f;
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

const struct ust_stitch_req *ust_stitch_req_at(const struct ust_stitch *st, uint64_t rec_off)
{
	uint64_t i;

	return ust_hmap_get(&st->req_by_off, rec_off, &i) ? &st->reqs[i] : NULL;
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
