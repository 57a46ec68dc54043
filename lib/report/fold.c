// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_fold.  The first pass (ust_scan with UST_SCAN_SAMPLES) collected the
 * samples: a sample, then on the same CPU its kernel_stack and its cookie,
 * make one stack.  A recording without samples folds its events' deferred
 * stacks instead (system calls, lock_held()-kept events), one count each:
 * ust_fold_counts().  The user frames come from its stitch index (the stack
 * was recorded later, maybe on another CPU), named as ust_render names them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "ustitch/fold.h"
#include "ustitch/hmap.h"
#include "ustitch/perf_enc.h"
#include "ustitch/render.h"
#include "ustitch/report.h"
#include "ustitch/resolve.h"
#include "ustitch/scan.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"

struct fold_ent {
	char *stack;
	unsigned long count;
	long next;		/* same hash, -1 ends */
};

struct ust_fold {
	struct fold_ent *e;
	size_t nr, cap;
	struct ust_hmap by_hash;
	unsigned long total;
	struct ust_hmap kinds;		/* a user frame name's key -> enum ust_fold_kind */
	struct ust_hmap objs;		/* a user frame name's key -> objs_v[] + 1 (0: several) */
	char **objs_v;			/* object names (basenames), each once */
	size_t nr_objs, cap_objs;
	struct ust_hmap obj_idx;	/* an object name's key -> objs_v[] */
	bool per_thread;
	/* User stacks already named (a trace repeats few stacks many
	 * times): a caller's key of their frames -> memo_v[], their text. */
	struct ust_hmap memo;
	char **memo_v;
	size_t nr_memo, cap_memo;
};

struct ust_fold *ust_fold_new(void)
{
	struct ust_fold *f = calloc(1, sizeof(*f));

	if (f) {
		ust_hmap_init(&f->by_hash);
		ust_hmap_init(&f->kinds);
		ust_hmap_init(&f->objs);
		ust_hmap_init(&f->obj_idx);
		ust_hmap_init(&f->memo);
	}
	return f;
}

void ust_fold_free(struct ust_fold *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr; i++)
		free(f->e[i].stack);
	free(f->e);
	ust_hmap_fini(&f->by_hash);
	ust_hmap_fini(&f->kinds);
	ust_hmap_fini(&f->objs);
	ust_hmap_fini(&f->obj_idx);
	for (i = 0; i < f->nr_objs; i++)
		free(f->objs_v[i]);
	free(f->objs_v);
	ust_hmap_fini(&f->memo);
	for (i = 0; i < f->nr_memo; i++)
		free(f->memo_v[i]);
	free(f->memo_v);
	free(f);
}

int ust_fold_add(struct ust_fold *f, const char *stack, unsigned long count)
{
	uint64_t h = ust_hmap_str(stack), first;
	long i = -1, last = -1;

	if (ust_hmap_get(&f->by_hash, h, &first))
		for (i = (long)first; i >= 0; last = i, i = f->e[i].next)
			if (!strcmp(f->e[i].stack, stack))
				break;
	if (i < 0) {
		if (f->nr == f->cap) {
			void *n = ust_grow(f->e, &f->cap, f->nr + 1, sizeof(*f->e), 256);

			if (!n)
				return -ENOMEM;
			f->e = n;
		}
		i = (long)f->nr;
		f->e[i].stack = strdup(stack);
		if (!f->e[i].stack)
			return -ENOMEM;
		f->e[i].count = 0;
		f->e[i].next = -1;
		if (last >= 0)
			f->e[last].next = i;
		else if (ust_hmap_put(&f->by_hash, h, (uint64_t)i)) {
			free(f->e[i].stack);
			return -ENOMEM;
		}
		f->nr++;
	}
	f->e[i].count += count;
	f->total += count;
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp((*(const struct fold_ent *const *)a)->stack,
		      (*(const struct fold_ent *const *)b)->stack);
}

