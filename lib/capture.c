// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_cap: recording through libtracefs.  Pages are read non-blocking from
 * each CPU's trace_pipe_raw and appended to the writer as they are, so the
 * file holds exactly the bytes the kernel produced.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/capture.h"
#include "ustitch/tdw.h"

struct ust_cap {
	struct tracefs_instance *inst;
	struct tracefs_cpu **tcpu;
	int nr_cpus;
	int page_size;
	void *page;
	struct ust_tdw *w;
	char name[64];
	unsigned long pages;
	char **systems;		/* systems whose formats go into the file */
	int nr_systems;
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
			char *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
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

static void free_cap(struct ust_cap *c)
{
	int i;

	if (c->tcpu) {
		for (i = 0; i < c->nr_cpus; i++)
			if (c->tcpu[i])
				tracefs_cpu_close(c->tcpu[i]);
		free(c->tcpu);
	}
	if (c->inst) {
		tracefs_instance_destroy(c->inst);
		tracefs_instance_free(c->inst);
	}
	if (c->w)
		ust_tdw_abort(c->w);
	for (i = 0; i < c->nr_systems; i++)
		free(c->systems[i]);
	free(c->systems);
	free(c->page);
	free(c);
}

static int write_inst(struct ust_cap *c, const char *file, const char *val)
{
	return tracefs_instance_file_write(c->inst, file, val) < 0 ? -1 : 0;
}

struct ust_cap *ust_cap_start(const char *out_path, const struct ust_cap_opts *o,
			      char *err, size_t errlen)
{
	struct ust_tdw_opts wo = { 0 };
	struct ust_cap *c = calloc(1, sizeof(*c));
	char buf[64];
	int i;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	snprintf(c->name, sizeof(c->name), "ustitch-%d", (int)getpid());
	c->inst = tracefs_instance_create(c->name);
	if (!c->inst) {
		snprintf(err, errlen, "cannot create tracefs instance %s: %s", c->name, strerror(errno));
		free_cap(c);
		return NULL;
	}
	tracefs_trace_off(c->inst);
	/* Inherited options would change what the kernel writes: set ours. */
	tracefs_option_disable(c->inst, TRACEFS_OPTION_STACKTRACE);
	tracefs_option_disable(c->inst, TRACEFS_OPTION_USERSTACKTRACE);
	tracefs_option_disable(c->inst, TRACEFS_OPTION_EVENT_FORK);
	for (i = 0; i < o->nr_options; i++) {
		snprintf(buf, sizeof(buf), "%s", o->options[i]);
		if (write_inst(c, "trace_options", buf)) {
			snprintf(err, errlen, "ftrace option %s not supported by this kernel", o->options[i]);
			free_cap(c);
			return NULL;
		}
	}
	if (write_inst(c, "trace_clock", o->clock ? o->clock : "local")) {
		snprintf(err, errlen, "trace clock %s not supported by this kernel", o->clock);
		free_cap(c);
		return NULL;
	}
	if (o->buffer_kb && tracefs_instance_set_buffer_size(c->inst, o->buffer_kb, -1) < 0) {
		snprintf(err, errlen, "cannot set the buffer size to %zu KiB", o->buffer_kb);
		free_cap(c);
		return NULL;
	}
	for (i = 0; i < o->nr_events; i++) {
		const struct ust_cap_event *e = &o->events[i];

		if (tracefs_event_enable(c->inst, e->system, e->event) < 0) {
			snprintf(err, errlen, "no event %s:%s", e->system, e->event ? e->event : "*");
			free_cap(c);
			return NULL;
		}
		if (e->filter && e->event &&
		    tracefs_event_file_write(c->inst, e->system, e->event, "filter", e->filter) < 0) {
			snprintf(err, errlen, "bad filter for %s:%s: %s", e->system, e->event, e->filter);
			free_cap(c);
			return NULL;
		}
		if (add_system(c, e->system))
			goto oom;
	}
	if (add_system(c, "ftrace"))
		goto oom;
	if (o->nr_pids) {
		char pidbuf[32];

		tracefs_option_enable(c->inst, TRACEFS_OPTION_EVENT_FORK);
		for (i = 0; i < o->nr_pids; i++) {
			snprintf(pidbuf, sizeof(pidbuf), "%d", (int)o->pids[i]);
			if (tracefs_instance_file_append(c->inst, "set_event_pid", pidbuf) < 0) {
				snprintf(err, errlen, "cannot follow pid %d", (int)o->pids[i]);
				free_cap(c);
				return NULL;
			}
		}
	}

	wo.nr_cpus = c->nr_cpus;
	wo.clock = o->clock;
	c->w = ust_tdw_open(out_path, &wo);
	if (!c->w) {
		snprintf(err, errlen, "cannot write %s: %s", out_path, strerror(errno));
		free_cap(c);
		return NULL;
	}
	c->tcpu = calloc((size_t)c->nr_cpus, sizeof(*c->tcpu));
	if (!c->tcpu)
		goto oom;
	for (i = 0; i < c->nr_cpus; i++) {
		c->tcpu[i] = tracefs_cpu_open(c->inst, i, true);
		if (c->tcpu[i] && !c->page_size)
			c->page_size = tracefs_cpu_read_size(c->tcpu[i]);
	}
	if (c->page_size <= 0)
		c->page_size = getpagesize();
	c->page = malloc((size_t)c->page_size);
	if (!c->page)
		goto oom;
	tracefs_trace_on(c->inst);
	return c;
oom:
	snprintf(err, errlen, "out of memory");
	free_cap(c);
	return NULL;
}

static int take(struct ust_cap *c, int cpu, int n)
{
	if (n <= 0)
		return 0;
	if (ust_tdw_raw_page(c->w, 0, cpu, c->page, (size_t)n))
		return -1;
	c->pages++;
	return 1;
}

int ust_cap_drain(struct ust_cap *c)
{
	int cpu, r;

	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		if (!c->tcpu[cpu])
			continue;
		do {
			r = take(c, cpu, tracefs_cpu_read(c->tcpu[cpu], c->page, true));
		} while (r > 0);
		if (r < 0)
			return -1;
	}
	return 0;
}

