// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_stitch: requests and stacks are appended while one pass reads the
 * file.  A request keeps 32 bytes (ust_stitch_rq) in an array sorted by
 * record offset once the pass is over (and 16 more, its time, task and
 * buffer, until its stack is chosen at the end); a stack record keeps its cookie,
 * place and task, and points at its frames, which are stored once per
 * distinct content.  Hash maps answer "which stack for this cookie" and
 * "which stack at this offset" in O(1), a binary search "which request at
 * this offset", so the printing pass never scans.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/abi.h"
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
	free(st->reqx);
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
	void *x = ust_grow(st->reqx, &st->cap_reqx, st->nr_reqs + 1, sizeof(*st->reqx), 256);

	if (n)
		st->reqs = n;
	if (x)
		st->reqx = x;
	if (!n || !x)
		return -ENOMEM;
	st->reqs[st->nr_reqs] = (struct ust_stitch_rq){
		.rec_off = r->rec_off, .cookie = r->cookie, .ts = r->ts,
		.req_pid = r->req_pid < 0 ? -1 : r->req_pid, .stack = -1,
	};
	st->reqx[st->nr_reqs++] = (struct ust_stitch_rqx){
		.ts = r->ts, .rec_off = r->rec_off, .pid = r->pid, .buf = (int16_t)r->buf,
		.cpu = (int16_t)r->cpu,
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

/* Requests in (task, time, order added) order, to find each one's neighbours. */
static int cmp_task_time(const void *a, const void *b, void *arg)
{
	const struct ust_stitch_rqx *rx = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct ust_stitch_rqx *x = &rx[i], *y = &rx[j];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Is @a a better stack than @b for a request at @ts in buffer @buf?  One
 * at or after the request first (the kernel writes it later), the earliest
 * of those; else the latest before it (clocks of CPUs may differ a little);
 * the request's own buffer first at equal standing. */
static bool better(const struct ust_stitch_stack *a, const struct ust_stitch_stack *b,
		   uint64_t ts, int buf)
{
	bool a_after = a->ts >= ts, b_after = b->ts >= ts;

	if (a_after != b_after)
		return a_after;
	if ((a->buf == buf) != (b->buf == buf))
		return a->buf == buf;
	return a_after ? a->ts < b->ts : a->ts > b->ts;
}

/*
 * Was stack @s written after request @r?  Later in time, or at the same
 * time later in the same CPU's records of the same buffer: a coarse trace
 * clock (a guest's, ticking in milliseconds) gives a task's next entries
 * the time of its last.
 */
static bool after(const struct ust_stitch_stack *s, const struct ust_stitch_rqx *r)
{
	if (s->ts != r->ts)
		return s->ts > r->ts;
	return s->buf == r->buf && s->cpu == r->cpu && s->rec_off > r->rec_off;
}

/*
 * The stack of the request @x with @cookie whose task's requests of other
 * cookies are @lo and @hi before and after it (NULL: none): a task's
 * kernel entries follow one another, so its stack for this entry was
 * written after the one and no later than the other.  Without that window,
 * after lost records, a reused cookie's next holder's stack would be
 * shown.  @own: only the task's own stacks; else only those no request of
 * their own task took (a stack recorded for another task, which the
 * printing refuses, naming both).
 */
static long choose(const struct ust_stitch *st, uint64_t cookie, const struct ust_stitch_rqx *x,
		   const struct ust_stitch_rqx *lo, const struct ust_stitch_rqx *hi, bool own,
		   const unsigned char *taken)
{
	uint64_t first;
	long j, best = -1;

	if (!ust_hmap_get(&st->stack_by_cookie, cookie, &first))
		return -1;
	for (j = (long)first; j >= 0; j = st->stacks[j].next_same_cookie) {
		const struct ust_stitch_stack *s = &st->stacks[j];

		if ((lo && !after(s, lo)) || (hi && after(s, hi)))
			continue;
		if (own ? s->pid != x->pid : taken[j])
			continue;
		if (best < 0 || better(s, &st->stacks[best], x->ts, x->buf))
			best = j;
	}
	return best;
}

/* Each request's stack (rq.stack), in two rounds: the tasks' own stacks,
 * then for the rest a stack no request of its own task took. */
static void choose_stacks(struct ust_stitch *st)
{
	unsigned long n = st->nr_reqs, a, b, i;
	unsigned char *taken = calloc(st->nr_stacks ? st->nr_stacks : 1, 1);
	uint32_t *ord = malloc((n ? n : 1) * sizeof(*ord));
	int round;

	if (!taken || !ord || !st->reqx) {
		/* Out of memory: the first stack of the cookie, as lookup gives it. */
		for (i = 0; i < n; i++) {
			struct ust_stitch_stack *s = ust_stitch_lookup(st, st->reqs[i].cookie, 0);

			st->reqs[i].stack = s ? (int32_t)(s - st->stacks) : -1;
		}
		goto out;
	}
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), cmp_task_time, st->reqx);
	for (round = 0; round < 2; round++) {
		/* [a, b): one task's consecutive requests of one cookie. */
		for (a = 0; a < n; a = b) {
			const struct ust_stitch_rqx *xa = &st->reqx[ord[a]], *lo = NULL, *hi = NULL;
			uint64_t cookie = st->reqs[ord[a]].cookie;

			for (b = a + 1; b < n && st->reqx[ord[b]].pid == xa->pid &&
					st->reqs[ord[b]].cookie == cookie; b++)
				;
			if (a > 0 && st->reqx[ord[a - 1]].pid == xa->pid)
				lo = &st->reqx[ord[a - 1]];
			if (b < n && st->reqx[ord[b]].pid == xa->pid)
				hi = &st->reqx[ord[b]];
			for (i = a; i < b; i++) {
				struct ust_stitch_rq *r = &st->reqs[ord[i]];
				long j;

				/* Another task's stack only where the printing
				 * can name the requester's task and refuse it. */
				if (r->stack >= 0 || (round == 1 && r->req_pid < 0))
					continue;
				j = choose(st, cookie, &st->reqx[ord[i]], lo, hi, round == 0, taken);
				r->stack = (int32_t)j;
				if (j >= 0 && round == 0)
					taken[j] = 1;
			}
		}
	}
out:
	free(taken);
	free(ord);
	free(st->reqx);
	st->reqx = NULL;
	st->cap_reqx = 0;
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
	choose_stacks(st);
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
		else if (st->kernel_stacks)
			s->flags = UST_ABI_STACK_F_KERNEL;
		/* The chain's head counts the others. */
		if (ust_hmap_get(&st->stack_by_cookie, s->cookie, &f) && f == i)
			for (j = s->next_same_cookie; j >= 0; j = st->stacks[j].next_same_cookie)
				s->nr_dup++;
	}
	for (i = 0; i < st->nr_reqs; i++) {
		struct ust_stitch_stack *s = ust_stitch_req_stack(st, &st->reqs[i]);

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

struct ust_stitch_stack *ust_stitch_req_stack(const struct ust_stitch *st,
					      const struct ust_stitch_rq *r)
{
	return r->stack >= 0 && (unsigned long)r->stack < st->nr_stacks ? &st->stacks[r->stack] : NULL;
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
