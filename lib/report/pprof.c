// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_pprof: profile.proto written by hand (varints and length-delimited
 * fields; the messages are small and flat), then gzipped with zlib.  The
 * tables (strings, functions, mappings, locations) are indexed by hash
 * maps while the samples are read: one pass over the first pass's samples,
 * as ust_fold makes.  Field numbers are profile.proto's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ustitch/fold.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/perf_enc.h"
#include "ustitch/pprof.h"
#include "ustitch/render.h"
#include "ustitch/report.h"
#include "ustitch/resolve.h"
#include "ustitch/scan.h"
#include "ustitch/stitch.h"
#include "ustitch/sym.h"

/* ---- protobuf ------------------------------------------------------------ */

struct pb {
	uint8_t *b;
	size_t len, cap;
	bool oom;
};

static void pb_bytes(struct pb *p, const void *d, size_t n)
{
	uint8_t *g;

	if (p->oom)
		return;
	g = ust_grow(p->b, &p->cap, p->len + n, 1, 4096);
	if (!g) {
		p->oom = true;
		return;
	}
	p->b = g;
	memcpy(p->b + p->len, d, n);
	p->len += n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_bytes(p, t, n);
}

/* A varint field (wire type 0); zero is the default and left out. */
static void pb_u(struct pb *p, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

/* A length-delimited field (wire type 2): bytes, or an embedded message. */
static void pb_ld(struct pb *p, unsigned int field, const void *d, size_t n)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, n);
	pb_bytes(p, d, n);
}

static void pb_msg(struct pb *p, unsigned int field, struct pb *m)
{
	pb_ld(p, field, m->b, m->len);
	p->oom |= m->oom;
	m->len = 0;
}

/* ---- the tables --------------------------------------------------------- */

struct prof {
	struct pb out, m;		/* the Profile; a message being built */
	struct ust_hmap str_idx;	/* string key -> index */
	char **strs;
	size_t nr_strs, cap_strs;
	struct ust_hmap fn_idx;		/* name index -> function id */
	uint64_t nr_fns;
	struct ust_hmap map_idx;	/* (kdev, ino) key -> mapping id */
	uint64_t nr_maps, kernel_map;
	struct ust_hmap loc_idx;	/* (mapping, offset or name) key -> location id */
	uint64_t nr_locs;
	uint64_t *locs;			/* one sample's location ids */
	size_t nr_l, cap_l;
	bool lines;			/* source lines and inlined frames (ust_pprof_report) */
	unsigned int types;		/* PPROF_*: the sample types, in this order */
};

#define PPROF_SAMPLES	(1U << 0)	/* samples/count, cpu/nanoseconds */
#define PPROF_EVENTS	(1U << 1)	/* events/count */
#define PPROF_WEIGHT	(1U << 2)	/* FIELD/count: -O ustitch:weight=FIELD */

static int64_t str_of(struct prof *p, const char *s)
{
	uint64_t key = ust_hmap_str(s), i;

	while (ust_hmap_get(&p->str_idx, key, &i)) {
		if (!strcmp(p->strs[i], s))
			return (int64_t)i;
		key = ust_hmap_mix(key + 1);
	}
	{
		char **g = ust_grow(p->strs, &p->cap_strs, p->nr_strs + 1, sizeof(*g), 256);
		char *c = strdup(s);

		if (!g || !c || ust_hmap_put(&p->str_idx, key, p->nr_strs)) {
			free(c);
			if (g)
				p->strs = g;
			p->out.oom = true;
			return 0;
		}
		p->strs = g;
		p->strs[p->nr_strs] = c;
		return (int64_t)p->nr_strs++;
	}
}

/* Function (1 id, 2 name, 3 system_name, 4 filename). */
static uint64_t fn_of(struct prof *p, const char *name, const char *file)
{
	int64_t n = str_of(p, name), f = str_of(p, file ? file : "");
	uint64_t key = ust_hmap_mix((uint64_t)n << 24 ^ (uint64_t)f), id;

	if (ust_hmap_get(&p->fn_idx, key, &id))
		return id;
	id = ++p->nr_fns;
	if (ust_hmap_put(&p->fn_idx, key, id))
		p->out.oom = true;
	pb_u(&p->m, 1, id);
	pb_u(&p->m, 2, (uint64_t)n);
	pb_u(&p->m, 3, (uint64_t)n);
	pb_u(&p->m, 4, (uint64_t)f);
	pb_msg(&p->out, 5, &p->m);
	return id;
}

/*
 * Mapping (1 id, 2 memory_start, 3 memory_limit, 4 file_offset, 5 filename,
 * 6 build_id, 7 has_functions, 8 has_filenames, 9 has_line_numbers):
 * addresses are file offsets (memory_start 0, file_offset 0).
 */