long ust_fold_print(const struct ust_fold *f, FILE *out)
{
	const struct fold_ent **v = malloc((f->nr ? f->nr : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < f->nr; i++)
		v[i] = &f->e[i];
	qsort(v, f->nr, sizeof(*v), cmp_ent);
	for (i = 0; i < f->nr; i++) {
		if (fprintf(out, "%s %lu\n", v[i]->stack, v[i]->count) < 0) {
			free(v);
			return -EIO;
		}
	}
	free(v);
	return (long)f->nr;
}

unsigned long ust_fold_total(const struct ust_fold *f)
{
	return f->total;
}

size_t ust_fold_nr(const struct ust_fold *f)
{
	return f->nr;
}

const char *ust_fold_stack(const struct ust_fold *f, size_t i, unsigned long *count)
{
	if (i >= f->nr)
		return NULL;
	if (count)
		*count = f->e[i].count;
	return f->e[i].stack;
}

enum ust_fold_kind ust_fold_kind(const struct ust_fold *f, const char *frame)
{
	size_t n = strlen(frame);
	uint64_t k;

	if (n > 4 && !strcmp(frame + n - 4, "_[k]"))
		return UST_FOLD_KERNEL;
	if (ust_hmap_get(&f->kinds, ust_hmap_str(frame), &k))
		return (enum ust_fold_kind)k;
	return UST_FOLD_OTHER;
}

const char *ust_fold_object(const struct ust_fold *f, const char *frame)
{
	size_t n = strlen(frame);
	uint64_t v;

	if (n > 4 && !strcmp(frame + n - 4, "_[k]"))
		return "[kernel.kallsyms]";
	if (!ust_hmap_get(&f->objs, ust_hmap_str(frame), &v))
		return NULL;
	return v ? f->objs_v[v - 1] : "[several]";
}

void ust_fold_per_thread(struct ust_fold *f, bool on)
{
	f->per_thread = on;
}

/* ---- frames ------------------------------------------------------------ */

/*
 * A frame name must not break the format: ';' separates, '\n' ends.
 * Spaces are fine (the count is after the last one): demangled names keep
 * theirs.  A ';' in a name (a Rust array type, "[u8; 4]") becomes ':', as
 * stackcollapse-perf.pl and inferno make it.
 */
void ust_fold_put_name(struct ust_sb *sb, const char *name)
{
	size_t at = sb->len + 1, i;

	ust_sb_puts(sb, ";");
	ust_sb_puts(sb, name);
	for (i = at; sb->buf && !sb->oom && i < sb->len; i++)
		if (sb->buf[i] == ';' || sb->buf[i] == '\n')
			sb->buf[i] = sb->buf[i] == ';' ? ':' : '_';
}

/* @name, as ust_fold_put_name() wrote it, is code of @obj: a library's or a program's. */
static void note_kind(struct ust_fold *f, const struct ust_sb *sb, size_t at, const char *obj)
{
	const char *base = strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
	uint64_t key = ust_hmap_str(ust_sb_str(sb) + at), old;

	uint64_t okey = ust_hmap_str(base), oi;

	if (!ust_hmap_get(&f->kinds, key, &old))
		ust_hmap_put(&f->kinds, key, strstr(base, ".so") ? UST_FOLD_LIBRARY : UST_FOLD_PROGRAM);
	/* The object: the one this name was seen in, or "several". */
	if (!ust_hmap_get(&f->obj_idx, okey, &oi)) {
		char **v = ust_grow(f->objs_v, &f->cap_objs, f->nr_objs + 1, sizeof(*v), 16);
		char *copy = strdup(base);

		if (!v || !copy) {
			free(copy);
			if (v)
				f->objs_v = v;
			return;
		}
		f->objs_v = v;
		oi = f->nr_objs;
		f->objs_v[f->nr_objs++] = copy;
		ust_hmap_put(&f->obj_idx, okey, oi);
	}
	if (!ust_hmap_get(&f->objs, key, &old))
		ust_hmap_put(&f->objs, key, oi + 1);
	else if (old && old != oi + 1)
		ust_hmap_put(&f->objs, key, 0);
}

static void put_user_frame(struct ust_fold *f, struct ust_sb *sb, const struct ust_fold_names *n,
			   const struct ust_dec_frame *fr, bool is_return, bool has_files)
{
	struct ust_sym_frame sf[16];
	const char *obj = NULL;
	char buf[300];
	size_t at;
	int k;

	k = has_files && fr->ino ? ust_render_name(n->res, n->sym, fr, is_return, false, sf, 16, &obj)
				 : 0;
	if (!obj) {
		ust_fold_put_name(sb, "[unknown]");
		return;
	}
	at = sb->len + 1;	/* after the ';' */
	if (k > 0 && sf[k - 1].func) {
		ust_fold_put_name(sb, sf[k - 1].func);
	} else {
		snprintf(buf, sizeof(buf), "[%s]", obj);
		ust_fold_put_name(sb, buf);
	}
	note_kind(f, sb, at, obj);
}

void ust_fold_put_user(struct ust_fold *f, struct ust_sb *sb, const struct ust_fold_names *n,
		       uint64_t key, const struct ust_dec_frame *fr, unsigned int nr, bool has_files)
{
	size_t at = sb->len;
	unsigned int k;
	uint64_t m;
	char **g;

	if (key && ust_hmap_get(&f->memo, key, &m)) {
		ust_sb_puts(sb, f->memo_v[m]);
		return;
	}
	for (k = nr; k > 0; k--)
		put_user_frame(f, sb, n, &fr[k - 1], k - 1 > 0, has_files);
	if (!key || sb->oom)
		return;
	g = ust_grow(f->memo_v, &f->cap_memo, f->nr_memo + 1, sizeof(*g), 64);
	if (!g)
		return;
	f->memo_v = g;
	g[f->nr_memo] = strdup(ust_sb_str(sb) + at);
	if (g[f->nr_memo] && !ust_hmap_put(&f->memo, key, f->nr_memo))
		f->nr_memo++;
	else
		free(g[f->nr_memo]);
}

void ust_fold_begin(const struct ust_fold *f, struct ust_sb *sb, const char *comm, int tid)
{
	size_t i;

	ust_sb_reset(sb);
	ust_sb_puts(sb, comm && comm[0] && strcmp(comm, "<...>") ? comm : "[unknown]");
	if (f->per_thread)
		ust_sb_printf(sb, "-%d", tid);
	if (sb->len && sb->buf)	/* the comm is the root frame: no ';' before it */
		for (i = 0; i < sb->len; i++)
			if (sb->buf[i] == ';' || sb->buf[i] == ' ')
				sb->buf[i] = '_';
}

/* ---- the samples --------------------------------------------------------- */

const struct ust_stitch_stack *ust_fold_user_stack(const struct ust_scan *sc,
						   const struct ust_scan_sample *s)
{
	const struct ust_stitch_stack *st = NULL;

	if (s->has_cookie) {
		/*
		 * The stack chosen for its request (cookies are reused once a
		 * CPU's counter wraps: the cookie alone may name another
		 * entry's); by cookie only where the request is not known.
		 */
		const struct ust_stitch_rq *rq = ust_stitch_req_at(&sc->st, s->cookie_off);

		st = rq ? ust_stitch_req_stack(&sc->st, rq) :
			  ust_stitch_lookup(&sc->st, s->cookie, s->buf);
	}
	if (st && st->pid != s->pid)
		st = NULL;	/* another task's: never shown as this one's */
	return st && !st->bad ? st : NULL;
}

void ust_fold_entry(struct ust_fold *f, struct ust_sb *sb, const struct ust_scan *sc,
		    const struct ust_fold_names *names, const struct ust_scan_sample *s,
		    const struct ust_stitch_stack *st, unsigned long count)
{
	const char *comm = s->comm != UINT32_MAX ? sc->names[s->comm] : NULL;
	unsigned int i;

	ust_fold_begin(f, sb, comm, s->pid);
	if (st)
		ust_fold_put_user(f, sb, names, ust_stitch_stack_key(st), st->frames, st->nr,
				  st->has_files);
	else if (s->has_cookie || s->ustack == UST_PERF_ENC_USTACK_LOST)
		ust_fold_put_name(sb, "[user stack lost]");
	for (i = s->nr_k; i > 0; i--) {
		uint32_t k = sc->kframes[s->kfirst + i - 1];
		const char *fn = k != UINT32_MAX ? sc->names[k] : NULL;

		ust_fold_put_name(sb, fn ? fn : "[unknown]");
		ust_sb_puts(sb, "_[k]");
	}
	if (ust_fold_add(f, ust_sb_str(sb), count))
		sb->oom = true;
}

int ust_fold_input_init(struct ust_fold_input *in, const char *path, const struct ust_scan *scan,
			const struct ust_fold_names *names, const char *weight, char *err,
			size_t errsz)
{
	const struct ust_scan_opts o = { .flags = UST_SCAN_SAMPLES, .weight = weight };
	int ret;

	if (weight && !weight[0])
		weight = NULL;
	memset(in, 0, sizeof(*in));
	/* A first pass made without the samples (or the weights): one with them. */
	if (!scan || !scan->has_samples ||
	    (weight && (!scan->weight || strcmp(scan->weight, weight)))) {
		in->own_scan = calloc(1, sizeof(*in->own_scan));
		if (!in->own_scan)
			return -ENOMEM;
		ret = ust_scan_file_opts(in->own_scan, path, &o, err, errsz);
		if (ret < 0) {
			free(in->own_scan);
			in->own_scan = NULL;
			return ret;
		}
		scan = in->own_scan;
	}
	in->scan = scan;
	in->names = names;
	if (!names || (!names->res && !names->sym)) {
		in->own.res = ust_res_new(NULL);
		in->own.sym = ust_sym_cache_new(NULL);
		in->names = &in->own;
		/* The mapping records of the trace name the files of user frames. */
		ust_report_add_mappings(in->own.res, scan);
	}
	return 0;
}

void ust_fold_input_fini(struct ust_fold_input *in)
{
	ust_res_free(in->own.res);
	ust_sym_cache_free(in->own.sym);
	if (in->own_scan) {
		ust_scan_fini(in->own_scan);
		free(in->own_scan);
	}
	memset(in, 0, sizeof(*in));
}

bool ust_fold_counts(const struct ust_scan *sc, const struct ust_scan_sample *s)
{
	return sc->nr_samples == sc->nr_events || !s->is_event;
}

int ust_fold_file(struct ust_fold *f, const char *path, const struct ust_scan *scan,
		  const struct ust_fold_names *names, char *err, size_t errsz)
{
	struct ust_fold_input in;
	struct ust_sb sb;
	unsigned long i;
	int ret;

	ret = ust_fold_input_init(&in, path, scan, names, NULL, err, errsz);
	if (ret < 0)
		return ret;
	ust_sb_init(&sb);
	for (i = 0; i < in.scan->nr_samples; i++) {
		const struct ust_scan_sample *s = &in.scan->samples[i];

		if (ust_fold_counts(in.scan, s))
			ust_fold_entry(f, &sb, in.scan, in.names, s, ust_fold_user_stack(in.scan, s), 1);
	}
	ust_sb_fini(&sb);
	ust_fold_input_fini(&in);
	return 0;
}

int ust_fold_write(const struct ust_fold *f, const char *dest, char *err, size_t errsz)
{
	bool to_stdout = !strcmp(dest, "1");
	FILE *out = stdout;
	long lines;

	if (!to_stdout && !(out = fopen(dest, "we"))) {
		int e = errno;

		snprintf(err, errsz, "cannot write %s: %s", dest, strerror(e));
		return -e;
	}
	fflush(stdout);
	/* A marker line: what follows it is the flame-graph input. */
	printf("# ustitch folded stacks: %lu samples, %zu distinct stacks%s%s\n",
	       ust_fold_total(f), f->nr, to_stdout ? "" : ", written to ", to_stdout ? "" : dest);
	lines = ust_fold_print(f, out);
	if (!to_stdout && fclose(out))
		lines = -EIO;
	fflush(stdout);
	if (lines < 0) {
		snprintf(err, errsz, "writing the folded stacks failed");
		return (int)lines;
	}
	return 0;
}
