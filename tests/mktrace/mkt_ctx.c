// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-mktrace run context.  The writer is opened lazily, with the first
 * record: `cpus` and `clock` may come anywhere before it, and formats,
 * buffers and cmdlines declared earlier are replayed into it then.  Every
 * format is also parsed into a private tep handle, so that records are laid
 * out from the very texts that end up in the file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "ustitch/kbits.h"
#include "ustitch/sym.h"
#include "ustitch/tdw.h"
#include "mkt.h"

int ust_mkt_set_error(struct ust_mkt *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	m->io_failed = false;
	return -1;
}

/* A writer error, its message already in m->err. */
static int tdw_msg(struct ust_mkt *m)
{
	m->io_failed = false;
	return -1;
}

/* A writer error (message in m->err): the input's fault (bad cpu, order, size)
 * or the system's. */
static int tdw_failed(struct ust_mkt *m, int ret)
{
	m->io_failed = ret != -EINVAL && ret != -EEXIST && ret != -E2BIG;
	return -1;
}

void ust_mkt_init(struct ust_mkt *m, const char *out_path)
{
	memset(m, 0, sizeof(*m));
	m->out_path = out_path;
	m->nr_cpus = 1;
}

bool ust_mkt_started(const struct ust_mkt *m)
{
	return m->w != NULL;
}

static const struct ust_kbits_entry *kbits_entry(const char *key)
{
	const struct ust_kbits_entry *e;

	for (e = ust_kbits_table; e->key; e++)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

static struct tep_handle *new_tep(void)
{
	struct tep_handle *tep = tep_alloc();

	if (!tep)
		return NULL;
	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, 4096);
	return tep;
}

static int write_format(struct ust_mkt *m, const char *key)
{
	const struct ust_kbits_entry *e = kbits_entry(key);

	if (ust_tdw_add_format(m->w, e->system, e->text, m->err, sizeof(m->err)) < 0)
		return tdw_msg(m);
	return 0;
}

int ust_mkt_add_format(struct ust_mkt *m, const char *key)
{
	const struct ust_kbits_entry *e = kbits_entry(key);
	struct tep_event *ev = NULL, *old;
	struct tep_handle *scratch;
	char **k;
	int i;

	if (!e || !strchr(key, '/'))
		return ust_mkt_set_error(m, "unknown format \"%s\"", key);
	for (i = 0; i < m->nr_keys; i++)
		if (!strcmp(m->keys[i], key))
			return 0;
	if (!m->tep && !(m->tep = new_tep()))
		return ust_mkt_set_error(m, "out of memory");

	/* Learn name and id first: a second layout of one event is an error. */
	scratch = new_tep();
	if (!scratch)
		return ust_mkt_set_error(m, "out of memory");
	if (tep_parse_format(scratch, &ev, e->text, strlen(e->text), e->system) != 0 || !ev) {
		tep_free(scratch);
		return ust_mkt_set_error(m, "format \"%s\" does not parse", key);
	}
	old = tep_find_event_by_name(m->tep, ev->system, ev->name);
	if (!old)
		old = tep_find_event(m->tep, ev->id);
	if (old) {
		ust_mkt_set_error(m, "format \"%s\" clashes with %s/%s (ID %d) added before",
				  key, old->system, old->name, old->id);
		tep_free(scratch);
		return -1;
	}
	tep_free(scratch);
	if (tep_parse_format(m->tep, &ev, e->text, strlen(e->text), e->system) != 0)
		return ust_mkt_set_error(m, "format \"%s\" does not parse", key);

	k = realloc(m->keys, (m->nr_keys + 1) * sizeof(*k));
	if (!k)
		return ust_mkt_set_error(m, "out of memory");
	m->keys = k;
	k[m->nr_keys] = strdup(key);
	if (!k[m->nr_keys])
		return ust_mkt_set_error(m, "out of memory");
	m->nr_keys++;
	if (m->w) {
		if (write_format(m, key) < 0)
			return -1;
		m->nr_written = m->nr_keys;
	}
	return 0;
}

struct tep_event *ust_mkt_event(struct ust_mkt *m, const char *system, const char *name)
{
	struct tep_event *ev = m->tep ? tep_find_event_by_name(m->tep, system, name) : NULL;
	char key[256];

	if (ev)
		return ev;
	snprintf(key, sizeof(key), "%s/%s", system, name);
	if (!kbits_entry(key)) {
		ust_mkt_set_error(m, "no format for %s/%s", system, name);
		return NULL;
	}
	if (ust_mkt_add_format(m, key) < 0)
		return NULL;
	ev = tep_find_event_by_name(m->tep, system, name);
	if (!ev)
		ust_mkt_set_error(m, "format \"%s\" does not define %s/%s", key, system, name);
	return ev;
}

int ust_mkt_buffer(const struct ust_mkt *m, const char *name)
{
	int i;

	if (!name)
		return 0;
	for (i = 0; i < m->nr_buffers; i++)
		if (!strcmp(m->buffers[i], name))
			return i + 1;
	return -1;
}

