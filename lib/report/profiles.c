// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_profiles.  The first pass's entries are counted by what they fold
 * to (struct ent), the user stack by its frames (its content in the
 * stitch index, ust_stitch_stack_key()): a trace that repeats few stacks
 * many times (each a new stitched stack) then names, folds and locates
 * each only once.  The folds (all entries, per thread,
 * per event name) and the pprof profile are made from the counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/flame.h"
#include "ustitch/fold.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/perf_enc.h"
#include "ustitch/pprof.h"
#include "ustitch/profiles.h"
#include "ustitch/sb.h"
#include "ustitch/scan.h"
#include "ustitch/stitch.h"
#include "ustitch/top.h"

struct ent {
	const struct ust_stitch_stack *st;	/* its user stack, NULL: none or lost */
	const struct ust_scan_sample *s;	/* the first entry so */
	unsigned long n;			/* how many */
	uint64_t period, weight;		/* summed */
	long next;				/* same hash, -1 ends */
};

struct ents {
	struct ent *v;
	size_t nr, cap;
	struct ust_hmap idx;
};

static bool lost(const struct ust_scan_sample *s)
{
	return s->has_cookie || s->ustack == UST_PERF_ENC_USTACK_LOST;
}

static uint64_t ent_hash(const struct ust_scan *sc, const struct ust_stitch_stack *st,
			 const struct ust_scan_sample *s)
{
	uint64_t h = ust_hmap_mix((uint64_t)s->comm << 32 ^ s->nr_k ^ (uint64_t)s->is_event << 31 ^
				  (uint64_t)lost(s) << 30);
	unsigned int i;

	h = ust_hmap_mix(h ^ (uint32_t)s->pid ^ (uint64_t)s->event << 32);
	h = ust_hmap_mix(h ^ (uint32_t)s->cpu);
	h = ust_hmap_mix(h ^ ust_stitch_stack_key(st));
	for (i = 0; i < s->nr_k; i++)
		h = ust_hmap_mix(h ^ sc->kframes[s->kfirst + i]);
	return h;
}

/* The same frames: the same stack, or the same content of the stitch index. */
static bool same_stack(const struct ust_stitch_stack *a, const struct ust_stitch_stack *b)
{
	return a == b || (ust_stitch_stack_key(a) && ust_stitch_stack_key(a) == ust_stitch_stack_key(b));
}

static bool ent_same(const struct ust_scan *sc, const struct ent *e, const struct ust_stitch_stack *st,
		     const struct ust_scan_sample *s)
{
	const struct ust_scan_sample *t = e->s;

	return t->comm == s->comm && t->pid == s->pid && t->cpu == s->cpu && t->event == s->event &&
	       t->is_event == s->is_event && lost(t) == lost(s) && t->nr_k == s->nr_k &&
	       same_stack(e->st, st) &&
	       (!s->nr_k || !memcmp(&sc->kframes[t->kfirst], &sc->kframes[s->kfirst],
				    s->nr_k * sizeof(*sc->kframes)));
}

static int count_all(struct ents *es, const struct ust_scan *sc)
{
	unsigned long i;
	uint64_t h, first;
	struct ent *g;
	long at, last;

	for (i = 0; i < sc->nr_samples; i++) {
		const struct ust_scan_sample *s = &sc->samples[i];
		const struct ust_stitch_stack *st = ust_fold_user_stack(sc, s);

		h = ent_hash(sc, st, s);
		at = last = -1;
		if (ust_hmap_get(&es->idx, h, &first))
			for (at = (long)first; at >= 0; last = at, at = es->v[at].next)
				if (ent_same(sc, &es->v[at], st, s))
					break;
		if (at < 0) {
			g = ust_grow(es->v, &es->cap, es->nr + 1, sizeof(*g), 1024);
			if (!g)
				return -ENOMEM;
			es->v = g;
			if (last < 0 && ust_hmap_put(&es->idx, h, es->nr))
				return -ENOMEM;
			at = (long)es->nr++;
			es->v[at] = (struct ent){ .st = st, .s = s, .next = -1 };
			if (last >= 0)
				es->v[last].next = at;
		}
		es->v[at].n++;
		if (!s->is_event)
			es->v[at].period += s->period;
		else if (s->has_weight)
			es->v[at].weight += s->weight;
	}
	return 0;
}

/* ---- the folds ----------------------------------------------------------- */

/*
 * A fold of the entries ust_fold_counts() counts (@event UINT32_MAX), or of
 * the events named @event.  NULL when out of memory.
 */
static struct ust_fold *fold_of(const struct ents *es, const struct ust_scan *sc,
				const struct ust_fold_names *names, uint32_t event, bool per_thread)
{
	struct ust_fold *f = ust_fold_new();
	struct ust_sb sb;
	size_t i;

	if (!f)
		return NULL;
	ust_fold_per_thread(f, per_thread);
	ust_sb_init(&sb);
	for (i = 0; i < es->nr; i++) {
		const struct ent *e = &es->v[i];

		if (event == UINT32_MAX ? ust_fold_counts(sc, e->s) :
					  e->s->is_event && e->s->event == event)
			ust_fold_entry(f, &sb, sc, names, e->s, e->st, e->n);
	}
	if (sb.oom) {
		ust_fold_free(f);
		f = NULL;
	}
	ust_sb_fini(&sb);
	return f;
}

