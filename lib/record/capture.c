// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_cap: recording through libtracefs.  Pages are read non-blocking from
 * each CPU's trace_pipe_raw and appended to the writer as they are, so the
 * file holds exactly the bytes the kernel produced.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/grow.h"
#include "ustitch/capture.h"
#include "ustitch/tdw.h"

#define INSTANCE_PREFIX "ustitch-"

struct cap_buf {
	struct tracefs_instance *inst;
	struct tracefs_cpu **tcpu;
	int tdw_buf;
};

struct ust_cap {
	struct cap_buf *bufs;
	int nr_bufs;
	int nr_cpus;
	int page_size;
	void *page;
	struct ust_tdw *w;
	char name[64];
	unsigned long pages;
	/*
	 * Formats that go into the file: "system" for all of a system's,
	 * "system/event" for one.  As trace-cmd record, only the events
	 * enabled: each format is parsed by every report, twice with the
	 * plugin, and a whole system (syscalls: 700 events) was most of a
	 * small report's time.
	 */
	char **systems;
	int nr_systems;
	bool flushed;		/* ust_cap_flush() done: every page is in the writer */
	uint64_t *kaddrs;	/* the only kernel addresses in the file; NULL: unknown */
	size_t nr_kaddrs;
	bool sources_only;	/* no ftrace event: the sources write all of the file */
};

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = ust_grow(buf, &cap, n + 4096 + 1, 1, 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *ust_cap_read_format(const char *system, const char *event)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs_tracing_dir(), system, event);
	return read_file(path, NULL);
}

static int add_system(struct ust_cap *c, const char *sys)
{
	char **n;
	int i;

	for (i = 0; i < c->nr_systems; i++)
		if (!strcmp(c->systems[i], sys))
			return 0;
	n = realloc(c->systems, (size_t)(c->nr_systems + 1) * sizeof(*n));
	if (!n)
		return -1;
	c->systems = n;
	c->systems[c->nr_systems] = strdup(sys);
	return c->systems[c->nr_systems++] ? 0 : -1;
}

/* @sys's event @ev; NULL or a pattern: all of @sys. */
static int add_event(struct ust_cap *c, const char *sys, const char *ev)
{
	char one[512];

	if (!ev || strpbrk(ev, "*?[") || snprintf(one, sizeof(one), "%s/%s", sys, ev) >= (int)sizeof(one))
		return add_system(c, sys);
	return add_system(c, one);
}

static void close_buf(struct ust_cap *c, struct cap_buf *b)
{
	int i;

	if (b->tcpu) {
		for (i = 0; i < c->nr_cpus; i++)
			if (b->tcpu[i])
				tracefs_cpu_close(b->tcpu[i]);
		free(b->tcpu);
		b->tcpu = NULL;
	}
	if (b->inst) {
		tracefs_trace_off(b->inst);
		tracefs_instance_destroy(b->inst);
		tracefs_instance_free(b->inst);
		b->inst = NULL;
	}
}

static void free_cap(struct ust_cap *c)
{
	int i;

	for (i = 0; i < c->nr_bufs; i++)
		close_buf(c, &c->bufs[i]);
	free(c->bufs);
	if (c->w)
		ust_tdw_abort(c->w);
	for (i = 0; i < c->nr_systems; i++)
		free(c->systems[i]);
	free(c->systems);
	free(c->page);
	free(c->kaddrs);
	free(c);
}

/* errno of a failed call, or @def if it left none. */
static int neg_errno(int def)
{
	return errno > 0 ? -errno : -def;
}