int ust_mkt_add_buffer(struct ust_mkt *m, const char *name)
{
	char **b;

	if (ust_mkt_buffer(m, name) >= 0)
		return ust_mkt_set_error(m, "buffer \"%s\" declared twice", name);
	if (m->w && ust_tdw_add_buffer(m->w, name, m->err, sizeof(m->err)) < 0)
		return tdw_msg(m);
	b = realloc(m->buffers, (m->nr_buffers + 1) * sizeof(*b));
	if (!b)
		return ust_mkt_set_error(m, "out of memory");
	m->buffers = b;
	b[m->nr_buffers] = strdup(name);
	if (!b[m->nr_buffers])
		return ust_mkt_set_error(m, "out of memory");
	m->nr_buffers++;
	return 0;
}

int ust_mkt_add_cmdline(struct ust_mkt *m, int pid, const char *comm)
{
	void *c;

	if (m->w) {
		if (ust_tdw_add_cmdline(m->w, pid, comm, m->err, sizeof(m->err)) < 0)
			return tdw_msg(m);
		return 0;
	}
	c = realloc(m->cmdlines, (m->nr_cmdlines + 1) * sizeof(*m->cmdlines));
	if (!c)
		return ust_mkt_set_error(m, "out of memory");
	m->cmdlines = c;
	m->cmdlines[m->nr_cmdlines].pid = pid;
	m->cmdlines[m->nr_cmdlines].comm = strdup(comm);
	if (!m->cmdlines[m->nr_cmdlines].comm)
		return ust_mkt_set_error(m, "out of memory");
	m->nr_cmdlines++;
	return 0;
}

int ust_mkt_start(struct ust_mkt *m)
{
	struct ust_tdw_opts o = { .nr_cpus = m->nr_cpus, .clock = m->clock };
	int i;

	if (m->w)
		return 0;
	m->w = ust_tdw_open(m->out_path, &o, m->err, sizeof(m->err));
	if (!m->w)
		return tdw_failed(m, errno == EINVAL ? -EINVAL : -EIO);
	for (; m->nr_written < m->nr_keys; m->nr_written++)
		if (write_format(m, m->keys[m->nr_written]) < 0)
			return -1;
	for (i = 0; i < m->nr_buffers; i++)
		if (ust_tdw_add_buffer(m->w, m->buffers[i], m->err, sizeof(m->err)) != i + 1)
			return tdw_msg(m);
	for (i = 0; i < m->nr_cmdlines; i++) {
		if (ust_tdw_add_cmdline(m->w, m->cmdlines[i].pid, m->cmdlines[i].comm,
					m->err, sizeof(m->err)) < 0)
			return tdw_msg(m);
		free(m->cmdlines[i].comm);
	}
	free(m->cmdlines);
	m->cmdlines = NULL;
	m->nr_cmdlines = 0;
	return 0;
}

int ust_mkt_write(struct ust_mkt *m, int buf, int cpu, uint64_t ts,
		  const void *data, size_t len)
{
	int ret;

	if (ust_mkt_start(m) < 0)
		return -1;
	ret = ust_tdw_event(m->w, buf, cpu, ts, data, len, m->err, sizeof(m->err));
	return ret < 0 ? tdw_failed(m, ret) : 0;
}

int ust_mkt_lost(struct ust_mkt *m, int buf, int cpu, unsigned long count)
{
	int ret;

	if (ust_mkt_start(m) < 0)
		return -1;
	ret = ust_tdw_lost(m->w, buf, cpu, count, m->err, sizeof(m->err));
	return ret < 0 ? tdw_failed(m, ret) : 0;
}

static void free_ctx(struct ust_mkt *m)
{
	int i;

	for (i = 0; i < m->nr_keys; i++)
		free(m->keys[i]);
	free(m->keys);
	m->keys = NULL;
	m->nr_keys = m->nr_written = 0;
	for (i = 0; i < m->nr_buffers; i++)
		free(m->buffers[i]);
	free(m->buffers);
	for (i = 0; i < m->nr_cmdlines; i++)
		free(m->cmdlines[i].comm);
	free(m->cmdlines);
	free(m->clock);
	if (m->tep)
		tep_free(m->tep);
	if (m->syms)
		ust_sym_cache_free(m->syms);
	m->tep = NULL;
	m->syms = NULL;
	m->buffers = NULL;
	m->cmdlines = NULL;
	m->clock = NULL;
}

int ust_mkt_finish(struct ust_mkt *m)
{
	int ret;

	/* An empty spec still makes a valid (empty) trace. */
	if (ust_mkt_start(m) < 0) {
		ust_mkt_discard(m);
		return -1;
	}
	ret = ust_tdw_close(m->w, m->err, sizeof(m->err));
	m->w = NULL;
	if (ret < 0)
		tdw_failed(m, ret);
	free_ctx(m);
	return ret < 0 ? -1 : 0;
}

void ust_mkt_discard(struct ust_mkt *m)
{
	ust_tdw_abort(m->w);
	m->w = NULL;
	free_ctx(m);
}
