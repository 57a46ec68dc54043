// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_stitch.  A sample is printed before its user stack exists (that
 * happens at the return to user space), so items are kept until what
 * becomes of them is known.  finish() merges the streams by time with one
 * stable sort on (time, kind, stream, arrival): within a stream arrival
 * order is ring order, so this is the k-way merge.  flush() does the same
 * for the items older than a time the caller names, hands out those whose
 * fate is known and forgets them, so that a long recording holds only its
 * last second or so and the samples still waiting for their stacks: kept
 * whole until the end, a recording grew by 1.9 kB a sample (python3
 * sampled at 10 kHz: 250 MB after 9 s).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "ustitch/abi.h"
#include "ustitch/hmap.h"
#include "ustitch/perf_stitch.h"

struct ust_perf_stitch {
	struct ust_perf_item *items;
	size_t nr, cap;
	size_t *order;			/* indices in time order, after a sort */
	unsigned int ext_stream;	/* first stream id of BPF-made items */
	bool expect_requests;
	bool finished;
	uint64_t seq;			/* arrivals so far (items flushed included) */
	uint64_t newest;		/* the latest time of an item added */
	/* Lost records seen so far, flushed or not: a sample whose stack never
	 * came is LOST if records were lost at or after its time. */
	bool any_lost;
	uint64_t max_lost;
	struct ust_perf_stitch_stats stats;	/* of the items handed out */
};

/* A request that matched a sample handed out before: never matched again. */
#define SAMPLE_GONE	(-2)
/*
 * Clock skew between neighbours: a BPF request or stack made in the same
 * overflow handler as its sample may be stamped a little before or after
 * it.  flush() keeps unmatched requests and stacks this much younger than
 * its limit, for the samples just after the limit.
 */
#define NEIGHBOUR_NS	10000000ULL

struct ust_perf_stitch *ust_perf_stitch_new(void)
{
	struct ust_perf_stitch *st = calloc(1, sizeof(*st));

	if (st)
		st->ext_stream = 1U << 30;
	return st;
}

void ust_perf_stitch_free(struct ust_perf_stitch *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nr; i++)
		free(st->items[i].raw);
	free(st->items);
	free(st->order);
	free(st);
}

void ust_perf_stitch_expect_requests(struct ust_perf_stitch *st, bool on)
{
	st->expect_requests = on;
}

const char *ust_perf_ustack_name(enum ust_perf_ustack u)
{
	switch (u) {
	case UST_PERF_US_NONE:
		return "none";
	case UST_PERF_US_IMMEDIATE:
		return "immediate";
	case UST_PERF_US_DEFERRED:
		return "deferred";
	case UST_PERF_US_LOST:
		return "lost";
	case UST_PERF_US_UNFINISHED:
		return "unfinished";
	case UST_PERF_US_NO_COOKIE:
		return "no-cookie";
	}
	return "?";
}

static struct ust_perf_item *new_item(struct ust_perf_stitch *st, enum ust_perf_item_kind kind,
				      unsigned int stream, uint32_t cpu, uint64_t time)
{
	struct ust_perf_item *it;

	if (st->finished)
		return NULL;
	if (st->nr == st->cap) {
		void *n = ust_grow(st->items, &st->cap, st->nr + 1, sizeof(*st->items), 1024);

		if (!n)
			return NULL;
		st->items = n;
	}
	it = &st->items[st->nr];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->stream = stream;
	it->seq = st->seq++;
	st->nr++;
	it->cpu = cpu;
	it->time = time;
	if (time > st->newest)
		st->newest = time;
	it->next_same_key = -1;
	it->stack_idx = -1;
	it->sample_idx = -1;
	return it;
}