static int setup_buf(struct ust_cap *c, struct cap_buf *b, const struct ust_cap_buffer *ob,
		     const struct ust_cap_opts *o, char *err, size_t errsz)
{
	char name[128], msg[512];
	int i, ret;

	if (ob->name && ob->name[0])
		snprintf(name, sizeof(name), "%s-%s", c->name, ob->name);
	else
		snprintf(name, sizeof(name), "%s", c->name);
	b->inst = tracefs_instance_create(name);
	if (!b->inst) {
		ret = neg_errno(EIO);
		snprintf(err, errsz, "cannot create tracefs instance %s: %s", name, strerror(-ret));
		return ret;
	}
	tracefs_trace_off(b->inst);
	/* Inherited options would change what the kernel writes: set ours. */
	tracefs_option_disable(b->inst, TRACEFS_OPTION_STACKTRACE);
	tracefs_option_disable(b->inst, TRACEFS_OPTION_USERSTACKTRACE);
	tracefs_option_disable(b->inst, TRACEFS_OPTION_EVENT_FORK);
	for (i = 0; i < ob->nr_options; i++) {
		if (tracefs_instance_file_write(b->inst, "trace_options", ob->options[i]) < 0) {
			snprintf(err, errsz, "ftrace option %s: not supported by this kernel", ob->options[i]);
			return -EINVAL;
		}
	}
	if (tracefs_instance_file_write(b->inst, "trace_clock", o->clock ? o->clock : "local") < 0) {
		snprintf(err, errsz, "trace clock %s: not supported by this kernel", o->clock);
		return -EINVAL;
	}
	errno = 0;
	if (o->buffer_kb && tracefs_instance_set_buffer_size(b->inst, o->buffer_kb, -1) < 0) {
		ret = neg_errno(EINVAL);
		snprintf(err, errsz, "cannot set the buffer size to %zu KiB", o->buffer_kb);
		return ret;
	}
	for (i = 0; i < ob->nr_events; i++) {
		const struct ust_cap_event *e = &ob->events[i];

		if (tracefs_event_enable(b->inst, e->system, e->event) < 0) {
			ret = neg_errno(ENOENT);
			snprintf(err, errsz, "cannot enable event %s:%s: %s", e->system, e->event,
				 strerror(-ret));
			return ret;
		}
		if (e->filter && tracefs_event_file_write(b->inst, e->system, e->event, "filter",
							  e->filter) < 0) {
			snprintf(err, errsz, "filter rejected by the kernel for %s:%s: '%s'",
				 e->system, e->event, e->filter);
			return -EINVAL;
		}
		if (add_event(c, e->system, e->event)) {
			snprintf(err, errsz, "out of memory");
			return -ENOMEM;
		}
	}
	if (o->notrace_pid) {
		char pidbuf[32];

		/* Not event-fork: a notrace pid's children would be left out too. */
		tracefs_option_disable(b->inst, TRACEFS_OPTION_EVENT_FORK);
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)o->notrace_pid);
		if (tracefs_instance_file_write(b->inst, "set_event_notrace_pid", pidbuf) < 0) {
			ret = neg_errno(EINVAL);
			snprintf(err, errsz, "cannot leave out pid %d: %s", (int)o->notrace_pid,
				 strerror(-ret));
			return ret;
		}
	}
	if (o->nr_pids) {
		tracefs_option_enable(b->inst, TRACEFS_OPTION_EVENT_FORK);
		for (i = 0; i < o->nr_pids; i++) {
			char pidbuf[32];

			snprintf(pidbuf, sizeof(pidbuf), "%d", (int)o->pids[i]);
			if (tracefs_instance_file_append(b->inst, "set_event_pid", pidbuf) < 0) {
				ret = neg_errno(EINVAL);
				snprintf(err, errsz, "cannot follow pid %d: %s", (int)o->pids[i],
					 strerror(-ret));
				return ret;
			}
		}
	}
	b->tcpu = calloc((size_t)c->nr_cpus, sizeof(*b->tcpu));
	if (!b->tcpu) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < c->nr_cpus; i++) {
		b->tcpu[i] = tracefs_cpu_open(b->inst, i, true);
		if (b->tcpu[i] && !c->page_size)
			c->page_size = tracefs_cpu_read_size(b->tcpu[i]);
	}
	if (ob->name && ob->name[0]) {
		b->tdw_buf = ust_tdw_add_buffer(c->w, ob->name, msg, sizeof(msg));
		if (b->tdw_buf < 0) {
			snprintf(err, errsz, "buffer %s: %s", ob->name, msg);
			return b->tdw_buf;
		}
	}
	return 0;
}