static int top(const struct ust_profiles_opts *o, const struct ents *es, const struct ust_scan *sc,
	       const struct ust_fold_names *names, const struct ust_fold *all)
{
	uint32_t *ev = NULL, *g;
	size_t nr = 0, cap = 0, i, k;
	struct ust_fold *f;
	char what[300];
	int ret;

	fflush(stdout);
	/* The samples (or, in a recording without any, the events) ... */
	ret = ust_top_print(all, o->top, sc->nr_samples > sc->nr_events ? "samples" : "events", stdout);
	/* ... then per event name, where there are samples or several names. */
	for (i = 0; !ret && i < es->nr; i++) {
		uint32_t e = es->v[i].s->event;

		if (!es->v[i].s->is_event || e == UINT32_MAX)
			continue;
		for (k = 0; k < nr && ev[k] != e; k++)
			;
		if (k < nr)
			continue;
		g = ust_grow(ev, &cap, nr + 1, sizeof(*ev), 8);
		if (!g) {
			ret = -ENOMEM;
			break;
		}
		ev = g;
		ev[nr++] = e;
	}
	if (nr > 1 || (nr && sc->nr_samples > sc->nr_events))
		for (k = 0; !ret && k < nr; k++) {
			f = fold_of(es, sc, names, ev[k], false);
			snprintf(what, sizeof(what), "%s events", sc->names[ev[k]]);
			ret = f ? ust_top_print(f, o->top, what, stdout) : -ENOMEM;
			ust_fold_free(f);
		}
	fflush(stdout);
	free(ev);
	return ret;
}

/* ---- pprof ---------------------------------------------------------------- */

#define PPROF_SAMPLES	(1U << 0)	/* samples/count, cpu/nanoseconds */
#define PPROF_EVENTS	(1U << 1)	/* events/count */
#define PPROF_WEIGHT	(1U << 2)	/* FIELD/count: -O ustitch:weight=FIELD */

/* A file's mapping as the trace's mapping record names it. */
static void map_info(void *ctx, uint32_t kdev, uint64_t ino, const char **path,
		     const uint8_t **build_id, size_t *build_id_len)
{
	const struct ust_scan *sc = ctx;
	unsigned long i;

	for (i = 0; i < sc->nr_maps; i++) {
		const struct ust_scan_mapping *m = &sc->maps[i];

		if (m->kdev != kdev || m->ino != ino)
			continue;
		*path = m->path;
		*build_id = m->build_id;
		*build_id_len = m->build_id_len;
		return;
	}
}

static void pprof_sample(struct ust_pprof *p, const struct ust_scan *sc, const struct ent *e,
			 unsigned int types, const char **kbuf)
{
	const struct ust_scan_sample *s = e->s;
	struct ust_pprof_sample ps = { 0 };
	unsigned int i, nv = 0;
	int64_t v[4];

	if (e->st) {
		ps.user = e->st->frames;
		ps.nr_user = e->st->nr;
		ps.has_files = e->st->has_files;
		ps.user_key = ust_stitch_stack_key(e->st);
	} else {
		ps.lost = lost(s);
	}
	for (i = 0; i < s->nr_k; i++) {
		uint32_t k = sc->kframes[s->kfirst + i];

		kbuf[i] = k != UINT32_MAX ? sc->names[k] : NULL;
	}
	ps.kernel = kbuf;
	ps.nr_kernel = s->nr_k;
	/* Its values, one per sample type (pprof()). */
	if (types & PPROF_SAMPLES) {
		v[nv++] = s->is_event ? 0 : (int64_t)e->n;
		v[nv++] = (int64_t)e->period;
	}
	if (types & PPROF_EVENTS)
		v[nv++] = s->is_event ? (int64_t)e->n : 0;
	if (types & PPROF_WEIGHT)
		v[nv++] = (int64_t)e->weight;
	ps.values = v;
	ps.comm = s->comm != UINT32_MAX ? sc->names[s->comm] : NULL;
	ps.tid = s->pid;	/* the record's common_pid: a thread's id */
	ps.cpu = s->cpu;
	ps.event = s->event != UINT32_MAX ? sc->names[s->event] : NULL;
	ust_pprof_add(p, &ps);
}

