// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_pprof: profile.proto written by hand (varints and length-delimited
 * fields; the messages are small and flat), then gzipped with zlib.  The
 * tables (strings, functions, mappings, locations) are indexed by hash
 * maps as the samples come: one pass, whoever reads them (pprof_trace.c
 * for a trace.dat, the babeltrace2 component for LTTng's).  Field numbers
 * are profile.proto's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ustitch/decode.h"
#include "ustitch/fold.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/pprof.h"
#include "ustitch/render.h"
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

	if (p->oom || !n)	/* an empty message: nothing to copy (d may be NULL) */
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

struct ust_pprof {
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
	/* User stacks already located (a trace repeats few stacks many times):
	 * a caller's key of their frames -> (at << 16 | n) + 1, their location
	 * ids memo_locs[at .. at + n). */
	struct ust_hmap memo;
	uint64_t *memo_locs;
	size_t nr_ml, cap_ml;
	const struct ust_fold_names *names;
	bool lines;			/* source lines and inlined frames */
	unsigned int nr_types;
	ust_pprof_map_fn map_info;
	void *map_ctx;
};

static int64_t str_of(struct ust_pprof *p, const char *s)
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
static uint64_t fn_of(struct ust_pprof *p, const char *name, const char *file)
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
static uint64_t new_map(struct ust_pprof *p, const char *file, const char *build_id)
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

/* The mapping of the file (@kdev, @ino): as the reader names it, else @obj. */
static uint64_t map_of(struct ust_pprof *p, uint32_t kdev, uint64_t ino, const char *obj)
{
	uint64_t key = ust_hmap_mix(ino) ^ ((uint64_t)kdev << 1), id;
	const uint8_t *b = NULL;
	const char *path = NULL;
	char bid[41] = "";
	size_t k, nb = 0;

	if (ust_hmap_get(&p->map_idx, key, &id))
		return id;
	if (p->map_info)
		p->map_info(p->map_ctx, kdev, ino, &path, &b, &nb);
	for (k = 0; b && k < nb && k < 20; k++)
		snprintf(bid + 2 * k, 3, "%02x", b[k]);
	id = new_map(p, path ? path : obj ? obj : "[unknown]", bid);
	if (ust_hmap_put(&p->map_idx, key, id))
		p->out.oom = true;
	return id;
}

static uint64_t kernel_map(struct ust_pprof *p)
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
static uint64_t loc_lines(struct ust_pprof *p, uint64_t key, uint64_t map, uint64_t addr,
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

static uint64_t loc_of(struct ust_pprof *p, uint64_t key, uint64_t map, uint64_t addr,
		       uint64_t fn, unsigned int line)
{
	return loc_lines(p, key, map, addr, &fn, &line, 1);
}

static void push_loc(struct ust_pprof *p, uint64_t id)
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
static uint64_t named_loc(struct ust_pprof *p, uint64_t map, const char *name)
{
	uint64_t key = ust_hmap_mix(ust_hmap_str(name) ^ map << 40 ^ 0x5bd1e995ULL);

	return loc_of(p, key, map, 0, fn_of(p, name, NULL), 0);
}

static void user_frame(struct ust_pprof *p, const struct ust_dec_frame *fr, bool is_return,
		       bool has_files)
{
	const struct ust_fold_names *n = p->names;
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
	map = map_of(p, fr->kdev, fr->ino, obj);
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

static void label_str(struct ust_pprof *p, struct pb *s, const char *key, const char *v)
{
	struct pb l = { 0 };

	pb_u(&l, 1, (uint64_t)str_of(p, key));
	pb_u(&l, 2, (uint64_t)str_of(p, v));
	pb_msg(s, 3, &l);
	free(l.b);
}

static void label_num(struct ust_pprof *p, struct pb *s, const char *key, int64_t v)
{
	struct pb l = { 0 };

	pb_u(&l, 1, (uint64_t)str_of(p, key));
	/* Written even when 0: a label with neither str nor num is dropped. */
	pb_varint(&l, 3 << 3);
	pb_varint(&l, (uint64_t)v);
	pb_msg(s, 3, &l);
	free(l.b);
}

/* ---- the API -------------------------------------------------------------- */

struct ust_pprof *ust_pprof_new(const struct ust_fold_names *n, bool lines, ust_pprof_map_fn map,
				void *ctx)
{
	struct ust_pprof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	ust_hmap_init(&p->str_idx);
	ust_hmap_init(&p->fn_idx);
	ust_hmap_init(&p->map_idx);
	ust_hmap_init(&p->loc_idx);
	ust_hmap_init(&p->memo);
	p->names = n;
	p->lines = lines;
	p->map_info = map;
	p->map_ctx = ctx;
	str_of(p, "");	/* string_table[0] */
	return p;
}

void ust_pprof_free(struct ust_pprof *p)
{
	size_t i;

	if (!p)
		return;
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
	ust_hmap_fini(&p->memo);
	free(p->memo_locs);
	free(p);
}

/* ValueType (1 type, 2 unit) as field @field of the Profile. */
static void value_type(struct ust_pprof *p, unsigned int field, const char *type, const char *unit)
{
	pb_u(&p->m, 1, (uint64_t)str_of(p, type));
	pb_u(&p->m, 2, (uint64_t)str_of(p, unit));
	pb_msg(&p->out, field, &p->m);
}

void ust_pprof_type(struct ust_pprof *p, const char *type, const char *unit)
{
	value_type(p, 1, type, unit);
	p->nr_types++;
}

static void note_main(struct ust_pprof *p, const struct ust_dec_frame *fr, bool is_return)
{
	const char *obj = NULL;
	struct ust_sym_frame sf[1];

	if (p->nr_maps || !fr->ino)
		return;
	ust_render_name(p->names->res, NULL, fr, is_return, false, sf, 1, &obj);
	if (obj)
		map_of(p, fr->kdev, fr->ino, obj);
}

/* The locations of a user stack located before: pushed, true. */
static bool user_memo(struct ust_pprof *p, const struct ust_pprof_sample *s)
{
	uint64_t m, k;

	if (!s->user_key || !ust_hmap_get(&p->memo, s->user_key, &m))
		return false;
	for (k = 0; k < ((m - 1) & 0xffff); k++)
		push_loc(p, p->memo_locs[((m - 1) >> 16) + k]);
	return true;
}

/* The user stack just located (p->locs[0 .. nr_l)), for the next time. */
static void user_keep(struct ust_pprof *p, const struct ust_pprof_sample *s)
{
	uint64_t *g;

	if (!s->user_key || p->nr_l > 0xffff)
		return;
	g = ust_grow(p->memo_locs, &p->cap_ml, p->nr_ml + p->nr_l, sizeof(*g), 1024);
	if (!g)
		return;
	p->memo_locs = g;
	memcpy(g + p->nr_ml, p->locs, p->nr_l * sizeof(*g));
	if (!ust_hmap_put(&p->memo, s->user_key, ((uint64_t)p->nr_ml << 16 | p->nr_l) + 1))
		p->nr_ml += p->nr_l;
}

/* Sample (1 location_id: packed, 2 value: packed, 3 label). */
void ust_pprof_add(struct ust_pprof *p, const struct ust_pprof_sample *s)
{
	struct pb packed = { 0 }, smp = { 0 };
	unsigned int i, nu;
	char cpu[16];

	p->nr_l = 0;
	/* The user stack's locations first, so that the first mapping made is a
	 * program's (pprof calls it the main binary), not the kernel's; the
	 * program's mapping before its libraries' (outermost first). */
	if (s->nr_user && user_memo(p, s)) {
		/* located before */
	} else if (s->nr_user) {
		if (s->has_files)
			note_main(p, &s->user[s->nr_user - 1], s->nr_user > 1);
		for (i = 0; i < s->nr_user; i++)
			user_frame(p, &s->user[i], i > 0, s->has_files);
		user_keep(p, s);
	} else if (s->lost) {
		push_loc(p, named_loc(p, 0, "[user stack lost]"));
	}
	nu = (unsigned int)p->nr_l;
	for (i = 0; i < s->nr_kernel; i++)
		push_loc(p, named_loc(p, kernel_map(p), s->kernel[i] ? s->kernel[i] : "[unknown]"));
	/* Innermost first: the kernel's frames, then the user stack's. */
	for (i = nu; i < p->nr_l; i++)
		pb_varint(&packed, p->locs[i]);
	for (i = 0; i < nu; i++)
		pb_varint(&packed, p->locs[i]);
	pb_msg(&smp, 1, &packed);
	for (i = 0; i < p->nr_types; i++)
		pb_varint(&packed, (uint64_t)s->values[i]);
	pb_msg(&smp, 2, &packed);
	free(packed.b);
	label_str(p, &smp, "comm", s->comm && s->comm[0] && strcmp(s->comm, "<...>") ? s->comm :
				   "[unknown]");
	/* The task: a thread's id. */
	label_num(p, &smp, "tid", s->tid);
	if (s->cpu >= 0) {
		snprintf(cpu, sizeof(cpu), "%d", s->cpu);
		label_str(p, &smp, "cpu", cpu);	/* a string: pprof drops a numeric 0 */
	}
	if (s->event)
		label_str(p, &smp, "event", s->event);
	if (s->lost && !s->nr_user)
		label_str(p, &smp, "stack", "lost");
	pb_msg(&p->out, 2, &smp);
	free(smp.b);
}

uint64_t ust_pprof_nr_locations(const struct ust_pprof *p)
{
	return p->nr_locs;
}

uint64_t ust_pprof_nr_functions(const struct ust_pprof *p)
{
	return p->nr_fns;
}

int ust_pprof_write(struct ust_pprof *p, const char *dest, const struct ust_pprof_times *t,
		    char *err, size_t errsz)
{
	gzFile gz;
	size_t i;

	if (t->time_ns)
		pb_u(&p->out, 9, t->time_ns);		/* time_nanos */
	if (t->duration_ns)
		pb_u(&p->out, 10, t->duration_ns);	/* duration_nanos */
	if (t->period_type) {
		value_type(p, 11, t->period_type, t->period_unit);
		pb_u(&p->out, 12, t->period);
	}
	/* The strings last: every table above has named its own. */
	for (i = 0; i < p->nr_strs; i++)
		pb_ld(&p->out, 6, p->strs[i], strlen(p->strs[i]));
	if (p->out.oom) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	gz = gzopen(dest, "wbe");
	if (!gz) {
		int e = errno ? errno : EIO;

		snprintf(err, errsz, "cannot write %s: %s", dest, strerror(e));
		return -e;
	}
	if (gzwrite(gz, p->out.b, (unsigned int)p->out.len) != (int)p->out.len) {
		gzclose(gz);
		snprintf(err, errsz, "writing %s failed", dest);
		return -EIO;
	}
	if (gzclose(gz) != Z_OK) {
		snprintf(err, errsz, "writing %s failed", dest);
		return -EIO;
	}
	return 0;
}