int ust_perf_stitch_add_record(struct ust_perf_stitch *st, unsigned int stream, uint32_t cpu,
			       const struct ust_perf_layout *l, const void *rec, size_t size,
			       char *err, size_t errsz)
{
	struct ust_perf_event ev;
	struct ust_perf_item *it;
	enum ust_perf_item_kind kind;
	void *copy;
	int r;

	if (st->finished)
		return -EINVAL;
	st->stats.records++;
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, size);
	r = ust_perf_parse(l, copy, size, &ev, err, errsz);
	if (r < 0) {
		st->stats.bad_records++;
		free(copy);
		return 1;
	}
	switch (ev.type) {
	case PERF_RECORD_SAMPLE:
		kind = UST_PERF_ITEM_SAMPLE;
		break;
	case UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED:
		kind = UST_PERF_ITEM_DEFERRED;
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		kind = UST_PERF_ITEM_LOST;
		break;
	default:
		kind = UST_PERF_ITEM_OTHER;
		st->stats.other_records++;
		break;
	}
	it = new_item(st, kind, stream, (ev.id.has & UST_PERF_ID_CPU) ? ev.id.cpu : cpu, ev.id.time);
	if (!it) {
		free(copy);
		return -ENOMEM;
	}
	it->raw = copy;
	it->ev = ev;
	it->pid = ev.id.pid;
	it->tid = ev.id.tid;
	if (kind == UST_PERF_ITEM_SAMPLE && ev.u.sample.has_chain &&
	    ev.u.sample.chain.user_kind == UST_PERF_USER_DEFERRED) {
		it->has_cookie = true;
		it->cookie = ev.u.sample.chain.cookie;
	} else if (kind == UST_PERF_ITEM_DEFERRED) {
		it->cookie = ev.u.deferred.cookie;
	} else if (kind == UST_PERF_ITEM_LOST) {
		it->lost = ev.u.lost.lost;
	}
	return 0;
}

int ust_perf_stitch_add_request(struct ust_perf_stitch *st, uint32_t cpu, uint64_t time,
				uint32_t pid, uint32_t tid, uint64_t ip, uint64_t period,
				uint64_t cookie, bool dropped_before)
{
	struct ust_perf_item *it = new_item(st, UST_PERF_ITEM_REQUEST, st->ext_stream + cpu, cpu,
					    time);

	if (!it)
		return st->finished ? -EINVAL : -ENOMEM;
	it->pid = pid;
	it->tid = tid;
	it->ip = ip;
	it->period = period;
	it->cookie = cookie;
	it->has_cookie = true;
	it->dropped_before = dropped_before;
	return 0;
}

int ust_perf_stitch_add_stack(struct ust_perf_stitch *st, uint32_t cpu, uint64_t time,
			      uint32_t pid, uint32_t tid, uint64_t cookie,
			      const void *blob, size_t len)
{
	void *copy = malloc(len ? len : 1);
	struct ust_perf_item *it;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, blob, len);
	it = new_item(st, UST_PERF_ITEM_DEFERRED, st->ext_stream + cpu, cpu, time);
	if (!it) {
		free(copy);
		return st->finished ? -EINVAL : -ENOMEM;
	}
	it->raw = copy;
	it->blob = copy;
	it->blob_len = len;
	it->pid = pid;
	it->tid = tid;
	it->cookie = cookie;
	return 0;
}

int ust_perf_stitch_add_lost(struct ust_perf_stitch *st, uint32_t cpu, uint64_t time,
			     uint64_t count)
{
	struct ust_perf_item *it = new_item(st, UST_PERF_ITEM_LOST, st->ext_stream + cpu, cpu,
					    time);

	if (!it)
		return st->finished ? -EINVAL : -ENOMEM;
	it->lost = count;
	return 0;
}

/* qsort() is not stable: arrival order breaks every tie explicitly. */
static const struct ust_perf_item *sort_base;