static uint64_t new_map(struct prof *p, const char *file, const char *build_id)
{
	uint64_t id = ++p->nr_maps;

	pb_u(&p->m, 1, id);
	pb_u(&p->m, 3, UINT64_MAX >> 1);
	pb_u(&p->m, 5, (uint64_t)str_of(p, file));
	pb_u(&p->m, 6, (uint64_t)str_of(p, build_id));
	pb_u(&p->m, 7, 1);
	pb_msg(&p->out, 3, &p->m);
	return id;
}

/* The mapping of the file (@kdev, @ino), named by the trace's mapping record or @obj. */
static uint64_t map_of(struct prof *p, const struct ust_scan *sc, uint32_t kdev, uint64_t ino,
		       const char *obj)
{
	uint64_t key = ust_hmap_mix(ino) ^ ((uint64_t)kdev << 1), id;
	const char *path = obj;
	char bid[41] = "";
	unsigned long i;
	size_t k;

	if (ust_hmap_get(&p->map_idx, key, &id))
		return id;
	for (i = 0; i < sc->nr_maps; i++) {
		const struct ust_scan_mapping *m = &sc->maps[i];

		if (m->kdev != kdev || m->ino != ino)
			continue;
		if (m->path)
			path = m->path;
		for (k = 0; k < m->build_id_len && k < 20; k++)
			snprintf(bid + 2 * k, 3, "%02x", m->build_id[k]);
		break;
	}
	id = new_map(p, path ? path : "[unknown]", bid);
	if (ust_hmap_put(&p->map_idx, key, id))
		p->out.oom = true;
	return id;
}

static uint64_t kernel_map(struct prof *p)
{
	if (!p->kernel_map)
		p->kernel_map = new_map(p, "[kernel.kallsyms]", "");
	return p->kernel_map;
}

/*
 * Location (1 id, 2 mapping_id, 3 address, 4 line: Line (1 function_id,
 * 2 line)), keyed by @key; new ones take @addr and @n lines: the functions
 * @fns at @lines, those inlined first, the one they were inlined into last
 * (profile.proto's order).
 */
static uint64_t loc_lines(struct prof *p, uint64_t key, uint64_t map, uint64_t addr,
			  const uint64_t *fns, const unsigned int *lines, int n)
{
	uint64_t id;
	struct pb l = { 0 };
	int i;

	if (ust_hmap_get(&p->loc_idx, key, &id))
		return id;
	id = ++p->nr_locs;
	if (ust_hmap_put(&p->loc_idx, key, id))
		p->out.oom = true;
	pb_u(&p->m, 1, id);
	pb_u(&p->m, 2, map);
	pb_u(&p->m, 3, addr);
	for (i = 0; i < n; i++) {
		pb_u(&l, 1, fns[i]);
		pb_u(&l, 2, lines[i]);
		pb_msg(&p->m, 4, &l);
	}
	free(l.b);
	pb_msg(&p->out, 4, &p->m);
	return id;
}

static uint64_t loc_of(struct prof *p, uint64_t key, uint64_t map, uint64_t addr, uint64_t fn,
		       unsigned int line)
{
	return loc_lines(p, key, map, addr, &fn, &line, 1);
}

static void push_loc(struct prof *p, uint64_t id)
{
	uint64_t *g = ust_grow(p->locs, &p->cap_l, p->nr_l + 1, sizeof(*g), 64);

	if (!g) {
		p->out.oom = true;
		return;
	}
	p->locs = g;
	p->locs[p->nr_l++] = id;
}

/* A frame without an object or a name: a location per such name. */
static uint64_t named_loc(struct prof *p, uint64_t map, const char *name)
{
	uint64_t key = ust_hmap_mix(ust_hmap_str(name) ^ map << 40 ^ 0x5bd1e995ULL);

	return loc_of(p, key, map, 0, fn_of(p, name, NULL), 0);
}

static void user_frame(struct prof *p, const struct ust_scan *sc, const struct ust_fold_names *n,
		       const struct ust_dec_frame *fr, bool is_return, bool has_files)
{
	struct ust_sym_frame sf[16];
	const char *obj = NULL;
	unsigned int lines[16];
	uint64_t map, key, fns[16];
	char buf[300];
	int k, i;

	k = has_files && fr->ino ? ust_render_name(n->res, n->sym, fr, is_return, p->lines, sf, 16, &obj)
				 : 0;
	if (!obj) {
		push_loc(p, named_loc(p, 0, "[unknown]"));
		return;
	}
	map = map_of(p, sc, fr->kdev, fr->ino, obj);
	key = ust_hmap_mix(fr->off ^ map << 44);
	if (k > 0 && sf[k - 1].func) {
		/* With lines, the functions inlined at this address too. */
		for (i = 0; i < k; i++) {
			fns[i] = fn_of(p, sf[i].func ? sf[i].func : "[unknown]", sf[i].src_file);
			lines[i] = sf[i].line;
		}
		push_loc(p, loc_lines(p, key, map, fr->off, fns, lines, k));
		return;
	}
	snprintf(buf, sizeof(buf), "[%s]", obj);
	push_loc(p, loc_of(p, key, map, fr->off, fn_of(p, buf, NULL), 0));
}