static int pprof(const struct ust_profiles_opts *o, const struct ents *es, const struct ust_scan *sc,
		 const struct ust_fold_names *names, char *err, size_t errsz)
{
	struct ust_pprof_times t = { .period_type = "cpu", .period_unit = "nanoseconds" };
	uint64_t first = UINT64_MAX, last = 0;
	struct ust_pprof *p = ust_pprof_new(names, o->lines, map_info, (void *)sc);
	unsigned int types, max_k = 0;
	const char **kbuf;
	unsigned long i;
	int ret;

	for (i = 0; i < es->nr; i++)
		max_k = es->v[i].s->nr_k > max_k ? es->v[i].s->nr_k : max_k;
	kbuf = calloc(max_k + 1, sizeof(*kbuf));
	if (!p || !kbuf) {
		free(kbuf);
		ust_pprof_free(p);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	/*
	 * Sampling events count samples and CPU time (their period); other
	 * events with deferred stacks count events (sample_index=events).
	 */
	types = (sc->nr_samples > sc->nr_events || !sc->nr_samples ? PPROF_SAMPLES : 0) |
		(sc->nr_events ? PPROF_EVENTS : 0) | (sc->nr_events && sc->weight ? PPROF_WEIGHT : 0);
	if (types & PPROF_SAMPLES) {
		ust_pprof_type(p, "samples", "count");
		ust_pprof_type(p, "cpu", "nanoseconds");
	}
	if (types & PPROF_EVENTS)
		ust_pprof_type(p, "events", "count");
	/* -O ustitch:weight=FIELD: the events' field summed, a type named after it. */
	if (types & PPROF_WEIGHT)
		ust_pprof_type(p, sc->weight, "count");
	for (i = 0; i < es->nr; i++)
		pprof_sample(p, sc, &es->v[i], types, kbuf);
	for (i = 0; i < sc->nr_samples; i++) {
		const struct ust_scan_sample *s = &sc->samples[i];

		first = s->ts < first ? s->ts : first;
		last = s->ts > last ? s->ts : last;
		if (!t.period)
			t.period = s->period;
	}
	if (sc->nr_samples)
		t.duration_ns = last - first;
	ret = ust_pprof_write(p, o->pprof, &t, err, errsz);
	if (!ret) {
		fflush(stdout);
		printf("# ustitch pprof profile: %lu samples, %lu events, %" PRIu64 " locations, %" PRIu64
		       " functions, written to %s\n", sc->nr_samples - sc->nr_events, sc->nr_events,
		       ust_pprof_nr_locations(p), ust_pprof_nr_functions(p), o->pprof);
		fflush(stdout);
	}
	free(kbuf);
	ust_pprof_free(p);
	return ret;
}

/* ---- all of them ---------------------------------------------------------- */

static int said(int *first, int ret, const char *what, const char *err)
{
	if (ret) {
		fprintf(stderr, "ustitch: %s: %s\n", what, err);
		if (!*first)
			*first = ret;
	}
	return ret;
}

int ust_profiles_report(const struct ust_profiles_opts *o, const char *path,
			const struct ust_scan *scan, const struct ust_fold_names *names)
{
	struct ust_fold *all = NULL, *threads = NULL;
	struct ust_fold_input in;
	struct ents es = { 0 };
	char err[512];
	int ret, first = 0;

	ret = ust_fold_input_init(&in, path, scan, names, o->pprof ? o->weight : NULL, err, sizeof(err));
	if (ret < 0) {
		said(&first, ret, o->pprof ? "pprof" : o->flamegraph ? "flame graph" :
				  o->top ? "top" : "folded stacks", err);
		return ret;
	}
	ust_hmap_init(&es.idx);
	if (count_all(&es, in.scan)) {
		snprintf(err, sizeof(err), "out of memory");
		said(&first, -ENOMEM, "profiles", err);
		goto out;
	}
	snprintf(err, sizeof(err), "out of memory");
	if ((o->folded || (o->flamegraph && !o->per_thread) || o->top) &&
	    !(all = fold_of(&es, in.scan, in.names, UINT32_MAX, false))) {
		said(&first, -ENOMEM, "profiles", err);
		goto out;
	}
	if (o->folded)
		said(&first, ust_fold_write(all, o->folded, err, sizeof(err)), "folded stacks", err);
	if (o->flamegraph) {
		struct ust_flame_opts fo = {
			.icicle = o->icicle,
			.per_thread = o->per_thread,
			.subtitle = o->subtitle,
			.unit = in.scan->nr_samples > in.scan->nr_events ? "samples" : "events",
		};

		if (o->per_thread && !(threads = fold_of(&es, in.scan, in.names, UINT32_MAX, true)))
			said(&first, -ENOMEM, "flame graph", "out of memory");
		else
			said(&first, ust_flame_write(o->per_thread ? threads : all, o->flamegraph, &fo, err,
						     sizeof(err)), "flame graph", err);
	}
	if (o->pprof)
		said(&first, pprof(o, &es, in.scan, in.names, err, sizeof(err)), "pprof", err);
	if (o->top) {
		ret = top(o, &es, in.scan, in.names, all);
		snprintf(err, sizeof(err), ret == -ENOMEM ? "out of memory" : "writing the summary failed");
		said(&first, ret, "top", err);
	}
out:
	ust_fold_free(all);
	ust_fold_free(threads);
	free(es.v);
	ust_hmap_fini(&es.idx);
	ust_fold_input_fini(&in);
	return first;
}
