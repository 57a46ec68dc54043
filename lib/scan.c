// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_scan: first pass.  Each CPU of each buffer is read in file order:
 * "the event just before the cookie on that CPU and buffer" needs no
 * global ordering, and per-CPU reads are the cheapest way through
 * libtracecmd.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <trace-cmd/trace-cmd.h>

#include "ustitch/scan.h"

struct last_event {
	int id, pid;
	uint64_t off, ts;
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
		unsigned long cap = sc->cap_maps ? sc->cap_maps * 2 : 16;
		void *n = realloc(sc->maps, cap * sizeof(*sc->maps));

		if (!n)
			return -1;
		sc->maps = n;
		sc->cap_maps = cap;
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

static void scan_record(struct ust_scan *sc, const struct ust_dec_layout *lay,
			int kstack_id, int buf, int cpu, struct tep_record *rec,
			struct last_event *last)
{
	char what[160];
	int id, pid;

	if (rec->missed_events)
		ust_stitch_add_lost(&sc->st, rec->ts, rec->missed_events);
	if (rec->size < 8)
		return;
	id = tep_data_type(lay->tep, rec);
	pid = ust_dec_pid(lay, rec->data, rec->size);

	if (id == lay->cookie_id) {
		struct ust_stitch_req r = {
			.rec_off = rec->offset, .ts = rec->ts, .cpu = cpu, .buf = buf,
			.pid = pid, .req_id = last->id, .req_pid = last->pid,
			.req_off = last->off, .req_ts = last->ts,
		};

		if (ust_dec_cookie(lay, rec->data, rec->size, &r.cookie, what, sizeof(what)))
			return;	/* the printing pass reports it at its own line */
		ust_stitch_add_request(&sc->st, &r);
	} else if (id == lay->stack_id) {
		struct ust_dec_stack s;

		if (ust_dec_stack(lay, rec->data, rec->size, &s, what, sizeof(what)))
			ust_stitch_add_stack(&sc->st, buf, cpu, rec->ts, rec->offset, pid,
					     &s, lay->has_files, what);
		else
			ust_stitch_add_stack(&sc->st, buf, cpu, rec->ts, rec->offset, pid,
					     &s, lay->has_files, NULL);
	} else if (id == lay->mapping_id) {
		struct ust_dec_mapping m;

		if (!ust_dec_mapping(lay, rec->data, rec->size, &m, what, sizeof(what)))
			add_mapping(sc, &m);
	} else if (id != kstack_id) {
		/* kernel_stack sits between an event and its cookie: skip it. */
		last->id = id;
		last->pid = pid;
		last->off = rec->offset;
		last->ts = rec->ts;
	}
}

static int scan_handle(struct ust_scan *sc, struct tracecmd_input *h, int buf)
{
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct ust_dec_layout lay;
	struct tep_event *ks;
	char err[160];
	int cpu, cpus, kstack_id;

	ust_dec_layout_init(&lay, tep, err, sizeof(err));
	ks = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
	kstack_id = ks ? ks->id : -1;
	cpus = tep_get_cpus(tep);
	for (cpu = 0; cpu < cpus; cpu++) {
		struct last_event last = { .id = -1, .pid = -1 };
		struct tep_record *rec;

		for (rec = tracecmd_read_cpu_first(h, cpu); rec;
		     rec = tracecmd_read_data(h, cpu)) {
			sc->records++;
			scan_record(sc, &lay, kstack_id, buf, cpu, rec, &last);
			tracecmd_free_record(rec);
		}
	}
	return 0;
}

int ust_scan_file(struct ust_scan *sc, const char *path, char *err, size_t errlen)
{
	struct tracecmd_input *h;
	struct stat stbuf;
	double t0 = now();
	int i, n;

	memset(sc, 0, sizeof(*sc));
	ust_stitch_init(&sc->st);
	if (stat(path, &stbuf) || !S_ISREG(stbuf.st_mode)) {
		snprintf(err, errlen, "cannot scan %s: not a regular file", path);
		return -1;
	}
	sc->dev = stbuf.st_dev;
	sc->ino = stbuf.st_ino;
	/* No plugins: this handle must not load ustitch into itself. */
	h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!h) {
		snprintf(err, errlen, "cannot scan %s: libtracecmd could not open it", path);
		return -1;
	}
	sc->path = strdup(path);
	n = tracecmd_buffer_instances(h);
	sc->buf_names = calloc((size_t)n + 1, sizeof(char *));
	if (!sc->path || !sc->buf_names) {
		tracecmd_close(h);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sc->nr_bufs = n + 1;
	sc->buf_names[0] = strdup("");
	scan_handle(sc, h, 0);
	for (i = 0; i < n; i++) {
		struct tracecmd_input *ih = tracecmd_buffer_instance_handle(h, i);
		const char *name = tracecmd_buffer_instance_name(h, i);

		sc->buf_names[i + 1] = strdup(name ? name : "?");
		if (!ih)
			continue;
		scan_handle(sc, ih, i + 1);
		tracecmd_close(ih);
	}
	tracecmd_close(h);
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
	memset(sc, 0, sizeof(*sc));
}