static void label_str(struct prof *p, struct pb *s, const char *key, const char *v)
{
	struct pb l = { 0 };

	pb_u(&l, 1, (uint64_t)str_of(p, key));
	pb_u(&l, 2, (uint64_t)str_of(p, v));
	pb_msg(s, 3, &l);
	free(l.b);
}

static void label_num(struct prof *p, struct pb *s, const char *key, int64_t v)
{
	struct pb l = { 0 };

	pb_u(&l, 1, (uint64_t)str_of(p, key));
	/* Written even when 0: a label with neither str nor num is dropped. */
	pb_varint(&l, 3 << 3);
	pb_varint(&l, (uint64_t)v);
	pb_msg(s, 3, &l);
	free(l.b);
}

/* Sample (1 location_id: packed, 2 value: packed, 3 label). */
static void sample(struct prof *p, const struct ust_scan *sc, const struct ust_fold_names *n,
		   const struct ust_scan_sample *s)
{
	const struct ust_stitch_stack *st = NULL;
	const char *comm = s->comm != UINT32_MAX ? sc->names[s->comm] : NULL;
	const char *why = NULL;
	struct pb packed = { 0 }, smp = { 0 };
	unsigned int i, nu;
	char cpu[16];

	p->nr_l = 0;
	/* The user stack's locations first, so that the first mapping made is a
	 * program's (pprof calls it the main binary), not the kernel's. */
	if (s->has_cookie) {
		const struct ust_stitch_rq *rq = ust_stitch_req_at(&sc->st, s->cookie_off);

		st = rq ? ust_stitch_req_stack(&sc->st, rq) : ust_stitch_lookup(&sc->st, s->cookie, s->buf);
	}
	if (st && st->pid != s->pid)
		st = NULL;	/* another task's: never shown as this one's */
	if (st && !st->bad) {
		/* The program's mapping before its libraries' (outermost first):
		 * pprof takes the first mapping for the main binary. */
		if (!p->nr_maps && st->has_files && st->nr && st->frames[st->nr - 1].ino) {
			const struct ust_dec_frame *o = &st->frames[st->nr - 1];
			const char *obj = NULL;
			struct ust_sym_frame sf[1];

			ust_render_name(n->res, NULL, o, st->nr > 1, false, sf, 1, &obj);
			if (obj)
				map_of(p, sc, o->kdev, o->ino, obj);
		}
		for (i = 0; i < st->nr; i++)
			user_frame(p, sc, n, &st->frames[i], i > 0, st->has_files);
	} else if (s->has_cookie || s->ustack == UST_PERF_ENC_USTACK_LOST) {
		why = "lost";
		push_loc(p, named_loc(p, 0, "[user stack lost]"));
	}
	nu = p->nr_l;
	for (i = 0; i < s->nr_k; i++) {
		uint32_t k = sc->kframes[s->kfirst + i];
		const char *fn = k != UINT32_MAX ? sc->names[k] : "[unknown]";

		push_loc(p, named_loc(p, kernel_map(p), fn));
	}
	/* Innermost first: the kernel's frames, then the user stack's. */
	for (i = nu; i < p->nr_l; i++)
		pb_varint(&packed, p->locs[i]);
	for (i = 0; i < nu; i++)
		pb_varint(&packed, p->locs[i]);
	pb_msg(&smp, 1, &packed);
	/* Its values, one per sample type (build()): samples, cpu, events. */
	if (p->types & PPROF_SAMPLES) {
		pb_varint(&packed, !s->is_event);
		pb_varint(&packed, s->is_event ? 0 : s->period);
	}
	if (p->types & PPROF_EVENTS)
		pb_varint(&packed, s->is_event);
	if (p->types & PPROF_WEIGHT)
		pb_varint(&packed, s->has_weight ? s->weight : 0);
	pb_msg(&smp, 2, &packed);
	free(packed.b);
	label_str(p, &smp, "comm", comm && strcmp(comm, "<...>") ? comm : "[unknown]");
	/* The task is the record's common_pid: a thread's id. */
	label_num(p, &smp, "tid", s->pid);
	snprintf(cpu, sizeof(cpu), "%d", s->cpu);
	label_str(p, &smp, "cpu", cpu);	/* a string: pprof drops a numeric 0 */
	if (s->event != UINT32_MAX)
		label_str(p, &smp, "event", sc->names[s->event]);
	if (why)
		label_str(p, &smp, "stack", why);
	pb_msg(&p->out, 2, &smp);
	free(smp.b);
}

