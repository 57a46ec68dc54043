// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_fold.  A pass of its own over the file, per CPU of each buffer as the
 * first pass reads it: a sample, then on the same CPU its kernel_stack and
 * its cookie, make one stack.  The user frames come from the first pass's
 * stitch index (the stack was recorded later, maybe on another CPU).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-cmd/trace-cmd.h>

#include "ustitch/grow.h"
#include "ustitch/abi.h"
#include "ustitch/decode.h"
#include "ustitch/fold.h"
#include "ustitch/hmap.h"
#include "ustitch/perf_enc.h"
#include "ustitch/report.h"
#include "ustitch/resolve.h"
#include "ustitch/scan.h"
#include "ustitch/strbuf.h"
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
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return ust_hmap_mix(h);
}

struct ust_fold *ust_fold_new(void)
{
	struct ust_fold *f = calloc(1, sizeof(*f));

	if (f)
		ust_hmap_init(&f->by_hash);
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
	free(f);
}

int ust_fold_add(struct ust_fold *f, const char *stack, unsigned long count)
{
	uint64_t h = hash_str(stack), first;
	long i = -1, last = -1;

	if (ust_hmap_get(&f->by_hash, h, &first))
		for (i = (long)first; i >= 0; last = i, i = f->e[i].next)
			if (!strcmp(f->e[i].stack, stack))
				break;
	if (i < 0) {
		if (f->nr == f->cap) {
			void *n = ust_grow(f->e, &f->cap, f->nr + 1, sizeof(*f->e), 256);

			if (!n)
				return -1;
			f->e = n;
		}
		i = (long)f->nr;
		f->e[i].stack = strdup(stack);
		if (!f->e[i].stack)
			return -1;
		f->e[i].count = 0;
		f->e[i].next = -1;
		if (last >= 0)
			f->e[last].next = i;
		else if (ust_hmap_put(&f->by_hash, h, (uint64_t)i)) {
			free(f->e[i].stack);
			return -1;
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
		return -1;
	for (i = 0; i < f->nr; i++)
		v[i] = &f->e[i];
	qsort(v, f->nr, sizeof(*v), cmp_ent);
	for (i = 0; i < f->nr; i++) {
		if (fprintf(out, "%s %lu\n", v[i]->stack, v[i]->count) < 0) {
			free(v);
			return -1;
		}
	}
	free(v);
	return (long)f->nr;
}

unsigned long ust_fold_total(const struct ust_fold *f)
{
	return f->total;
}

/* ---- frames ------------------------------------------------------------ */

/* A frame name must not break the format: ';' separates, '\n' ends. */
static void put_name(struct ust_sb *sb, const char *name)
{
	ust_sb_puts(sb, ";");
	for (; *name; name++) {
		char c = *name == ';' || *name == '\n' ? '_' : *name;

		ust_sb_printf(sb, "%c", c);
	}
}

static void put_user_frame(struct ust_sb *sb, const struct ust_fold_names *n,
			   const struct ust_dec_frame *fr, bool is_return, bool has_files)
{
	struct ust_sym_frame sf[16];
	struct ust_res_hit hit = { 0 };
	struct ust_sym_file *file;
	const char *obj;
	char err[160], buf[300];
	int k;

	if (!has_files || !fr->ino || !n->res || ust_res_lookup(n->res, fr->kdev, fr->ino, &hit)) {
		put_name(sb, "[unknown]");
		return;
	}
	obj = strrchr(hit.path, '/');
	obj = obj ? obj + 1 : hit.path;
	file = n->sym ? ust_sym_cache_get(n->sym, hit.path, hit.build_id, hit.build_id_len,
					  err, sizeof(err)) : NULL;
	k = file ? ust_sym_lookup(file, fr->off, is_return, false, sf, 16) : -1;
	if (k > 0 && sf[k - 1].func) {
		put_name(sb, sf[k - 1].func);
		return;
	}
	snprintf(buf, sizeof(buf), "[%s]", obj);
	put_name(sb, buf);
}

/* ---- the pass ---------------------------------------------------------- */

struct ids {
	int sample, kstack;
	struct tep_format_field *ks_size, *ks_caller;
	struct ust_dec_layout lay;
};

struct pending {
	bool on;
	int pid;
	uint64_t ts;			/* its records share the sample's time */
	unsigned int ustack;		/* the sample's user_stack field */
	uint64_t *kips;
	unsigned int nr_k, cap_k;
	bool has_cookie;
	uint64_t cookie;
};

struct fold_ctx {
	struct ust_fold *f;
	struct tep_handle *tep;
	const struct ust_scan *scan;
	const struct ust_fold_names *names;
	struct ids ids;
	struct ust_sb sb;
	int buf;
};

static void flush(struct fold_ctx *c, struct pending *p)
{
	const struct ust_stitch_stack *st = NULL;
	const char *comm;
	unsigned int i;

	if (!p->on)
		return;
	p->on = false;
	ust_sb_reset(&c->sb);
	comm = tep_data_comm_from_pid(c->tep, p->pid);
	ust_sb_puts(&c->sb, comm && strcmp(comm, "<...>") ? comm : "[unknown]");
	if (c->sb.len && c->sb.buf)	/* the comm is the root frame: no ';' before it */
		for (i = 0; i < c->sb.len; i++)
			if (c->sb.buf[i] == ';' || c->sb.buf[i] == ' ')
				c->sb.buf[i] = '_';
	if (p->has_cookie && c->scan)
		st = ust_stitch_lookup(&c->scan->st, p->cookie, c->buf);
	if (st && st->pid != p->pid)
		st = NULL;	/* another task's: never shown as this one's */
	if (st && !st->bad) {
		for (i = st->nr; i > 0; i--)
			put_user_frame(&c->sb, c->names, &st->frames[i - 1], i - 1 > 0, st->has_files);
	} else if (p->has_cookie || p->ustack == UST_PERF_ENC_USTACK_LOST) {
		put_name(&c->sb, "[user stack lost]");
	}
	for (i = p->nr_k; i > 0; i--) {
		const char *fn = tep_find_function(c->tep, p->kips[i - 1]);
		char buf[300];

		snprintf(buf, sizeof(buf), "%s_[k]", fn ? fn : "[unknown]");
		put_name(&c->sb, buf);
	}
	ust_fold_add(c->f, ust_sb_str(&c->sb), 1);
}

static void take_kstack(struct fold_ctx *c, struct pending *p, struct tep_record *rec)
{
	const struct ids *ids = &c->ids;
	unsigned long long n;
	unsigned int i, max;

	if (tep_read_number_field(ids->ks_size, rec->data, &n) ||
	    (unsigned int)ids->ks_caller->offset > (unsigned int)rec->size)
		return;
	max = ((unsigned int)rec->size - (unsigned int)ids->ks_caller->offset) / 8;
	if (n > max)
		n = max;
	if (n > p->cap_k) {
		void *m = realloc(p->kips, n * sizeof(*p->kips));

		if (!m)
			return;
		p->kips = m;
		p->cap_k = (unsigned int)n;
	}
	for (i = 0; i < n; i++) {
		uint64_t a;

		memcpy(&a, (const uint8_t *)rec->data + ids->ks_caller->offset + i * 8, 8);
		if (a == UINT64_MAX)
			break;		/* the terminator of older kernels */
		p->kips[i] = a;
	}
	p->nr_k = i;
}

static void fold_record(struct fold_ctx *c, struct pending *p, struct tep_record *rec)
{
	const struct ids *ids = &c->ids;
	int id = tep_data_type(c->tep, rec), pid = ust_dec_pid(&ids->lay, rec->data, rec->size);
	char what[160];
	bool own = p->on && pid == p->pid && rec->ts == p->ts;

	if (own && id == ids->kstack && ids->ks_caller) {
		take_kstack(c, p, rec);
		return;
	}
	/* Only a sample that says a cookie follows takes one: any other
	 * cookie here is another event's. */
	if (own && id == ids->lay.cookie_id && p->ustack != UST_PERF_ENC_USTACK_NONE) {
		if (!ust_dec_cookie(&ids->lay, rec->data, rec->size, &p->cookie, what, sizeof(what)))
			p->has_cookie = true;
		flush(c, p);	/* the cookie ends a sample's records */
		return;
	}
	flush(c, p);
	if (id != ids->sample || id < 0)
		return;
	p->on = true;
	p->pid = pid;
	p->ts = rec->ts;
	p->nr_k = 0;
	p->has_cookie = false;
	p->ustack = 0;
	{
		struct tep_event *ev = tep_find_event(c->tep, id);
		struct tep_format_field *fu = ev ? tep_find_field(ev, "user_stack") : NULL;
		unsigned long long v;

		if (fu && !tep_read_number_field(fu, rec->data, &v))
			p->ustack = (unsigned int)v;
	}
}

static void fold_handle(struct fold_ctx *c, struct tracecmd_input *h)
{
	struct tep_event *ev;
	char err[160];
	int cpu, cpus;

	c->tep = tracecmd_get_tep(h);
	memset(&c->ids, 0, sizeof(c->ids));
	ust_dec_layout_init(&c->ids.lay, c->tep, err, sizeof(err));
	ev = tep_find_event_by_name(c->tep, UST_ABI_SYSTEM_USTITCH, UST_PERF_EV_SAMPLE);
	c->ids.sample = ev ? ev->id : -1;
	ev = tep_find_event_by_name(c->tep, "ftrace", "kernel_stack");
	c->ids.kstack = ev ? ev->id : -1;
	if (ev) {
		c->ids.ks_size = tep_find_field(ev, "size");
		c->ids.ks_caller = tep_find_field(ev, "caller");
		if (!c->ids.ks_size || !c->ids.ks_caller)
			c->ids.kstack = -1;
	}
	if (c->ids.sample < 0)
		return;
	cpus = tep_get_cpus(c->tep);
	for (cpu = 0; cpu < cpus; cpu++) {
		struct pending p = { 0 };
		struct tep_record *rec;

		for (rec = tracecmd_read_cpu_first(h, cpu); rec; rec = tracecmd_read_data(h, cpu)) {
			if (rec->size >= 8)
				fold_record(c, &p, rec);
			tracecmd_free_record(rec);
		}
		flush(c, &p);
		free(p.kips);
	}
}

int ust_fold_file(struct ust_fold *f, const char *path, const struct ust_scan *scan,
		  const struct ust_fold_names *names, char *err, size_t errlen)
{
	struct ust_fold_names own = { 0 };
	struct fold_ctx c = { .f = f, .scan = scan, .names = names };
	struct ust_scan *sc = NULL;
	struct tracecmd_input *h;
	int i, n;

	if (!scan) {
		sc = calloc(1, sizeof(*sc));
		if (!sc || ust_scan_file(sc, path, err, errlen)) {
			free(sc);
			return -1;
		}
		c.scan = sc;
	}
	if (!names || (!names->res && !names->sym)) {
		own.res = ust_res_new(NULL);
		own.sym = ust_sym_cache_new(NULL);
		c.names = &own;
	}
	h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!h) {
		snprintf(err, errlen, "cannot open %s", path);
		goto fail;
	}
	/* The mapping records of the trace name the files of user frames. */
	ust_report_add_mappings(own.res, c.scan);
	ust_sb_init(&c.sb);
	c.buf = 0;
	fold_handle(&c, h);
	n = tracecmd_buffer_instances(h);
	for (i = 0; i < n; i++) {
		struct tracecmd_input *ih = tracecmd_buffer_instance_handle(h, i);

		if (!ih)
			continue;
		c.buf = i + 1;		/* ust_scan's numbering of buffers */
		fold_handle(&c, ih);
		tracecmd_close(ih);
	}
	tracecmd_close(h);
	ust_sb_fini(&c.sb);
	ust_res_free(own.res);
	ust_sym_cache_free(own.sym);
	if (sc) {
		ust_scan_fini(sc);
		free(sc);
	}
	return 0;
fail:
	ust_res_free(own.res);
	ust_sym_cache_free(own.sym);
	if (sc) {
		ust_scan_fini(sc);
		free(sc);
	}
	return -1;
}

int ust_fold_report(const char *dest, const char *path, const struct ust_scan *scan,
		    const struct ust_fold_names *names, char *err, size_t errlen)
{
	struct ust_fold *f = ust_fold_new();
	bool to_stdout = !strcmp(dest, "1");
	FILE *out = stdout;
	long lines;
	int ret = -1;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (ust_fold_file(f, path, scan, names, err, errlen))
		goto out;
	if (!to_stdout && !(out = fopen(dest, "we"))) {
		snprintf(err, errlen, "cannot write %s", dest);
		goto out;
	}
	fflush(stdout);
	/* A marker line: what follows it is the flame-graph input. */
	printf("# ustitch folded stacks: %lu samples, %zu distinct stacks%s%s\n",
	       ust_fold_total(f), f->nr, to_stdout ? "" : ", written to ", to_stdout ? "" : dest);
	lines = ust_fold_print(f, out);
	if (!to_stdout && fclose(out))
		lines = -1;
	fflush(stdout);
	if (lines < 0)
		snprintf(err, errlen, "writing the folded stacks failed");
	else
		ret = 0;
out:
	ust_fold_free(f);
	return ret;
}
