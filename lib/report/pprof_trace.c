// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_pprof_report: a trace.dat's samples (the first pass's, ust_scan) into
 * a profile (pprof.c).  Sampling events count samples and CPU time (their
 * period); other events with deferred stacks count events; with a weight
 * field, its values summed too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/fold.h"
#include "ustitch/perf_enc.h"
#include "ustitch/pprof.h"
#include "ustitch/scan.h"
#include "ustitch/stitch.h"

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

static void sample(struct ust_pprof *p, const struct ust_scan *sc, const struct ust_scan_sample *s,
		   unsigned int types, const char **kbuf)
{
	const struct ust_stitch_stack *st = NULL;
	struct ust_pprof_sample ps = { 0 };
	int64_t v[4];
	unsigned int i, nv = 0;

	if (s->has_cookie) {
		const struct ust_stitch_rq *rq = ust_stitch_req_at(&sc->st, s->cookie_off);

		st = rq ? ust_stitch_req_stack(&sc->st, rq) : ust_stitch_lookup(&sc->st, s->cookie, s->buf);
	}
	if (st && st->pid != s->pid)
		st = NULL;	/* another task's: never shown as this one's */
	if (st && !st->bad) {
		ps.user = st->frames;
		ps.nr_user = st->nr;
		ps.has_files = st->has_files;
	} else {
		ps.lost = s->has_cookie || s->ustack == UST_PERF_ENC_USTACK_LOST;
	}
	for (i = 0; i < s->nr_k; i++) {
		uint32_t k = sc->kframes[s->kfirst + i];

		kbuf[i] = k != UINT32_MAX ? sc->names[k] : NULL;
	}
	ps.kernel = kbuf;
	ps.nr_kernel = s->nr_k;
	/* Its values, one per sample type (ust_pprof_report()). */
	if (types & PPROF_SAMPLES) {
		v[nv++] = !s->is_event;
		v[nv++] = s->is_event ? 0 : (int64_t)s->period;
	}
	if (types & PPROF_EVENTS)
		v[nv++] = s->is_event;
	if (types & PPROF_WEIGHT)
		v[nv++] = s->has_weight ? (int64_t)s->weight : 0;
	ps.values = v;
	ps.comm = s->comm != UINT32_MAX ? sc->names[s->comm] : NULL;
	ps.tid = s->pid;	/* the record's common_pid: a thread's id */
	ps.cpu = s->cpu;
	ps.event = s->event != UINT32_MAX ? sc->names[s->event] : NULL;
	ust_pprof_add(p, &ps);
}

int ust_pprof_report(const char *dest, const char *path, const struct ust_scan *scan,
		     const struct ust_fold_names *names, bool lines, const char *weight, char *err,
		     size_t errsz)
{
	struct ust_pprof_times t = { .period_type = "cpu", .period_unit = "nanoseconds" };
	uint64_t first = UINT64_MAX, last = 0;
	struct ust_fold_input in;
	const struct ust_scan *sc;
	struct ust_pprof *p;
	unsigned int types, max_k = 0;
	const char **kbuf = NULL;
	unsigned long i;
	int ret;

	ret = ust_fold_input_init(&in, path, scan, names, weight, err, errsz);
	if (ret < 0)
		return ret;
	sc = in.scan;
	p = ust_pprof_new(in.names, lines, map_info, (void *)sc);
	for (i = 0; i < sc->nr_samples; i++)
		max_k = sc->samples[i].nr_k > max_k ? sc->samples[i].nr_k : max_k;
	kbuf = calloc(max_k + 1, sizeof(*kbuf));
	if (!p || !kbuf) {
		ret = -ENOMEM;
		snprintf(err, errsz, "out of memory");
		goto out;
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
	for (i = 0; i < sc->nr_samples; i++) {
		const struct ust_scan_sample *s = &sc->samples[i];

		sample(p, sc, s, types, kbuf);
		first = s->ts < first ? s->ts : first;
		last = s->ts > last ? s->ts : last;
		if (!t.period)
			t.period = s->period;
	}
	if (sc->nr_samples)
		t.duration_ns = last - first;
	ret = ust_pprof_write(p, dest, &t, err, errsz);
	if (ret)
		goto out;
	fflush(stdout);
	printf("# ustitch pprof profile: %lu samples, %lu events, %" PRIu64 " locations, %" PRIu64
	       " functions, written to %s\n", sc->nr_samples - sc->nr_events, sc->nr_events,
	       ust_pprof_nr_locations(p), ust_pprof_nr_functions(p), dest);
	fflush(stdout);
out:
	free(kbuf);
	ust_pprof_free(p);
	ust_fold_input_fini(&in);
	return ret;
}