static void value_type(struct prof *p, unsigned int field, const char *type, const char *unit)
{
	pb_u(&p->m, 1, (uint64_t)str_of(p, type));
	pb_u(&p->m, 2, (uint64_t)str_of(p, unit));
	pb_msg(&p->out, field, &p->m);
}

/* The whole Profile of @sc into p->out. */
static void build(struct prof *p, const struct ust_scan *sc, const struct ust_fold_names *n)
{
	uint64_t first = UINT64_MAX, last = 0, period = 0;
	unsigned long i;

	str_of(p, "");	/* string_table[0] */
	/*
	 * Sampling events count samples and CPU time (their period); other
	 * events with deferred stacks count events (sample_index=events).
	 */
	p->types = (sc->nr_samples > sc->nr_events || !sc->nr_samples ? PPROF_SAMPLES : 0) |
		   (sc->nr_events ? PPROF_EVENTS : 0);
	if (p->types & PPROF_SAMPLES) {
		value_type(p, 1, "samples", "count");
		value_type(p, 1, "cpu", "nanoseconds");
	}
	if (p->types & PPROF_EVENTS)
		value_type(p, 1, "events", "count");
	/* -O ustitch:weight=FIELD: the events' field summed, a type named after it. */
	if (sc->nr_events && sc->weight) {
		p->types |= PPROF_WEIGHT;
		value_type(p, 1, sc->weight, "count");
	}
	for (i = 0; i < sc->nr_samples; i++) {
		const struct ust_scan_sample *s = &sc->samples[i];

		sample(p, sc, n, s);
		first = s->ts < first ? s->ts : first;
		last = s->ts > last ? s->ts : last;
		if (!period)
			period = s->period;
	}
	if (sc->nr_samples)
		pb_u(&p->out, 10, last - first);	/* duration_nanos */
	value_type(p, 11, "cpu", "nanoseconds");	/* period_type */
	pb_u(&p->out, 12, period);
	/* The strings last: every table above has named its own. */
	for (i = 0; i < p->nr_strs; i++)
		pb_ld(&p->out, 6, p->strs[i], strlen(p->strs[i]));
}

static void prof_free(struct prof *p)
{
	size_t i;

	for (i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->out.b);
	free(p->m.b);
	free(p->locs);
	ust_hmap_fini(&p->str_idx);
	ust_hmap_fini(&p->fn_idx);
	ust_hmap_fini(&p->map_idx);
	ust_hmap_fini(&p->loc_idx);
}

int ust_pprof_report(const char *dest, const char *path, const struct ust_scan *scan,
		     const struct ust_fold_names *names, bool lines, const char *weight, char *err,
		     size_t errsz)
{
	struct ust_fold_input in;
	struct prof p = { .lines = lines };
	gzFile gz;
	int ret;

	ret = ust_fold_input_init(&in, path, scan, names, weight, err, errsz);
	if (ret < 0)
		return ret;
	ust_hmap_init(&p.str_idx);
	ust_hmap_init(&p.fn_idx);
	ust_hmap_init(&p.map_idx);
	ust_hmap_init(&p.loc_idx);
	build(&p, in.scan, in.names);
	if (p.out.oom) {
		ret = -ENOMEM;
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	gz = gzopen(dest, "wbe");
	if (!gz) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errsz, "cannot write %s: %s", dest, strerror(errno ? errno : EIO));
		goto out;
	}
	if (gzwrite(gz, p.out.b, (unsigned int)p.out.len) != (int)p.out.len) {
		gzclose(gz);
		ret = -EIO;
		snprintf(err, errsz, "writing %s failed", dest);
		goto out;
	}
	if (gzclose(gz) != Z_OK) {
		ret = -EIO;
		snprintf(err, errsz, "writing %s failed", dest);
		goto out;
	}
	fflush(stdout);
	printf("# ustitch pprof profile: %lu samples, %lu events, %" PRIu64 " locations, %" PRIu64
	       " functions, written to %s\n", in.scan->nr_samples - in.scan->nr_events,
	       in.scan->nr_events, p.nr_locs, p.nr_fns, dest);
	fflush(stdout);
out:
	prof_free(&p);
	ust_fold_input_fini(&in);
	return ret;
}
