// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_scan: first pass.  Each CPU of each buffer is read in file order:
 * "the event just before the cookie on that CPU and buffer" needs no
 * global ordering, and per-CPU reads are the cheapest way through
 * libtracecmd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <trace-cmd/trace-cmd.h>

#include "ustitch/abi.h"
#include "ustitch/grow.h"
#include "ustitch/perf_enc.h"
#include "ustitch/progress.h"
#include "ustitch/scan.h"
#include "scan_unmap.h"

struct last_event {
	int id, pid;
	uint64_t off, ts;
	bool has_weight;	/* with ust_scan.weight: the event has that field */
	uint64_t weight;
};

/*
 * A cookie written into another buffer than its event (the BPF backport
 * puts them into "ustitch") finds its requester across buffers: the same
 * CPU and task, the nearest event at or before it.  The buffers of a CPU
 * are read merged in time order, and only the last event per (task,
 * buffer) of the CPU is kept, with its rank among the CPU's events.
 */
struct task_last {
	struct last_event e;
	uint64_t seq;
};

/* A request whose requester is looked for across buffers once every event
 * of its CPU at or before its time was read. */
struct pending {
	struct ust_stitch_req r;
	struct last_event req;	/* the requester, once matched (id -1: none) */
};

struct xcpu {
	struct tep_handle *tep;		/* names the events of requests matched across */
	struct ust_hmap by_task;	/* mix(pid, buf) -> lasts index */
	struct task_last *lasts;
	size_t nr_lasts, cap_lasts;
	uint64_t seq;			/* events of the CPU read so far */
	struct pending *pend;
	size_t nr_pend, cap_pend;
	int nr_bufs;
};