static void add_formats(struct ust_cap *c)
{
	const char *tdir = tracefs_tracing_dir();
	char path[4096];
	int s;

	for (s = 0; s < c->nr_systems; s++) {
		struct dirent *d;
		DIR *dir;

		snprintf(path, sizeof(path), "%s/events/%s", tdir, c->systems[s]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			char *text;

			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", tdir, c->systems[s], d->d_name);
			text = read_file(path, NULL);
			if (text) {
				ust_tdw_add_format(c->w, c->systems[s], text);
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

		if (sscanf(line, "%d %63[^\n]", &pid, comm) == 2)
			ust_tdw_add_cmdline(c->w, pid, comm);
	}
	free(text);
}

int ust_cap_finish(struct ust_cap *c, char *err, size_t errlen)
{
	char path[4096], *text;
	size_t len;
	int cpu, r = 0;

	tracefs_trace_off(c->inst);
	if (ust_cap_drain(c))
		r = -1;
	for (cpu = 0; cpu < c->nr_cpus && !r; cpu++) {
		if (!c->tcpu[cpu])
			continue;
		while (take(c, cpu, tracefs_cpu_flush(c->tcpu[cpu], c->page)) > 0)
			;
	}
	add_formats(c);
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs_tracing_dir());
	if ((text = read_file(path, &len))) {
		ust_tdw_set_printk(c->w, text, len);
		free(text);
	}
	if ((text = read_file("/proc/kallsyms", &len))) {
		ust_tdw_set_kallsyms(c->w, text, len);
		free(text);
	}
	add_cmdlines(c);
	if (r) {
		snprintf(err, errlen, "reading the ring buffer failed: %s", ust_tdw_error(c->w));
		ust_tdw_abort(c->w);
	} else {
		int e = ust_tdw_close(c->w);

		if (e) {
			snprintf(err, errlen, "writing the trace failed: %s", strerror(-e));
			r = -1;
		}
	}
	c->w = NULL;
	free_cap(c);
	return r;
}

void ust_cap_abort(struct ust_cap *c)
{
	if (c)
		free_cap(c);
}

const char *ust_cap_instance_name(const struct ust_cap *c)
{
	return c->name;
}

unsigned long ust_cap_pages(const struct ust_cap *c)
{
	return c->pages;
}