static int cmp_order(const void *a, const void *b)
{
	const struct ust_perf_item *x = &sort_base[*(const size_t *)a];
	const struct ust_perf_item *y = &sort_base[*(const size_t *)b];

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* A BPF request is made before perf stamps its sample: same time,
	 * request first.  Mappings before the samples that may use them. */
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t key_of(uint32_t tid, uint64_t cookie)
{
	return ust_hmap_mix(cookie ^ ust_hmap_mix((uint64_t)tid + 1));
}

/* One CPU's samples and requests, in time order. */
struct cpu_seq {
	uint32_t cpu;
	long *idx;
	size_t nr, cap;
};

static struct cpu_seq *cpu_seq(struct cpu_seq **v, size_t *nr, uint32_t cpu)
{
	size_t i;
	void *n;

	for (i = 0; i < *nr; i++)
		if ((*v)[i].cpu == cpu)
			return &(*v)[i];
	n = realloc(*v, (*nr + 1) * sizeof(**v));
	if (!n)
		return NULL;
	*v = n;
	(*v)[*nr] = (struct cpu_seq){ .cpu = cpu };
	return &(*v)[(*nr)++];
}

static bool same_event(const struct ust_perf_item *r, const struct ust_perf_item *s)
{
	return r->kind == UST_PERF_ITEM_REQUEST && r->sample_idx == -1 && r->tid == s->tid &&
	       r->ip == s->ev.u.sample.ip && r->period == s->ev.u.sample.period;
}

/*
 * Give each sample the BPF request made for it.  Both come from one run of
 * the overflow handler, which nothing else on that CPU interrupts: in the
 * CPU's merged sequence a sample and its request are neighbours.  Whether
 * the request comes just before or just after the sample depends on where
 * the kernel stamps the sample (6.18: before the program runs); the side
 * is read from the trace itself, as the one where neighbours agree (task,
 * ip, period), and the other side is tried next.  That never takes another
 * sample's request: a sample's own request is either its neighbour on one
 * side, or missing, and a missing one (ring full, no task storage) makes
 * the next request on the CPU say so (dropped_before): the sample is then
 * given up rather than guessed.  (A program that cannot run, e.g. nested
 * in another BPF program, makes perf drop the sample itself.)
 */
static bool to_match(const struct ust_perf_item *s, uint64_t before)
{
	return s->kind == UST_PERF_ITEM_SAMPLE && !s->tried && s->time < before;
}

static int match_requests(struct ust_perf_stitch *st, uint64_t before)
{
	struct cpu_seq *cs = NULL;
	size_t ncs = 0, i, k;
	unsigned long pred = 0, succ = 0;
	int ret = -1;

	for (i = 0; i < st->nr; i++) {
		long idx = (long)st->order[i];
		struct ust_perf_item *it = &st->items[idx];
		struct cpu_seq *c;

		if (it->kind != UST_PERF_ITEM_REQUEST &&
		    (it->kind != UST_PERF_ITEM_SAMPLE || it->has_cookie))
			continue;
		c = cpu_seq(&cs, &ncs, it->cpu);
		if (!c)
			goto out;
		if (c->nr == c->cap) {
			void *n = ust_grow(c->idx, &c->cap, c->nr + 1, sizeof(*c->idx), 256);

			if (!n)
				goto out;
			c->idx = n;
		}
		c->idx[c->nr++] = idx;
	}
	/* Which side agrees. */
	for (k = 0; k < ncs; k++) {
		const struct cpu_seq *c = &cs[k];

		for (i = 0; i < c->nr; i++) {
			const struct ust_perf_item *s = &st->items[c->idx[i]];

			if (!to_match(s, before))
				continue;
			if (i > 0 && same_event(&st->items[c->idx[i - 1]], s))
				pred++;
			if (i + 1 < c->nr && same_event(&st->items[c->idx[i + 1]], s))
				succ++;
		}
	}
	for (k = 0; k < ncs; k++) {
		const struct cpu_seq *c = &cs[k];

		for (i = 0; i < c->nr; i++) {
			struct ust_perf_item *s = &st->items[c->idx[i]];
			struct ust_perf_item *r, *next_req = NULL, *prev, *after;
			size_t j;

			if (!to_match(s, before))
				continue;
			s->tried = true;	/* once: its outcome is counted */
			for (j = i + 1; j < c->nr && !next_req; j++)
				if (st->items[c->idx[j]].kind == UST_PERF_ITEM_REQUEST)
					next_req = &st->items[c->idx[j]];
			/* The usual side first, then the other: the stamp moves
			 * (6.18 stamps the first sample after lost records late). */
			after = i + 1 < c->nr ? &st->items[c->idx[i + 1]] : NULL;
			prev = i > 0 ? &st->items[c->idx[i - 1]] : NULL;
			if (succ > pred)
				r = after && same_event(after, s) ? after : prev;
			else
				r = prev && same_event(prev, s) ? prev : after;
			if (!r || !same_event(r, s))
				continue;
			if (next_req && next_req->dropped_before) {
				/* Its own request may be the dropped one. */
				st->stats.requests_ambiguous++;
				continue;
			}
			r->sample_idx = c->idx[i];
			s->has_cookie = true;
			s->cookie = r->cookie;
			st->stats.requests_matched++;
		}
	}
	ret = 0;
out:
	for (k = 0; k < ncs; k++)
		free(cs[k].idx);
	free(cs);
	return ret;
}

/*
 * Decide the samples older than @before: the stack of their cookie, if it
 * is here; else, at the end (@before UINT64_MAX), lost or unfinished; else
 * they wait for a later call.
 */
static int resolve(struct ust_perf_stitch *st, uint64_t before)
{
	struct ust_hmap by_key;
	size_t i;

	ust_hmap_init(&by_key);
	for (i = 0; i < st->nr; i++)
		st->items[i].next_same_key = -1;
	for (i = 0; i < st->nr; i++) {
		long idx = (long)st->order[i];
		struct ust_perf_item *it = &st->items[idx];
		uint64_t first;

		if (it->kind == UST_PERF_ITEM_LOST) {
			if (!st->any_lost || it->time > st->max_lost)
				st->max_lost = it->time;
			st->any_lost = true;
			continue;
		}
		if (it->kind != UST_PERF_ITEM_DEFERRED)
			continue;
		if (!ust_hmap_get(&by_key, key_of(it->tid, it->cookie), &first)) {
			if (ust_hmap_put(&by_key, key_of(it->tid, it->cookie), (uint64_t)idx)) {
				ust_hmap_fini(&by_key);
				return -1;
			}
			continue;
		}
		/* Chain it (time order): the first arrival answers. */
		while (st->items[first].next_same_key >= 0)
			first = (uint64_t)st->items[first].next_same_key;
		st->items[first].next_same_key = idx;
	}
	for (i = 0; i < st->nr; i++) {
		struct ust_perf_item *it = &st->items[st->order[i]];
		const struct ust_perf_chain *ch = &it->ev.u.sample.chain;
		uint64_t j;
		long k;

		if (it->kind != UST_PERF_ITEM_SAMPLE || it->decided || it->time >= before)
			continue;
		if (!it->has_cookie) {
			if (it->ev.u.sample.has_chain && ch->user_kind == UST_PERF_USER_IMMEDIATE)
				it->ustack = UST_PERF_US_IMMEDIATE;
			else if (st->expect_requests && it->tid)
				it->ustack = UST_PERF_US_NO_COOKIE;
			else
				it->ustack = UST_PERF_US_NONE;
			it->decided = true;
			continue;
		}
		k = -1;
		if (ust_hmap_get(&by_key, key_of(it->tid, it->cookie), &j))
			for (k = (long)j; k >= 0; k = st->items[k].next_same_key)
				if (st->items[k].tid == it->tid && st->items[k].cookie == it->cookie)
					break;
		if (k >= 0) {
			it->ustack = UST_PERF_US_DEFERRED;
			it->stack_idx = k;
			st->items[k].served++;
			it->decided = true;
		} else if (before == UINT64_MAX) {
			/* Lost records may have held the stack: say so, never guess. */
			it->ustack = st->any_lost && st->max_lost >= it->time ? UST_PERF_US_LOST :
										UST_PERF_US_UNFINISHED;
			it->decided = true;
		}
	}
	ust_hmap_fini(&by_key);
	return 0;
}

/* The statistics of an item handed out. */
static void count(struct ust_perf_stitch *st, const struct ust_perf_item *it)
{
	switch (it->kind) {
	case UST_PERF_ITEM_SAMPLE:
		st->stats.samples++;
		if (it->has_cookie)
			st->stats.with_cookie++;
		switch (it->ustack) {
		case UST_PERF_US_DEFERRED:
			st->stats.deferred_ok++;
			break;
		case UST_PERF_US_IMMEDIATE:
			st->stats.immediate++;
			break;
		case UST_PERF_US_LOST:
			st->stats.lost++;
			break;
		case UST_PERF_US_UNFINISHED:
			st->stats.unfinished++;
			break;
		case UST_PERF_US_NO_COOKIE:
			st->stats.no_cookie++;
			break;
		case UST_PERF_US_NONE:
			st->stats.no_user++;
			break;
		}
		break;
	case UST_PERF_ITEM_DEFERRED:
		st->stats.deferred++;
		if (!it->served)
			st->stats.orphan_deferred++;
		if (it->next_same_key >= 0)
			st->stats.dup_deferred++;
		break;
	case UST_PERF_ITEM_REQUEST:
		st->stats.requests++;
		break;
	case UST_PERF_ITEM_LOST:
		st->stats.lost_marks++;
		st->stats.lost_count += it->lost;
		break;
	case UST_PERF_ITEM_OTHER:
		break;
	}
}

/* st->order: the items in time order. */
static int sort_items(struct ust_perf_stitch *st)
{
	size_t i;

	free(st->order);
	st->order = malloc((st->nr ? st->nr : 1) * sizeof(*st->order));
	if (!st->order)
		return -ENOMEM;
	for (i = 0; i < st->nr; i++)
		st->order[i] = i;
	sort_base = st->items;
	qsort(st->order, st->nr, sizeof(*st->order), cmp_order);
	sort_base = NULL;
	return 0;
}

/* Indices to pointers, for the items as they now lie. */
static void link_items(struct ust_perf_stitch *st)
{
	size_t i;

	for (i = 0; i < st->nr; i++) {
		struct ust_perf_item *it = &st->items[i];

		it->stack = it->stack_idx >= 0 ? &st->items[it->stack_idx] : NULL;
		it->sample = it->sample_idx >= 0 ? &st->items[it->sample_idx] : NULL;
	}
}

/* Whether flush(@before) keeps @it for later. */
static bool kept_back(const struct ust_perf_item *it, uint64_t before)
{
	if (it->time >= before)
		return true;
	switch (it->kind) {
	case UST_PERF_ITEM_SAMPLE:
		return !it->decided;		/* its stack may still come */
	case UST_PERF_ITEM_REQUEST:
		return it->sample_idx == -1 && it->time + NEIGHBOUR_NS >= before;
	case UST_PERF_ITEM_DEFERRED:
		return it->time + NEIGHBOUR_NS >= before;
	default:
		return false;
	}
}

int ust_perf_stitch_flush(struct ust_perf_stitch *st, uint64_t before,
			  void (*cb)(const struct ust_perf_item *it, void *ctx), void *ctx)
{
	size_t i, n = 0;

	if (st->finished)
		return -EINVAL;
	if (before == UINT64_MAX)
		before--;	/* UINT64_MAX is the end's: finish() decides the rest */
	if (sort_items(st) || match_requests(st, before) || resolve(st, before))
		return -ENOMEM;
	link_items(st);
	for (i = 0; i < st->nr; i++) {
		const struct ust_perf_item *it = &st->items[st->order[i]];

		if (kept_back(it, before))
			continue;
		count(st, it);
		if (cb)
			cb(it, ctx);
	}
	/*
	 * The rest, in arrival order, their links undone (the array moves).
	 * Nothing kept_back() reads changed since: the same items stay.
	 */
	for (i = 0; i < st->nr; i++) {
		struct ust_perf_item *it = &st->items[i];

		if (!kept_back(it, before)) {
			free(it->raw);
			continue;
		}
		if (it->kind == UST_PERF_ITEM_REQUEST && it->sample_idx != -1)
			it->sample_idx = SAMPLE_GONE;
		it->stack_idx = -1;
		it->stack = NULL;
		it->sample = NULL;
		it->next_same_key = -1;
		if (n != i)
			st->items[n] = *it;
		n++;
	}
	st->nr = n;
	free(st->order);
	st->order = NULL;
	return 0;
}

size_t ust_perf_stitch_pending(const struct ust_perf_stitch *st)
{
	return st->finished ? 0 : st->nr;
}

uint64_t ust_perf_stitch_newest(const struct ust_perf_stitch *st)
{
	return st->newest;
}

int ust_perf_stitch_finish(struct ust_perf_stitch *st, struct ust_perf_stitch_stats *stats)
{
	size_t i;

	if (st->finished)
		return -EINVAL;
	if (sort_items(st))
		return -ENOMEM;
	st->finished = true;
	if (match_requests(st, UINT64_MAX) || resolve(st, UINT64_MAX))
		return -ENOMEM;
	/* Indices to pointers: the array no longer moves. */
	link_items(st);
	for (i = 0; i < st->nr; i++)
		count(st, &st->items[i]);
	if (stats)
		*stats = st->stats;
	return 0;
}

size_t ust_perf_stitch_count(const struct ust_perf_stitch *st)
{
	return st->finished ? st->nr : 0;
}

const struct ust_perf_item *ust_perf_stitch_at(const struct ust_perf_stitch *st, size_t i)
{
	return st->finished && i < st->nr ? &st->items[st->order[i]] : NULL;
}