/* How far back (in events of any task) the nearest event may lie. */
#define CROSS_WINDOW	64

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The first up to @size bytes of @path, a regular file; -1 when unreadable. */
static ssize_t read_head(const char *path, void *buf, size_t size)
{
	struct stat stbuf;
	ssize_t n;
	int fd;

	if (stat(path, &stbuf) || !S_ISREG(stbuf.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	return n;
}

static const char tracedat_magic[10] = "\027\010\104tracing";

int ust_scan_is_tracedat(const char *path)
{
	char buf[sizeof(tracedat_magic)];

	return read_head(path, buf, sizeof(buf)) == (ssize_t)sizeof(buf) &&
	       !memcmp(buf, tracedat_magic, sizeof(buf));
}

int ust_scan_page_size(const char *path)
{
	/* magic, version string, endian byte, long size byte, page size */
	uint8_t buf[64];
	ssize_t n = read_head(path, buf, sizeof(buf));
	const uint8_t *v;
	uint32_t ps;

	if (n < (ssize_t)sizeof(tracedat_magic) || memcmp(buf, tracedat_magic, sizeof(tracedat_magic)))
		return -EINVAL;
	v = memchr(buf + sizeof(tracedat_magic), '\0', (size_t)n - sizeof(tracedat_magic));
	if (!v || v + 1 + 2 + 4 > buf + n)
		return -EINVAL;
	memcpy(&ps, v + 3, 4);
	if ((v[1] != 0) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		ps = __builtin_bswap32(ps);
	if (!ps || ps > (1U << 30) || (ps & (ps - 1)))
		return -EINVAL;
	return (int)ps;
}

static int add_mapping(struct ust_scan *sc, const struct ust_dec_mapping *m, int buf, int cpu,
		       uint64_t rec_off)
{
	struct ust_scan_mapping *e;

	if (sc->nr_maps == sc->cap_maps) {
		void *n = ust_grow(sc->maps, &sc->cap_maps, sc->nr_maps + 1, sizeof(*sc->maps), 16);

		if (!n)
			return -1;
		sc->maps = n;
	}
	e = &sc->maps[sc->nr_maps];
	memset(e, 0, sizeof(*e));
	e->buf = buf;
	e->cpu = cpu;
	e->rec_off = rec_off;
	e->kdev = m->kdev;
	e->ino = m->ino;
	e->build_id_len = m->build_id_len;
	if (m->build_id_len)
		memcpy(e->build_id, m->build_id, m->build_id_len);
	e->path = strdup(m->path);
	if (!e->path)
		return -1;
	sc->nr_maps++;
	return 0;
}

static uint64_t task_key(int pid, int buf)
{
	return ust_hmap_mix(((uint64_t)(uint32_t)pid << 16) ^ (uint64_t)(uint16_t)buf);
}

static void note_event(struct xcpu *x, const struct last_event *e, int buf)
{
	uint64_t k = task_key(e->pid, buf), i;

	if (!ust_hmap_get(&x->by_task, k, &i)) {
		void *n = ust_grow(x->lasts, &x->cap_lasts, x->nr_lasts + 1, sizeof(*x->lasts), 64);

		if (!n || ust_hmap_put(&x->by_task, k, x->nr_lasts))
			return;
		x->lasts = n;
		i = x->nr_lasts++;
	}
	x->lasts[i] = (struct task_last){ .e = *e, .seq = x->seq };
	x->seq++;
}

/*
 * @r's requester in another buffer: of the CPU's events at or before it
 * (all read by now), the last of its task in a buffer not its own, if it
 * is among the CROSS_WINDOW last events of the CPU: into @r, and whole
 * into *@req.
 */
static void match_across(struct xcpu *x, struct ust_stitch_req *r, struct last_event *req)
{
	const struct task_last *best = NULL;
	uint64_t i;
	int b;

	for (b = 0; b < x->nr_bufs; b++) {
		const struct task_last *t;

		if (b == r->buf || !ust_hmap_get(&x->by_task, task_key(r->pid, b), &i))
			continue;
		t = &x->lasts[i];
		if (!best || t->seq > best->seq)
			best = t;
	}
	if (!best || best->seq + CROSS_WINDOW < x->seq)
		return;
	*req = best->e;
	r->req_id = req->id;
	r->req_pid = r->pid;
	r->req_off = req->off;
	r->req_ts = req->ts;
}

static void add_request(struct ust_scan *sc, struct tep_handle *tep, const struct ust_stitch_req *r,
			const struct last_event *w);

/* Resolve the pending requests older than @ts (all: UINT64_MAX). */
static void flush_pending(struct ust_scan *sc, struct xcpu *x, uint64_t ts)
{
	size_t i, k = 0;

	for (i = 0; i < x->nr_pend; i++) {
		if (x->pend[i].r.ts >= ts) {
			x->pend[k++] = x->pend[i];
			continue;
		}
		match_across(x, &x->pend[i].r, &x->pend[i].req);
		add_request(sc, x->tep, &x->pend[i].r, &x->pend[i].req);
	}
	x->nr_pend = k;
}

static void add_pending(struct ust_scan *sc, struct xcpu *x, const struct ust_stitch_req *r)
{
	void *n = ust_grow(x->pend, &x->cap_pend, x->nr_pend + 1, sizeof(*x->pend), 16);

	if (!n) {
		add_request(sc, x->tep, r, NULL);
		return;
	}
	x->pend = n;
	x->pend[x->nr_pend++] = (struct pending){ .r = *r, .req = { .id = -1, .pid = -1 } };
}

/* ---- samples (UST_SCAN_SAMPLES) ----------------------------------------- */

/* The event ids and fields of one buffer's samples and kernel stacks. */
struct sample_ids {
	int sample, kstack;		/* -1: none */
	struct tep_format_field *ustack, *ks_size, *ks_caller, *period, *event;
};

/* The sample whose records a CPU is reading: they share its task and time. */
struct sample_on {
	bool on;
	uint64_t ts;
	unsigned long idx;	/* in sc->samples */
};

static void sample_ids_init(struct sample_ids *ids, struct tep_handle *tep)
{
	struct tep_event *ev = tep_find_event_by_name(tep, UST_ABI_SYSTEM_USTITCH, UST_PERF_ENC_EV_SAMPLE);

	memset(ids, 0, sizeof(*ids));
	ids->sample = ev ? ev->id : -1;
	ids->ustack = ev ? tep_find_field(ev, "user_stack") : NULL;
	ids->period = ev ? tep_find_field(ev, "period") : NULL;
	ids->event = ev ? tep_find_field(ev, "event") : NULL;
	ev = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
	ids->kstack = ev ? ev->id : -1;
	if (ev) {
		ids->ks_size = tep_find_field(ev, "size");
		ids->ks_caller = tep_find_field(ev, "caller");
		if (!ids->ks_size || !ids->ks_caller)
			ids->kstack = -1;
	}
}

/* @name's index in sc->names, added if new; UINT32_MAX when out of memory. */
static uint32_t intern(struct ust_scan *sc, const char *name)
{
	uint64_t h = ust_hmap_str(name), i;
	bool hashed = ust_hmap_get(&sc->name_idx, h, &i);

	if (hashed && !strcmp(sc->names[i], name))
		return (uint32_t)i;
	if (sc->nr_names == sc->cap_names) {
		void *n = ust_grow(sc->names, &sc->cap_names, sc->nr_names + 1, sizeof(*sc->names), 256);

		if (!n)
			return UINT32_MAX;
		sc->names = n;
	}
	sc->names[sc->nr_names] = strdup(name);
	if (!sc->names[sc->nr_names])
		return UINT32_MAX;
	/* Another name with the same key keeps it: this one is only not shared. */
	if (!hashed)
		ust_hmap_put(&sc->name_idx, h, sc->nr_names);
	return (uint32_t)sc->nr_names++;
}

/* A new entry of sc->samples, zeroed; NULL when out of memory. */
static struct ust_scan_sample *new_sample(struct ust_scan *sc)
{
	struct ust_scan_sample *s;

	if (sc->nr_samples == sc->cap_samples) {
		void *n = ust_grow(sc->samples, &sc->cap_samples, sc->nr_samples + 1,
				   sizeof(*sc->samples), 256);

		if (!n)
			return NULL;
		sc->samples = n;
	}
	s = &sc->samples[sc->nr_samples++];
	memset(s, 0, sizeof(*s));
	s->kfirst = (uint32_t)sc->nr_kframes;
	s->comm = UINT32_MAX;
	s->event = UINT32_MAX;
	return s;
}

/* Does @f lie inside a record of @size bytes? */
static bool field_in(const struct tep_format_field *f, int size)
{
	return f->offset >= 0 && f->size >= 0 && f->offset + f->size <= size;
}

/* A sample's ftrace/kernel_stack: its frames' names (a second one replaces them). */
static void sample_kstack(struct ust_scan *sc, const struct sample_ids *ids, struct tep_handle *tep,
			  struct ust_scan_sample *s, struct tep_record *rec, int size)
{
	unsigned long long n;
	unsigned int i, max;

	if (!field_in(ids->ks_size, size) || tep_read_number_field(ids->ks_size, rec->data, &n) ||
	    (unsigned int)ids->ks_caller->offset > (unsigned int)size)
		return;
	max = ((unsigned int)size - (unsigned int)ids->ks_caller->offset) / 8;
	if (n > max)
		n = max;
	/* Its frames end the array, unless another buffer's sample of the
	 * CPU came between (merged reading): then they start anew there. */
	if (s->kfirst + s->nr_k == sc->nr_kframes)
		sc->nr_kframes = s->kfirst;
	else
		s->kfirst = (uint32_t)sc->nr_kframes;
	s->nr_k = 0;
	for (i = 0; i < n; i++) {
		const char *fn;
		uint64_t a;

		memcpy(&a, (const uint8_t *)rec->data + ids->ks_caller->offset + i * 8, 8);
		if (a == UINT64_MAX)
			break;		/* the terminator of older kernels */
		if (sc->nr_kframes == sc->cap_kframes) {
			void *m = ust_grow(sc->kframes, &sc->cap_kframes, sc->nr_kframes + 1,
					   sizeof(*sc->kframes), 1024);

			if (!m)
				return;
			sc->kframes = m;
		}
		fn = tep_find_function(tep, a);
		sc->kframes[sc->nr_kframes++] = fn ? intern(sc, fn) : UINT32_MAX;
		s->nr_k++;
	}
}

/*
 * A sample, then on the same CPU its kernel_stack and its cookie (same task,
 * same time), make one stack; any other record ends the sample.
 */
static void scan_sample(struct ust_scan *sc, const struct sample_ids *ids,
			const struct ust_dec_layout *lay, int buf, int cpu, struct tep_record *rec,
			int size, int id, int pid, struct sample_on *cur)
{
	struct ust_scan_sample *s = cur->on ? &sc->samples[cur->idx] : NULL;
	bool own = s && pid == s->pid && rec->ts == cur->ts;
	unsigned long long v;
	const char *comm;
	char what[160];

	if (own && id == ids->kstack && ids->ks_caller) {
		sample_kstack(sc, ids, lay->tep, s, rec, size);
		return;
	}
	/* Only a sample that says a cookie follows takes one: any other
	 * cookie here is another event's. */
	cur->on = false;
	if (own && id == lay->cookie_id && s->ustack != UST_PERF_ENC_USTACK_NONE) {
		if (!ust_dec_cookie(lay, rec->data, size, &s->cookie, what, sizeof(what))) {
			s->has_cookie = true;
			s->cookie_off = rec->offset;
		}
		return;		/* the cookie ends a sample's records */
	}
	if (id != ids->sample || id < 0)
		return;
	s = new_sample(sc);
	if (!s)
		return;
	cur->idx = sc->nr_samples - 1;
	s->pid = pid;
	s->buf = buf;
	s->cpu = cpu;
	s->rec_off = rec->offset;
	comm = tep_data_comm_from_pid(lay->tep, pid);
	s->comm = comm ? intern(sc, comm) : UINT32_MAX;
	if (ids->ustack && field_in(ids->ustack, size) && !tep_read_number_field(ids->ustack, rec->data, &v))
		s->ustack = (unsigned int)v;
	s->ts = rec->ts;
	if (ids->period && field_in(ids->period, size) && !tep_read_number_field(ids->period, rec->data, &v))
		s->period = v;
	if (ids->event && field_in(ids->event, size)) {
		/* A __data_loc string: offset in the low 16 bits, length above. */
		uint32_t loc = 0;
		unsigned int off, len;
		char name[64];

		if (ids->event->size == 4)
			memcpy(&loc, (const char *)rec->data + ids->event->offset, sizeof(loc));
		off = loc & 0xffff;
		len = loc >> 16;

		if (len && off + len <= (unsigned int)size && len < sizeof(name)) {
			memcpy(name, (const char *)rec->data + off, len);
			name[len] = '\0';
			s->event = intern(sc, name);
		}
	}
	cur->on = true;
	cur->ts = rec->ts;
}

/*
 * A request whose requester is known, into the stitch index; with
 * UST_SCAN_SAMPLES an event's (not a sample's: its own records made
 * one) is one more entry of sc->samples, is_event, named after the event,
 * for the profiles of event recordings (system calls, lock_held()).
 */
static void add_request(struct ust_scan *sc, struct tep_handle *tep, const struct ust_stitch_req *r,
			const struct last_event *w)
{
	struct tep_event *ev;
	struct ust_scan_sample *s;
	const char *comm;

	ust_stitch_add_request(&sc->st, r);
	if (!sc->has_samples || r->req_id < 0 || r->req_pid != r->pid || !tep)
		return;
	ev = tep_find_event(tep, r->req_id);
	if (!ev || !ev->name || (ev->system && !strcmp(ev->system, UST_ABI_SYSTEM_USTITCH) &&
				 !strcmp(ev->name, UST_PERF_ENC_EV_SAMPLE)))
		return;
	s = new_sample(sc);
	if (!s)
		return;
	s->pid = r->pid;
	s->buf = r->buf;
	s->cpu = r->cpu;
	s->rec_off = r->rec_off;
	s->ts = r->req_ts;
	s->has_cookie = true;
	s->cookie = r->cookie;
	s->cookie_off = r->rec_off;
	s->ustack = UST_PERF_ENC_USTACK_DEFERRED;
	comm = tep_data_comm_from_pid(tep, r->pid);
	s->comm = comm ? intern(sc, comm) : UINT32_MAX;
	s->event = intern(sc, ev->name);
	s->is_event = true;
	if (w && w->has_weight) {
		s->has_weight = true;
		s->weight = w->weight;
	}
	sc->nr_events++;
}

/* ---- the pass ------------------------------------------------------------ */

struct buf_state {
	struct tracecmd_input *h;
	struct ust_dec_layout lay;
	struct sample_ids sids;
	int kstack_id, cpus;
	struct last_event last;		/* of the CPU being read */
	struct sample_on sample;
	unsigned long long prev_off;	/* file offset of its last record (next_record) */
	const struct ust_scan_maps *maps;	/* the file's mappings before the open */
	const char *weight_name;		/* ust_scan.weight */
	struct scan_progress *prog;	/* UST_SCAN_PROGRESS, else NULL */
	unsigned long long page;	/* the page of its last record, for @prog */
	int weight_id;			/* the event whose weight field is weight_f (-1: none yet) */
	struct tep_format_field *weight_f;
};

/* The weight field's value in @rec (an event of type @id): false when it has none. */
static bool event_weight(struct buf_state *b, struct tep_record *rec, int id, int size, uint64_t *v)
{
	unsigned long long n;

	if (id != b->weight_id) {
		struct tep_event *ev = tep_find_event(b->lay.tep, id);

		b->weight_id = id;
		b->weight_f = ev ? tep_find_field(ev, b->weight_name) : NULL;
	}
	if (!b->weight_f || b->weight_f->offset < 0 || b->weight_f->size < 0 ||
	    b->weight_f->offset + b->weight_f->size > size ||
	    tep_read_number_field(b->weight_f, rec->data, &n))
		return false;
	*v = n;
	return true;
}

/* How far the pass is: bytes of the record pages read, of the file's size. */
struct scan_progress {
	struct ust_progress line;
	uint64_t done;
	unsigned int page_size;
};

/* A record of a page not seen just before: one more page read. */
static void count_page(struct buf_state *b, const struct tep_record *rec)
{
	unsigned long long pg;

	if (!b->prog || !rec)
		return;
	pg = rec->offset / b->prog->page_size;
	if (pg == b->page)
		return;
	b->page = pg;
	b->prog->done += b->prog->page_size;
	ust_progress_update(&b->prog->line, b->prog->done);
}

/* A pass shorter than this shows no progress line. */
#define PROGRESS_DELAY_S	0.5

/* Records between two drops of the pages read (ust_scan_maps_drop_new). */
#define DROP_EVERY	65536

/*
 * The record after the last one of @b on @cpu, NULL at the end.  On a
 * corrupt page libtracecmd 1.3.1 can hand out the same zero-length record
 * again and again at one offset (trace-cmd report itself then never ends):
 * a record that does not move past the last one ends the CPU.
 */
static struct tep_record *next_record(struct buf_state *b, int cpu)
{
	struct tep_record *rec = tracecmd_read_data(b->h, cpu);

	if (rec && rec->offset <= b->prev_off) {
		tracecmd_free_record(rec);
		return NULL;
	}
	if (rec)
		b->prev_off = rec->offset;
	count_page(b, rec);
	return rec;
}

/* The first record of @b on @cpu. */
static struct tep_record *first_record(struct buf_state *b, int cpu)
{
	struct tep_record *rec = tracecmd_read_cpu_first(b->h, cpu);

	b->prev_off = rec ? rec->offset : 0;
	count_page(b, rec);
	return rec;
}

static void buf_state_init(struct buf_state *b, struct tracecmd_input *h,
			   const struct ust_scan_maps *maps)
{
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct tep_event *ks;
	char err[160];

	memset(b, 0, sizeof(*b));
	b->h = h;
	b->maps = maps;
	b->weight_id = -1;
	ust_dec_layout_init(&b->lay, tep, err, sizeof(err));
	sample_ids_init(&b->sids, tep);
	ks = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
	b->kstack_id = ks ? ks->id : -1;
	b->cpus = tep_get_cpus(tep);
}

/* @x: the CPU's merged state when looking across buffers, else NULL. */
static void scan_record(struct ust_scan *sc, struct buf_state *b, int buf, int cpu,
			struct tep_record *rec, struct xcpu *x)
{
	const struct ust_dec_layout *lay = &b->lay;
	struct last_event *last = &b->last;
	char what[160];
	int id, pid, size;

	sc->records++;
	/* The pages read stay resident until the close otherwise: by then the
	 * file's size, on top of what trace-cmd's own handle maps. */
	if (!(sc->records % DROP_EVERY))
		ust_scan_maps_drop_new(b->maps);
	if (rec->missed_events)
		ust_stitch_add_lost(&sc->st, rec->ts, rec->missed_events);
	/* A record running past its page is not read at all (the printing
	 * pass says why at its line). */
	size = ust_dec_rec_size(rec, sc->page_size, what, sizeof(what));
	if (size < 8)
		return;
	id = tep_data_type(lay->tep, rec);
	pid = ust_dec_pid(lay, rec->data, size);
	if (sc->has_samples)
		scan_sample(sc, &b->sids, lay, buf, cpu, rec, size, id, pid, &b->sample);

	if (id == lay->cookie_id) {
		struct ust_stitch_req r = {
			.rec_off = rec->offset, .ts = rec->ts, .cpu = cpu, .buf = buf,
			.pid = pid, .req_id = last->id, .req_pid = last->pid,
			.req_off = last->off, .req_ts = last->ts,
		};

		if (ust_dec_cookie(lay, rec->data, size, &r.cookie, what, sizeof(what)))
			return;	/* the printing pass reports it at its own line */
		/*
		 * An event has one cookie, by its own task.  In the "ustitch"
		 * buffer perf-captured events (lock_held()) sit beside cookies
		 * of other buffers' events: those look across buffers.
		 */
		if (last->pid != pid) {
			r.req_id = -1;
			r.req_pid = -1;
		}
		if (r.req_id < 0 && x)
			add_pending(sc, x, &r);
		else
			add_request(sc, lay->tep, &r, r.req_id >= 0 ? last : NULL);
		last->id = -1;
		last->pid = -1;
	} else if (id == lay->stack_id) {
		struct ust_dec_stack s;

		if (ust_dec_stack(lay, rec->data, size, &s, what, sizeof(what)))
			ust_stitch_add_stack(&sc->st, buf, cpu, rec->ts, rec->offset, pid,
					     &s, lay->has_files, what);
		else
			ust_stitch_add_stack(&sc->st, buf, cpu, rec->ts, rec->offset, pid,
					     &s, lay->has_files, NULL);
	} else if (id == lay->flags_id) {
		uint64_t cookie;
		uint32_t flags;

		if (!ust_dec_stack_flags(lay, rec->data, size, &cookie, &flags))
			ust_stitch_add_flags(&sc->st, buf, cpu, rec->offset, cookie, flags);
	} else if (id == lay->mapping_id) {
		struct ust_dec_mapping m;

		if (!ust_dec_mapping(lay, rec->data, size, &m, what, sizeof(what)))
			add_mapping(sc, &m, buf, cpu, rec->offset);
	} else if (id != b->kstack_id) {
		/* kernel_stack sits between an event and its cookie: skip it. */
		last->id = id;
		last->pid = pid;
		last->off = rec->offset;
		last->ts = rec->ts;
		last->has_weight = sc->weight && event_weight(b, rec, id, size, &last->weight);
		if (x)
			note_event(x, last, buf);
	}
}

/* One buffer, CPU after CPU in file order: no buffer to look across. */
static void scan_buffer(struct ust_scan *sc, struct buf_state *b, int buf)
{
	int cpu;

	for (cpu = 0; cpu < b->cpus; cpu++) {
		struct tep_record *rec;

		b->last = (struct last_event){ .id = -1, .pid = -1 };
		memset(&b->sample, 0, sizeof(b->sample));
		for (rec = first_record(b, cpu); rec; rec = next_record(b, cpu)) {
			scan_record(sc, b, buf, cpu, rec, NULL);
			tracecmd_free_record(rec);
		}
	}
}

/*
 * Every buffer at once, CPU after CPU: a CPU's records of all buffers
 * merged in time order (at equal times the lower buffer first).  What is
 * kept besides the index is the last event per (task, buffer) of the CPU.
 */
static int scan_merged(struct ust_scan *sc, struct buf_state *bs, int nr)
{
	struct tep_record **head = calloc((size_t)nr, sizeof(*head));
	struct xcpu x;
	int cpu, cpus = 0, b;

	if (!head)
		return -1;
	memset(&x, 0, sizeof(x));
	x.nr_bufs = nr;
	x.tep = bs[0].h ? tracecmd_get_tep(bs[0].h) : NULL;
	ust_hmap_init(&x.by_task);
	for (b = 0; b < nr; b++)
		if (bs[b].h && bs[b].cpus > cpus)
			cpus = bs[b].cpus;
	for (cpu = 0; cpu < cpus; cpu++) {
		for (b = 0; b < nr; b++) {
			bs[b].last = (struct last_event){ .id = -1, .pid = -1 };
			memset(&bs[b].sample, 0, sizeof(bs[b].sample));
			head[b] = bs[b].h && cpu < bs[b].cpus ?
				  first_record(&bs[b], cpu) : NULL;
		}
		ust_hmap_fini(&x.by_task);
		ust_hmap_init(&x.by_task);
		x.nr_lasts = 0;
		x.seq = 0;
		for (;;) {
			int min = -1;

			for (b = 0; b < nr; b++)
				if (head[b] && (min < 0 || head[b]->ts < head[min]->ts))
					min = b;
			if (min < 0)
				break;
			/* Every event at or before a pending request's time is in. */
			if (x.nr_pend)
				flush_pending(sc, &x, head[min]->ts);
			scan_record(sc, &bs[min], min, cpu, head[min], &x);
			tracecmd_free_record(head[min]);
			head[min] = next_record(&bs[min], cpu);
		}
		flush_pending(sc, &x, UINT64_MAX);
	}
	free(head);
	free(x.lasts);
	free(x.pend);
	ust_hmap_fini(&x.by_task);
	return 0;
}

/* The order of a buffer-major pass: buffer, CPU, then place in the file. */
static int cmp_pos(int xb, int xc, uint64_t xo, int yb, int yc, uint64_t yo)
{
	if (xb != yb)
		return xb < yb ? -1 : 1;
	if (xc != yc)
		return xc < yc ? -1 : 1;
	return xo < yo ? -1 : xo > yo;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct ust_scan_mapping *x = a, *y = b;

	return cmp_pos(x->buf, x->cpu, x->rec_off, y->buf, y->cpu, y->rec_off);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct ust_scan_sample *x = a, *y = b;

	return cmp_pos(x->buf, x->cpu, x->rec_off, y->buf, y->cpu, y->rec_off);
}

int ust_scan_file(struct ust_scan *sc, const char *path, unsigned int flags, char *err,
		  size_t errsz)
{
	const struct ust_scan_opts o = { .flags = flags };

	return ust_scan_file_opts(sc, path, &o, err, errsz);
}

int ust_scan_file_opts(struct ust_scan *sc, const char *path, const struct ust_scan_opts *o,
		       char *err, size_t errsz)
{
	unsigned int flags = o->flags;
	struct buf_state *bs;
	struct tracecmd_input *h;
	struct ust_scan_maps maps;
	struct scan_progress prog = { 0 };
	struct stat stbuf;
	double t0 = now();
	bool any_flags = false;
	char what[160];
	int i, n;

	memset(sc, 0, sizeof(*sc));
	ust_stitch_init(&sc->st);
	ust_hmap_init(&sc->name_idx);
	sc->has_samples = flags & UST_SCAN_SAMPLES;
	if (stat(path, &stbuf) || !S_ISREG(stbuf.st_mode)) {
		snprintf(err, errsz, "cannot scan %s: not a regular file", path);
		return -EINVAL;
	}
	sc->dev = stbuf.st_dev;
	sc->ino = stbuf.st_ino;
	sc->page_size = ust_scan_page_size(path);
	if (sc->page_size < 0)
		sc->page_size = 0;
	ust_scan_maps_before(&maps, stbuf.st_dev, stbuf.st_ino);
	/* No plugins: this handle must not load ustitch into itself. */
	h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!h) {
		ust_scan_maps_unmap_new(&maps);
		snprintf(err, errsz, "cannot scan %s: libtracecmd could not open it", path);
		return -EIO;
	}
	sc->path = strdup(path);
	n = tracecmd_buffer_instances(h);
	sc->buf_names = calloc((size_t)n + 1, sizeof(char *));
	bs = calloc((size_t)n + 1, sizeof(*bs));
	if (!sc->path || !sc->buf_names || !bs) {
		free(bs);
		tracecmd_close(h);
		ust_scan_maps_unmap_new(&maps);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	sc->nr_bufs = n + 1;
	sc->buf_names[0] = strdup("");
	/* Out of memory for it: no weights (the profile then lacks that type). */
	if (sc->has_samples && o->weight && o->weight[0])
		sc->weight = strdup(o->weight);
	if (flags & UST_SCAN_PROGRESS) {
		const char *base = strrchr(path, '/');

		snprintf(what, sizeof(what), "ustitch: first pass over %s", base ? base + 1 : path);
		prog.page_size = sc->page_size > 0 ? (unsigned int)sc->page_size : 4096;
		ust_progress_start(&prog.line, what, (uint64_t)stbuf.st_size, PROGRESS_DELAY_S);
	}
	/*
	 * Only BPF-made cookies sit in another buffer than their events, and
	 * only in one named "ustitch": without it each buffer is read alone.
	 */
	for (i = 0; i < n; i++) {
		const char *name = tracecmd_buffer_instance_name(h, i);

		if (name && !strcmp(name, "ustitch"))
			sc->cross_buffer = true;
	}
	buf_state_init(&bs[0], h, &maps);
	bs[0].weight_name = sc->weight;
	any_flags = bs[0].lay.flags_id >= 0;
	bs[0].prog = flags & UST_SCAN_PROGRESS ? &prog : NULL;
	if (!sc->cross_buffer)
		scan_buffer(sc, &bs[0], 0);
	for (i = 0; i < n; i++) {
		struct tracecmd_input *ih = tracecmd_buffer_instance_handle(h, i);
		const char *name = tracecmd_buffer_instance_name(h, i);

		sc->buf_names[i + 1] = strdup(name ? name : "?");
		if (!ih)
			continue;
		buf_state_init(&bs[i + 1], ih, &maps);
		bs[i + 1].weight_name = sc->weight;
		any_flags |= bs[i + 1].lay.flags_id >= 0;
		bs[i + 1].prog = bs[0].prog;
		if (sc->cross_buffer)
			continue;	/* read together below */
		scan_buffer(sc, &bs[i + 1], i + 1);
		tracecmd_close(ih);
		bs[i + 1].h = NULL;
	}
	if (sc->cross_buffer) {
		scan_merged(sc, bs, n + 1);
		for (i = 1; i <= n; i++)
			if (bs[i].h)
				tracecmd_close(bs[i].h);
		/* The order of a buffer-major pass, as without merging. */
		if (sc->nr_maps > 1)
			qsort(sc->maps, sc->nr_maps, sizeof(*sc->maps), cmp_mapping);
		if (sc->nr_samples > 1)
			qsort(sc->samples, sc->nr_samples, sizeof(*sc->samples), cmp_sample);
	}
	free(bs);
	tracecmd_close(h);
	ust_progress_end(&prog.line);
	/* libtracecmd's leftovers would hold every page read resident. */
	ust_scan_maps_unmap_new(&maps);
	/* No stack_flags event, which BPF writes with every stack: the kernel's. */
	sc->st.kernel_stacks = !any_flags;
	ust_stitch_finish(&sc->st, &sc->stats);
	sc->seconds = now() - t0;
	return 0;
}

void ust_scan_fini(struct ust_scan *sc)
{
	unsigned long i;
	int b;

	for (i = 0; i < sc->nr_maps; i++)
		free(sc->maps[i].path);
	free(sc->maps);
	for (b = 0; b < sc->nr_bufs; b++)
		free(sc->buf_names[b]);
	free(sc->buf_names);
	free(sc->path);
	free(sc->weight);
	ust_stitch_fini(&sc->st);
	free(sc->samples);
	free(sc->kframes);
	for (i = 0; i < sc->nr_names; i++)
		free(sc->names[i]);
	free(sc->names);
	ust_hmap_fini(&sc->name_idx);
	memset(sc, 0, sizeof(*sc));
}
