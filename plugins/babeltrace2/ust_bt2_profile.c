// SPDX-License-Identifier: LGPL-2.1
/*
 * The events' stacks as profiles, as trace-cmd's -O ustitch:folded,
 * flamegraph, pprof and top make them from a trace.dat: each event with a
 * $app.ustitch:stack_id value counts once, under its task's name (the
 * procname context, else "[unknown]"); a stack not in the trace counts as
 * "[user stack lost]", never as another's.  One fold serves the folded
 * stacks, the flame graph and the summary; a fold per event name the
 * summary's tables per event; pprof is built as the events come.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ust_bt2.h"
#include "ustitch/flame.h"
#include "ustitch/fold.h"
#include "ustitch/grow.h"
#include "ustitch/pprof.h"
#include "ustitch/top.h"

bool ust_bt2_profile_wanted(const struct ust_bt2_profile_opts *o)
{
	return o->folded || o->flamegraph || o->pprof || o->top;
}

/* A file's mapping as its ustitch:object event named it. */
static void map_info(void *ctx, uint32_t kdev, uint64_t ino, const char **path,
		     const uint8_t **build_id, size_t *build_id_len)
{
	struct ust_bt2_stacks *st = ctx;
	struct ust_res_hit hit = { 0 };

	if (ust_res_lookup(st->res, kdev, ino, &hit))
		return;
	*path = hit.name ? hit.name : hit.path;
	*build_id = hit.build_id;
	*build_id_len = hit.build_id_len;
}

int ust_bt2_profile_init(struct ust_bt2_profile *p, const struct ust_bt2_profile_opts *o,
			 struct ust_bt2_stacks *st)
{
	memset(p, 0, sizeof(*p));
	ust_sb_init(&p->sb);
	if (!ust_bt2_profile_wanted(o))
		return 0;
	/* The parameters' strings are the graph's: copies, kept till the end. */
	p->o = *o;
	p->o.folded = o->folded ? strdup(o->folded) : NULL;
	p->o.flamegraph = o->flamegraph ? strdup(o->flamegraph) : NULL;
	p->o.pprof = o->pprof ? strdup(o->pprof) : NULL;
	if ((o->folded && !p->o.folded) || (o->flamegraph && !p->o.flamegraph) ||
	    (o->pprof && !p->o.pprof))
		return -1;
	p->names.res = st->res;
	p->names.sym = st->rnd.opts.symbols ? st->sym : NULL;
	p->fold = ust_fold_new();
	if (!p->fold)
		return -1;
	ust_fold_per_thread(p->fold, o->per_thread);
	if (o->pprof) {
		p->pp = ust_pprof_new(&p->names, o->lines, map_info, st);
		if (!p->pp)
			return -1;
		ust_pprof_type(p->pp, "events", "count");
	}
	p->on = true;
	return 0;
}

/* The fold of the summary's tables for events named @name. */
static struct ust_fold *event_fold(struct ust_bt2_profile *p, const char *name)
{
	struct ust_bt2_profile_ev_fold *g;
	size_t i;

	for (i = 0; i < p->nr_ev; i++)
		if (!strcmp(p->ev[i].name, name))
			return p->ev[i].fold;
	g = ust_grow(p->ev, &p->cap_ev, p->nr_ev + 1, sizeof(*g), 8);
	if (!g)
		return NULL;
	p->ev = g;
	g = &p->ev[p->nr_ev];
	g->name = strdup(name);
	g->fold = ust_fold_new();
	if (!g->name || !g->fold) {
		free(g->name);
		ust_fold_free(g->fold);
		return NULL;
	}
	ust_fold_per_thread(g->fold, p->o.per_thread);
	p->nr_ev++;
	return g->fold;
}

static void fold_one(struct ust_bt2_profile *p, struct ust_fold *f, const struct ust_bt2_profile_ev *e)
{
	ust_fold_begin(f, &p->sb, e->comm, e->tid);
	if (e->stack)
		ust_fold_put_user(f, &p->sb, &p->names, e->stack_key, e->stack->frames, e->stack->nr,
				  true);
	else
		ust_fold_put_name(&p->sb, "[user stack lost]");
	if (ust_fold_add(f, ust_sb_str(&p->sb), 1) || p->sb.oom)
		p->oom = true;
}