struct ust_cap *ust_cap_start(const char *out_path, const struct ust_cap_opts *o,
			      char *err, size_t errsz)
{
	struct ust_tdw_opts wo = { 0 };
	struct ust_cap *c = calloc(1, sizeof(*c));
	char msg[512];
	int i, ret;

	if (!c) {
		snprintf(err, errsz, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	snprintf(c->name, sizeof(c->name), INSTANCE_PREFIX "%d", (int)getpid());
	wo.nr_cpus = c->nr_cpus;
	wo.clock = o->clock;
	c->w = ust_tdw_open(out_path, &wo, msg, sizeof(msg));
	if (!c->w) {
		ret = errno;
		snprintf(err, errsz, "cannot write %s: %s", out_path, msg);
		free_cap(c);
		errno = ret;
		return NULL;
	}
	c->bufs = calloc((size_t)o->nr_buffers, sizeof(*c->bufs));
	if (!c->bufs || add_system(c, "ftrace"))
		goto oom;
	for (i = 0; i < o->nr_buffers; i++) {
		c->nr_bufs++;
		errno = 0;
		ret = setup_buf(c, &c->bufs[i], &o->buffers[i], o, err, errsz);
		if (ret < 0) {
			free_cap(c);
			errno = -ret;
			return NULL;
		}
	}
	if (c->page_size <= 0)
		c->page_size = getpagesize();
	c->page = malloc((size_t)c->page_size);
	if (!c->page)
		goto oom;
	return c;
oom:
	snprintf(err, errsz, "out of memory");
	free_cap(c);
	errno = ENOMEM;
	return NULL;
}

void ust_cap_on(struct ust_cap *c)
{
	int i;

	for (i = 0; i < c->nr_bufs; i++)
		tracefs_trace_on(c->bufs[i].inst);
}

void ust_cap_off(struct ust_cap *c)
{
	int i;

	for (i = 0; i < c->nr_bufs; i++)
		tracefs_trace_off(c->bufs[i].inst);
}

int ust_cap_follow(struct ust_cap *c, pid_t pid, char *err, size_t errsz)
{
	char pidbuf[32];
	int i, ret;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	for (i = 0; i < c->nr_bufs; i++) {
		tracefs_option_enable(c->bufs[i].inst, TRACEFS_OPTION_EVENT_FORK);
		errno = 0;
		if (tracefs_instance_file_append(c->bufs[i].inst, "set_event_pid", pidbuf) < 0) {
			ret = neg_errno(EINVAL);
			snprintf(err, errsz, "cannot follow pid %d: %s", (int)pid, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* 1 if a page was taken, 0 if none (@n <= 0: nothing read), or a negative errno. */
static int take(struct ust_cap *c, struct cap_buf *b, int cpu, int n, char *err, size_t errsz)
{
	int ret;

	if (n <= 0)
		return 0;
	ret = ust_tdw_raw_page(c->w, b->tdw_buf, cpu, c->page, (size_t)n, err, errsz);
	if (ret < 0)
		return ret;
	c->pages++;
	return 1;
}

long ust_cap_drain(struct ust_cap *c, char *err, size_t errsz)
{
	unsigned long before = c->pages;
	int cpu, i, r;

	for (i = 0; i < c->nr_bufs; i++) {
		struct cap_buf *b = &c->bufs[i];

		for (cpu = 0; cpu < c->nr_cpus; cpu++) {
			if (!b->tcpu[cpu])
				continue;
			do {
				r = take(c, b, cpu, tracefs_cpu_read(b->tcpu[cpu], c->page, true),
					 err, errsz);
			} while (r > 0);
			if (r < 0)
				return r;
		}
	}
	return (long)(c->pages - before);
}

struct ust_tdw *ust_cap_writer(struct ust_cap *c)
{
	return c->w;
}

int ust_cap_nr_cpus(const struct ust_cap *c)
{
	return c->nr_cpus;
}

int ust_cap_lost(struct ust_cap *c, int buf, int cpu, struct ust_cap_lost *l,
		 char *err, size_t errsz)
{
	char file[64], *text, *p;
	int ret;

	memset(l, 0, sizeof(*l));
	if (buf < 0 || buf >= c->nr_bufs || !c->bufs[buf].inst) {
		snprintf(err, errsz, "no buffer %d", buf);
		return -EINVAL;
	}
	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	errno = 0;
	text = tracefs_instance_file_read(c->bufs[buf].inst, file, NULL);
	if (!text) {
		ret = neg_errno(ENOENT);
		snprintf(err, errsz, "%s: %s", file, strerror(-ret));
		return ret;
	}
	if ((p = strstr(text, "overrun:")))
		l->overrun = strtoull(p + 8, NULL, 10);
	if ((p = strstr(text, "dropped events:")))
		l->dropped = strtoull(p + 15, NULL, 10);
	free(text);
	return 0;
}

/* Whether all of system @sys (@len bytes) is listed. */
static bool system_whole(const struct ust_cap *c, const char *sys, size_t len)
{
	int i;

	for (i = 0; i < c->nr_systems; i++)
		if (strlen(c->systems[i]) == len && !strncmp(c->systems[i], sys, len))
			return true;
	return false;
}

static void add_formats(struct ust_cap *c)
{
	const char *tdir = tracefs_tracing_dir();
	char path[4096];
	int s;

	for (s = 0; s < c->nr_systems; s++) {
		const char *slash = strchr(c->systems[s], '/');
		struct dirent *d;
		DIR *dir;

		if (slash) {
			char sys[256], *text;
			size_t len = (size_t)(slash - c->systems[s]);

			if (len >= sizeof(sys) || system_whole(c, c->systems[s], len))
				continue;
			memcpy(sys, c->systems[s], len);
			sys[len] = '\0';
			text = ust_cap_read_format(sys, slash + 1);
			if (text) {
				ust_tdw_add_format(c->w, sys, text, NULL, 0);
				free(text);
			}
			continue;
		}
		snprintf(path, sizeof(path), "%s/events/%s", tdir, c->systems[s]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			char *text;

			if (d->d_name[0] == '.')
				continue;
			text = ust_cap_read_format(c->systems[s], d->d_name);
			if (text) {
				ust_tdw_add_format(c->w, c->systems[s], text, NULL, 0);
				free(text);
			}
		}
		closedir(dir);
	}
}

static void add_cmdlines(struct ust_cap *c)
{
	char path[4096], *text, *line, *save = NULL;

	snprintf(path, sizeof(path), "%s/saved_cmdlines", tracefs_tracing_dir());
	text = read_file(path, NULL);
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char comm[64];
		int pid;

		/* A name a record source saw during the recording wins: the
		 * kernel's table keeps names of pids since reused. */
		if (sscanf(line, "%d %63[^\n]", &pid, comm) == 2 && !ust_tdw_has_cmdline(c->w, pid))
			ust_tdw_add_cmdline(c->w, pid, comm, NULL, 0);
	}
	free(text);
}

int ust_cap_flush(struct ust_cap *c, char *err, size_t errsz)
{
	char msg[512];
	long r;
	int cpu, i, wr = 0;

	if (c->flushed)
		return 0;
	ust_cap_off(c);
	r = ust_cap_drain(c, msg, sizeof(msg));
	if (r > 0)
		r = 0;
	for (i = 0; i < c->nr_bufs && !r && !wr; i++) {
		struct cap_buf *b = &c->bufs[i];

		for (cpu = 0; cpu < c->nr_cpus && !wr; cpu++) {
			if (!b->tcpu[cpu])
				continue;
			do {
				wr = take(c, b, cpu, tracefs_cpu_flush(b->tcpu[cpu], c->page),
					  msg, sizeof(msg));
			} while (wr > 0);
		}
	}
	if (r) {
		snprintf(err, errsz, "reading the ring buffer failed: %s", msg);
		return (int)r;
	}
	if (wr < 0) {
		/* The page was lost: the trace would be incomplete. */
		snprintf(err, errsz, "writing the trace failed: %s", msg);
		return wr;
	}
	c->flushed = true;
	return 0;
}

unsigned long ust_cap_events(const struct ust_cap *c, int buf)
{
	return buf >= 0 && buf < c->nr_bufs ? ust_tdw_buffer_records(c->w, c->bufs[buf].tdw_buf) : 0;
}

int ust_cap_finish(struct ust_cap *c, char *err, size_t errsz)
{
	char path[4096], msg[512], *text;
	size_t len;
	long r;

	r = ust_cap_flush(c, err, errsz);
	if (r) {
		ust_tdw_abort(c->w);
		c->w = NULL;
		free_cap(c);
		return (int)r;
	}
	add_formats(c);
	/*
	 * Sources that write all of the file (ust_cap_take_kernel_addrs():
	 * no ftrace event) need no printk format (a trace_printk()'s, an
	 * ftrace event's) and name their own tasks (perf's COMM records):
	 * the kernel's saved_cmdlines, every task it ever saw, was 52 kB of
	 * a 80 kB sampling of /bin/true.
	 */
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs_tracing_dir());
	if (!c->sources_only && (text = read_file(path, &len))) {
		ust_tdw_set_printk(c->w, text, len, NULL, 0);
		free(text);
	}
	if ((text = read_file("/proc/kallsyms", &len))) {
		if (c->kaddrs)
			len = ust_tdw_kallsyms_cut(text, len, c->kaddrs, c->nr_kaddrs);
		ust_tdw_take_kallsyms(c->w, text, len, NULL, 0);
	}
	if (!c->sources_only)
		add_cmdlines(c);
	r = ust_tdw_close(c->w, msg, sizeof(msg));
	if (r < 0)
		snprintf(err, errsz, "writing the trace failed: %s", msg);
	c->w = NULL;
	free_cap(c);
	return (int)r;
}

void ust_cap_take_kernel_addrs(struct ust_cap *c, uint64_t *addrs, size_t nr, bool sources_only)
{
	free(c->kaddrs);
	c->kaddrs = addrs;
	c->nr_kaddrs = nr;
	c->sources_only = sources_only;
}

void ust_cap_abort(struct ust_cap *c)
{
	if (c)
		free_cap(c);
}

unsigned long ust_cap_pages(const struct ust_cap *c)
{
	return c->pages;
}

const char *ust_cap_instance_name(const struct ust_cap *c)
{
	return c->name;
}

int ust_cap_remove_stale(void)
{
	char path[4096];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "%s/instances", tracefs_tracing_dir());
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		struct tracefs_instance *inst;
		char *end;
		long pid;

		if (strncmp(d->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
			continue;
		pid = strtol(d->d_name + strlen(INSTANCE_PREFIX), &end, 10);
		if (pid <= 0 || (*end && *end != '-'))
			continue;
		/* Alive (or not ours to judge): leave it. */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		inst = tracefs_instance_alloc(NULL, d->d_name);
		if (!inst)
			continue;
		tracefs_trace_off(inst);
		if (!tracefs_instance_destroy(inst))
			n++;
		tracefs_instance_free(inst);
	}
	closedir(dir);
	return n;
}
