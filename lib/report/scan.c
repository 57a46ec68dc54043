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
#include "ustitch/scan.h"

struct last_event {
	int id, pid;
	uint64_t off, ts;
};

/*
 * Every ordinary event, per CPU, in file order (= time order per CPU and
 * buffer).  A cookie written into another buffer than its event (the BPF
 * backport puts them into "ustitch") finds its requester here: the same
 * CPU and task, the nearest event at or before it.
 */
struct ev_ref {
	uint64_t ts, off;
	int32_t pid;
	int16_t id;
	int16_t buf;
};

struct ev_list {
	struct ev_ref *v;
	size_t nr, cap;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int ust_scan_is_tracedat(const char *path)
{
	static const char magic[] = "\027\010\104tracing";
	char buf[10];
	struct stat stbuf;
	int fd, ok;

	if (stat(path, &stbuf) || !S_ISREG(stbuf.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ok = read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) &&
	     !memcmp(buf, magic, sizeof(buf));
	close(fd);
	return ok;
}

static int add_mapping(struct ust_scan *sc, const struct ust_dec_mapping *m)
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

static void note_event(struct ev_list *l, uint64_t ts, uint64_t off, int pid, int id, int buf)
{
	if (l->nr == l->cap) {
		void *n = ust_grow(l->v, &l->cap, l->nr + 1, sizeof(*l->v), 1024);

		if (!n)
			return;
		l->v = n;
	}
	l->v[l->nr++] = (struct ev_ref){ .ts = ts, .off = off, .pid = pid, .id = (int16_t)id,
					 .buf = (int16_t)buf };
}

/* ---- samples (UST_SCAN_SAMPLES) ----------------------------------------- */

/* The event ids and fields of one buffer's samples and kernel stacks. */
struct sample_ids {
	int sample, kstack;		/* -1: none */
	struct tep_format_field *ustack, *ks_size, *ks_caller;
};

/* The sample whose records a CPU is reading: they share its task and time. */
struct sample_on {
	bool on;
	uint64_t ts;
};

static void sample_ids_init(struct sample_ids *ids, struct tep_handle *tep)
{
	struct tep_event *ev = tep_find_event_by_name(tep, UST_ABI_SYSTEM_USTITCH, UST_PERF_EV_SAMPLE);

	memset(ids, 0, sizeof(*ids));
	ids->sample = ev ? ev->id : -1;
	ids->ustack = ev ? tep_find_field(ev, "user_stack") : NULL;
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

/* A sample's ftrace/kernel_stack: its frames' names (a second one replaces them). */
static void sample_kstack(struct ust_scan *sc, const struct sample_ids *ids, struct tep_handle *tep,
			  struct ust_scan_sample *s, struct tep_record *rec)
{
	unsigned long long n;
	unsigned int i, max;

	if (tep_read_number_field(ids->ks_size, rec->data, &n) ||
	    (unsigned int)ids->ks_caller->offset > (unsigned int)rec->size)
		return;
	max = ((unsigned int)rec->size - (unsigned int)ids->ks_caller->offset) / 8;
	if (n > max)
		n = max;
	sc->nr_kframes = s->kfirst;
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
			const struct ust_dec_layout *lay, int buf, struct tep_record *rec, int id,
			int pid, struct sample_on *cur)
{
	struct ust_scan_sample *s = cur->on ? &sc->samples[sc->nr_samples - 1] : NULL;
	bool own = s && pid == s->pid && rec->ts == cur->ts;
	unsigned long long v;
	const char *comm;
	char what[160];

	if (own && id == ids->kstack && ids->ks_caller) {
		sample_kstack(sc, ids, lay->tep, s, rec);
		return;
	}
	/* Only a sample that says a cookie follows takes one: any other
	 * cookie here is another event's. */
	cur->on = false;
	if (own && id == lay->cookie_id && s->ustack != UST_PERF_ENC_USTACK_NONE) {
		if (!ust_dec_cookie(lay, rec->data, rec->size, &s->cookie, what, sizeof(what)))
			s->has_cookie = true;
		return;		/* the cookie ends a sample's records */
	}
	if (id != ids->sample || id < 0)
		return;
	if (sc->nr_samples == sc->cap_samples) {
		void *n = ust_grow(sc->samples, &sc->cap_samples, sc->nr_samples + 1,
				   sizeof(*sc->samples), 256);

		if (!n)
			return;
		sc->samples = n;
	}
	s = &sc->samples[sc->nr_samples++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->buf = buf;
	s->kfirst = (uint32_t)sc->nr_kframes;
	comm = tep_data_comm_from_pid(lay->tep, pid);
	s->comm = comm ? intern(sc, comm) : UINT32_MAX;
	if (ids->ustack && !tep_read_number_field(ids->ustack, rec->data, &v))
		s->ustack = (unsigned int)v;
	cur->on = true;
	cur->ts = rec->ts;
}

/* ---- the pass ------------------------------------------------------------ */

static void scan_record(struct ust_scan *sc, const struct ust_dec_layout *lay,
			int kstack_id, int buf, int cpu, struct tep_record *rec,
			struct last_event *last, struct ev_list *evs,
			const struct sample_ids *sids, struct sample_on *sample)
{
	char what[160];
	int id, pid;

	if (rec->missed_events)
		ust_stitch_add_lost(&sc->st, rec->ts, rec->missed_events);
	if (rec->size < 8)
		return;
	id = tep_data_type(lay->tep, rec);
	pid = ust_dec_pid(lay, rec->data, rec->size);
	if (sids)
		scan_sample(sc, sids, lay, buf, rec, id, pid, sample);

	if (id == lay->cookie_id) {
		struct ust_stitch_req r = {
			.rec_off = rec->offset, .ts = rec->ts, .cpu = cpu, .buf = buf,
			.pid = pid, .req_id = last->id, .req_pid = last->pid,
			.req_off = last->off, .req_ts = last->ts,
		};

		if (ust_dec_cookie(lay, rec->data, rec->size, &r.cookie, what, sizeof(what)))
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
		ust_stitch_add_request(&sc->st, &r);
		last->id = -1;
		last->pid = -1;
	} else if (id == lay->stack_id) {
		struct ust_dec_stack s;

		if (ust_dec_stack(lay, rec->data, rec->size, &s, what, sizeof(what)))
			ust_stitch_add_stack(&sc->st, buf, cpu, rec->ts, rec->offset, pid,
					     &s, lay->has_files, what);
		else
			ust_stitch_add_stack(&sc->st, buf, cpu, rec->ts, rec->offset, pid,
					     &s, lay->has_files, NULL);
	} else if (id == lay->flags_id) {
		uint64_t cookie;
		uint32_t flags;

		if (!ust_dec_stack_flags(lay, rec->data, rec->size, &cookie, &flags))
			ust_stitch_add_flags(&sc->st, cookie, flags);
	} else if (id == lay->mapping_id) {
		struct ust_dec_mapping m;

		if (!ust_dec_mapping(lay, rec->data, rec->size, &m, what, sizeof(what)))
			add_mapping(sc, &m);
	} else if (id != kstack_id) {
		/* kernel_stack sits between an event and its cookie: skip it. */
		if (sc->cross_buffer)
			note_event(evs, rec->ts, rec->offset, pid, id, buf);
		last->id = id;
		last->pid = pid;
		last->off = rec->offset;
		last->ts = rec->ts;
	}
}

/*
 * The record after the one at file offset *@prev on @cpu, NULL at the end.
 * On a corrupt page libtracecmd 1.3.1 can hand out the same zero-length
 * record again and again at one offset (trace-cmd report itself then never
 * ends): a record that does not move past the last one ends the CPU.
 */
static struct tep_record *next_record(struct tracecmd_input *h, int cpu,
				      const unsigned long long *prev)
{
	struct tep_record *rec = tracecmd_read_data(h, cpu);

	if (rec && rec->offset <= *prev) {
		tracecmd_free_record(rec);
		return NULL;
	}
	return rec;
}

static int scan_handle(struct ust_scan *sc, struct tracecmd_input *h, int buf,
		       struct ev_list **evs, int *nr_evs)
{
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct ust_dec_layout lay;
	struct sample_ids sids;
	struct tep_event *ks;
	char err[160];
	int cpu, cpus, kstack_id;

	ust_dec_layout_init(&lay, tep, err, sizeof(err));
	sample_ids_init(&sids, tep);
	ks = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
	kstack_id = ks ? ks->id : -1;
	cpus = tep_get_cpus(tep);
	if (cpus > *nr_evs) {
		void *n = realloc(*evs, (size_t)cpus * sizeof(**evs));

		if (!n)
			return -1;
		*evs = n;
		memset(*evs + *nr_evs, 0, (size_t)(cpus - *nr_evs) * sizeof(**evs));
		*nr_evs = cpus;
	}
	for (cpu = 0; cpu < cpus; cpu++) {
		struct last_event last = { .id = -1, .pid = -1 };
		struct sample_on sample = { 0 };
		struct tep_record *rec;
		unsigned long long prev = 0;

		for (rec = tracecmd_read_cpu_first(h, cpu); rec;
		     rec = next_record(h, cpu, &prev)) {
			sc->records++;
			scan_record(sc, &lay, kstack_id, buf, cpu, rec, &last, &(*evs)[cpu],
				    sc->has_samples ? &sids : NULL, &sample);
			prev = rec->offset;
			tracecmd_free_record(rec);
		}
	}
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct ev_ref *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Requests with no requester in their own buffer: look across buffers. */
static void match_across(struct ust_scan *sc, struct ev_list *evs, int nr_evs)
{
	unsigned long i;
	int cpu;

	for (cpu = 0; cpu < nr_evs; cpu++)
		if (sc->nr_bufs > 1 && evs[cpu].nr > 1)
			qsort(evs[cpu].v, evs[cpu].nr, sizeof(*evs[cpu].v), cmp_ref);
	for (i = 0; i < sc->st.nr_reqs; i++) {
		struct ust_stitch_req *r = &sc->st.reqs[i];
		struct ev_list *l;
		unsigned long lo = 0, hi, k, steps;

		if (r->req_id >= 0 || r->cpu < 0 || r->cpu >= nr_evs)
			continue;
		l = &evs[r->cpu];
		hi = l->nr;
		while (lo < hi) {	/* first entry with ts > r->ts */
			unsigned long mid = (lo + hi) / 2;

			if (l->v[mid].ts <= r->ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Nearest at or before it, same task; a few steps back at most. */
		for (k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
			const struct ev_ref *e = &l->v[k - 1];

			if (e->pid != r->pid || e->buf == r->buf)
				continue;
			r->req_id = e->id;
			r->req_pid = e->pid;
			r->req_off = e->off;
			r->req_ts = e->ts;
			break;
		}
	}
}

int ust_scan_file(struct ust_scan *sc, const char *path, unsigned int flags, char *err,
		  size_t errsz)
{
	struct ev_list *evs = NULL;
	int nr_evs = 0, c;
	struct tracecmd_input *h;
	struct stat stbuf;
	double t0 = now();
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
	/* No plugins: this handle must not load ustitch into itself. */
	h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!h) {
		snprintf(err, errsz, "cannot scan %s: libtracecmd could not open it", path);
		return -EIO;
	}
	sc->path = strdup(path);
	n = tracecmd_buffer_instances(h);
	sc->buf_names = calloc((size_t)n + 1, sizeof(char *));
	if (!sc->path || !sc->buf_names) {
		tracecmd_close(h);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	sc->nr_bufs = n + 1;
	sc->buf_names[0] = strdup("");
	/*
	 * Only BPF-made cookies sit in another buffer than their events, and
	 * only in one named "ustitch": without it, keeping every event's
	 * reference would cost 24 bytes an event for nothing.
	 */
	for (i = 0; i < n; i++) {
		const char *name = tracecmd_buffer_instance_name(h, i);

		if (name && !strcmp(name, "ustitch"))
			sc->cross_buffer = true;
	}
	scan_handle(sc, h, 0, &evs, &nr_evs);
	for (i = 0; i < n; i++) {
		struct tracecmd_input *ih = tracecmd_buffer_instance_handle(h, i);
		const char *name = tracecmd_buffer_instance_name(h, i);

		sc->buf_names[i + 1] = strdup(name ? name : "?");
		if (!ih)
			continue;
		scan_handle(sc, ih, i + 1, &evs, &nr_evs);
		tracecmd_close(ih);
	}
	tracecmd_close(h);
	match_across(sc, evs, nr_evs);
	for (c = 0; c < nr_evs; c++)
		free(evs[c].v);
	free(evs);
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
	ust_stitch_fini(&sc->st);
	free(sc->samples);
	free(sc->kframes);
	for (i = 0; i < sc->nr_names; i++)
		free(sc->names[i]);
	free(sc->names);
	ust_hmap_fini(&sc->name_idx);
	memset(sc, 0, sizeof(*sc));
}