void ust_bt2_profile_add(struct ust_bt2_profile *p, const struct ust_bt2_profile_ev *e)
{
	struct ust_fold *f;

	if (!p->on)
		return;
	p->events++;
	if (!e->stack)
		p->lost++;
	if (e->has_time) {
		if (!p->have_time || e->ns < p->first_ns)
			p->first_ns = e->ns;
		if (!p->have_time || e->ns > p->last_ns)
			p->last_ns = e->ns;
		p->have_time = true;
	}
	fold_one(p, p->fold, e);
	if (p->o.top) {
		f = event_fold(p, e->event ? e->event : "[unknown]");
		if (f)
			fold_one(p, f, e);
		else
			p->oom = true;
	}
	if (p->pp) {
		static const int64_t one = 1;
		struct ust_pprof_sample s = {
			.user = e->stack ? e->stack->frames : NULL,
			.nr_user = e->stack ? e->stack->nr : 0,
			.user_key = e->stack_key,
			.has_files = true,
			.lost = !e->stack,
			.values = &one,
			.comm = e->comm,
			.tid = e->tid,
			.cpu = e->cpu,
			.event = e->event,
		};

		ust_pprof_add(p->pp, &s);
	}
}

void ust_bt2_profile_finish(struct ust_bt2_profile *p)
{
	char err[512], what[300];
	size_t i;

	if (!p->on)
		return;
	fflush(stdout);
	if (p->oom)
		fprintf(stderr, "ustitch: profiles: out of memory: some events are not counted\n");
	if (p->o.folded && ust_fold_write(p->fold, p->o.folded, err, sizeof(err)))
		fprintf(stderr, "ustitch: folded stacks: %s\n", err);
	if (p->o.flamegraph) {
		struct ust_flame_opts fo = {
			.icicle = p->o.icicle,
			.per_thread = p->o.per_thread,
			.unit = "events",
			.subtitle = "LTTng events with $app.ustitch:stack_id",
		};

		if (ust_flame_write(p->fold, p->o.flamegraph, &fo, err, sizeof(err)))
			fprintf(stderr, "ustitch: flame graph: %s\n", err);
	}
	if (p->pp) {
		struct ust_pprof_times t = {
			.time_ns = p->have_time && p->first_ns > 0 ? (uint64_t)p->first_ns : 0,
			.duration_ns = p->have_time ? (uint64_t)(p->last_ns - p->first_ns) : 0,
			.period_type = "events",
			.period_unit = "count",
			.period = 1,
		};

		if (ust_pprof_write(p->pp, p->o.pprof, &t, err, sizeof(err))) {
			fprintf(stderr, "ustitch: pprof: %s\n", err);
		} else {
			printf("# ustitch pprof profile: 0 samples, %lu events, %" PRIu64 " locations, %"
			       PRIu64 " functions, written to %s\n", p->events,
			       ust_pprof_nr_locations(p->pp), ust_pprof_nr_functions(p->pp), p->o.pprof);
		}
	}
	if (p->o.top) {
		if (ust_top_print(p->fold, p->o.top, "events", stdout))
			fprintf(stderr, "ustitch: top: writing the summary failed\n");
		/* Per event name, where there are several. */
		for (i = 0; p->nr_ev > 1 && i < p->nr_ev; i++) {
			snprintf(what, sizeof(what), "%s events", p->ev[i].name);
			if (ust_top_print(p->ev[i].fold, p->o.top, what, stdout))
				fprintf(stderr, "ustitch: top: writing the summary failed\n");
		}
	}
	fflush(stdout);
}

void ust_bt2_profile_fini(struct ust_bt2_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_ev; i++) {
		free(p->ev[i].name);
		ust_fold_free(p->ev[i].fold);
	}
	free(p->ev);
	ust_fold_free(p->fold);
	ust_pprof_free(p->pp);
	ust_sb_fini(&p->sb);
	free((char *)p->o.folded);
	free((char *)p->o.flamegraph);
	free((char *)p->o.pprof);
	memset(p, 0, sizeof(*p));
}
