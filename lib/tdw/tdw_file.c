// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_tdw file layout (trace.dat version 6, see trace-cmd.dat.v6(5)):
 *
 *   initial format | header_page | header_event | ftrace formats |
 *   event systems | kallsyms | printk | cmdlines | CPU count |
 *   "options  " options... u16 0 |
 *   "flyrecord" (offset, size) per CPU of the top buffer, trace_clock |
 *   per instance: "flyrecord" (offset, size) per CPU, trace_clock |
 *   page-aligned CPU data of every buffer
 *
 * Everything before the CPU data is built in memory first: the BUFFER
 * options and the flyrecord pairs hold file offsets that are only known
 * once the size of that metadata is, and are patched in afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "tdw_priv.h"
#include "ustitch/grow.h"

#define FILE_VERSION		"6"

/* Option ids (trace-cmd.dat.v7(5) lists them; v6 uses the same). */
#define OPT_DONE		0
#define OPT_BUFFER		3
#define OPT_TRACECLOCK		4
#define OPT_UNAME		5

/* A file in @path's directory (O_TMPFILE: a staging file, unnamed), for the file and its pages. */
int ust_tdw_open_beside(const char *path, int flags, mode_t mode)
{
	char *dir = strdup(path), *slash;
	int fd, e;

	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, flags | O_CLOEXEC, mode);
	e = errno;
	free(dir);
	errno = e;
	return fd;
}

/* Clocks of a trace_clock file; the one in use is shown in brackets. */
static const char *const known_clocks[] = {
	"local", "global", "counter", "uptime", "perf", "mono", "mono_raw",
	"boot", "tai", "x86-tsc",
};

struct mem {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void *mem_grow(struct mem *m, size_t n)
{
	void *p;

	if (m->oom)
		return NULL;
	p = ust_grow(m->p, &m->cap, m->len + n, 1, 4096);
	if (!p) {
		m->oom = true;
		return NULL;
	}
	m->p = p;
	p = m->p + m->len;
	m->len += n;
	return p;
}

static void put(struct mem *m, const void *data, size_t n)
{
	void *p = mem_grow(m, n);

	if (p && n)
		memcpy(p, data, n);
}

static void put_str0(struct mem *m, const char *s)
{
	put(m, s, strlen(s) + 1);
}

static void put_u16(struct mem *m, uint16_t v)
{
	put(m, &v, 2);
}

static void put_u32(struct mem *m, uint32_t v)
{
	put(m, &v, 4);
}

static void put_u64(struct mem *m, uint64_t v)
{
	put(m, &v, 8);
}

static void patch_u64(struct mem *m, size_t at, uint64_t v)
{
	if (!m->oom)
		memcpy(m->p + at, &v, 8);
}

static void put_initial(struct ust_tdw *w, struct mem *m)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44 };
	unsigned char endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	unsigned char long_size = sizeof(long);

	put(m, magic, sizeof(magic));
	put(m, "tracing", 7);
	put_str0(m, FILE_VERSION);
	put(m, &endian, 1);
	put(m, &long_size, 1);
	put_u32(m, w->page_size);
}

static void put_headers(struct ust_tdw *w, struct mem *m)
{
	put_str0(m, "header_page");
	put_u64(m, strlen(w->header_page));
	put(m, w->header_page, strlen(w->header_page));
	put_str0(m, "header_event");
	put_u64(m, strlen(w->header_event));
	put(m, w->header_event, strlen(w->header_event));
}

static bool is_ftrace(const struct tdw_format *f)
{
	return !strcmp(f->system, "ftrace");
}

static void put_formats(struct ust_tdw *w, struct mem *m)
{
	uint32_t nr_ftrace = 0, nr_systems = 0, nr;
	int i, j, k;

	for (i = 0; i < w->nr_formats; i++)
		nr_ftrace += is_ftrace(&w->formats[i]);
	put_u32(m, nr_ftrace);
	for (i = 0; i < w->nr_formats; i++) {
		if (!is_ftrace(&w->formats[i]))
			continue;
		put_u64(m, w->formats[i].len);
		put(m, w->formats[i].text, w->formats[i].len);
	}

	/* Systems in the order they were first seen, each listed once. */
	for (i = 0; i < w->nr_formats; i++) {
		if (is_ftrace(&w->formats[i]))
			continue;
		for (j = 0; j < i && strcmp(w->formats[j].system, w->formats[i].system); j++)
			;
		nr_systems += j == i;
	}
	put_u32(m, nr_systems);
	for (i = 0; i < w->nr_formats; i++) {
		if (is_ftrace(&w->formats[i]))
			continue;
		for (j = 0; j < i && strcmp(w->formats[j].system, w->formats[i].system); j++)
			;
		if (j < i)
			continue;
		put_str0(m, w->formats[i].system);
		for (nr = 0, k = i; k < w->nr_formats; k++)
			nr += !strcmp(w->formats[k].system, w->formats[i].system);
		put_u32(m, nr);
		for (k = i; k < w->nr_formats; k++) {
			if (strcmp(w->formats[k].system, w->formats[i].system))
				continue;
			put_u64(m, w->formats[k].len);
			put(m, w->formats[k].text, w->formats[k].len);
		}
	}
}

static void put_tables(struct ust_tdw *w, struct mem *m)
{
	size_t at, start;
	int i;

	put_u32(m, (uint32_t)w->kallsyms_len);
	put(m, w->kallsyms, w->kallsyms_len);
	put_u32(m, (uint32_t)w->printk_len);
	put(m, w->printk, w->printk_len);

	/* The cmdlines size is a u64, unlike its neighbours. */
	at = m->len;
	put_u64(m, 0);
	start = m->len;
	for (i = 0; i < w->nr_cmdlines; i++) {
		char line[64];
		int n = snprintf(line, sizeof(line), "%d ", w->cmdlines[i].pid);

		put(m, line, n);
		put(m, w->cmdlines[i].comm, strlen(w->cmdlines[i].comm));
		put(m, "\n", 1);
	}
	patch_u64(m, at, m->len - start);
}

/* The trace_clock file's text: every clock, the used one in brackets. */
static char *clock_text(struct ust_tdw *w)
{
	struct mem t = { 0 };
	bool found = false;
	size_t i;

	for (i = 0; i < sizeof(known_clocks) / sizeof(known_clocks[0]); i++) {
		bool cur = !strcmp(known_clocks[i], w->clock);

		found |= cur;
		if (i)
			put(&t, " ", 1);
		if (cur)
			put(&t, "[", 1);
		put(&t, known_clocks[i], strlen(known_clocks[i]));
		if (cur)
			put(&t, "]", 1);
	}
	if (!found) {
		put(&t, " [", 2);
		put(&t, w->clock, strlen(w->clock));
		put(&t, "]", 1);
	}
	put(&t, "\n", 2);	/* with the NUL */
	if (t.oom) {
		free(t.p);
		return NULL;
	}
	return (char *)t.p;
}

static void put_option(struct mem *m, uint16_t id, const void *data, uint32_t size)
{
	put_u16(m, id);
	put_u32(m, size);
	put(m, data, size);
}

/* Reserve the (offset, size) pairs of one buffer; returns where they start. */
static size_t put_flyrecord(struct ust_tdw *w, struct mem *m)
{
	size_t at;
	int c;

	put(m, "flyrecord", 10);
	at = m->len;
	for (c = 0; c < w->nr_cpus; c++) {
		put_u64(m, 0);
		put_u64(m, 0);
	}
	return at;
}

/* A failed write's errno (ENOSPC, EFBIG, ...), EIO if it left none. */
static int write_failed(struct ust_tdw *w, char *err, size_t errsz)
{
	int e = errno ? errno : EIO;

	return ust_tdw_err(err, errsz, -e, "%s: write failed: %s", w->path, strerror(e));
}

static int copy_stage(struct ust_tdw *w, struct tdw_cpu *c, char *err, size_t errsz)
{
	char buf[65536];
	size_t n;
	int e;

	if (!c->stage)
		return 0;
	errno = 0;
	if (fflush(c->stage) != 0 || fseek(c->stage, 0, SEEK_SET) != 0) {
		e = errno ? errno : EIO;
		return ust_tdw_err(err, errsz, -e, "%s: staging file: %s", w->path, strerror(e));
	}
	while ((n = fread(buf, 1, sizeof(buf), c->stage)) > 0) {
		errno = 0;
		if (fwrite(buf, 1, n, w->out) != n)
			return write_failed(w, err, errsz);
	}
	if (ferror(c->stage))
		return ust_tdw_err(err, errsz, -EIO, "%s: staging file: read failed", w->path);
	/* Free the disk space early: a big trace has several of these. */
	fclose(c->stage);
	c->stage = NULL;
	free(c->stage_buf);
	c->stage_buf = NULL;
	return 0;
}

int ust_tdw_write_file(struct ust_tdw *w, char *err, size_t errsz)
{
	struct mem m = { 0 };
	size_t *buf_opt = NULL, *pairs = NULL;
	uint64_t off, size;
	char *clock = NULL;
	int i, c, ret = 0;

	clock = clock_text(w);
	buf_opt = calloc(w->nr_bufs, sizeof(*buf_opt));
	pairs = calloc(w->nr_bufs, sizeof(*pairs));
	if (!clock || !buf_opt || !pairs) {
		ret = ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
		goto out;
	}

	put_initial(w, &m);
	put_headers(w, &m);
	put_formats(w, &m);
	put_tables(w, &m);
	put_u32(&m, (uint32_t)w->nr_cpus);

	put(&m, "options  ", 10);
	put_option(&m, OPT_UNAME, w->uname, strlen(w->uname) + 1);
	/*
	 * The text goes into the option too, not only after each buffer's
	 * flyrecord pairs: libtracecmd 1.3.1 parses the option's bytes as a
	 * clock, and an empty option made it read uninitialized memory, so
	 * that a few runs in a hundred showed raw nanoseconds.  It parses the
	 * clock twice then and leaks the first parse: tests/lsan.supp.
	 */
	put_option(&m, OPT_TRACECLOCK, clock, strlen(clock) + 1);
	for (i = 1; i < w->nr_bufs; i++) {
		put_u16(&m, OPT_BUFFER);
		put_u32(&m, 8 + strlen(w->bufs[i].name) + 1);
		buf_opt[i] = m.len;
		put_u64(&m, 0);
		put_str0(&m, w->bufs[i].name);
	}
	put_u16(&m, OPT_DONE);	/* version 6: no size after the last id */

	/*
	 * The top buffer's flyrecord follows the options directly, each
	 * instance's is where its BUFFER option points.  With TRACECLOCK
	 * present, readers (trace-cmd dump too, for instances) expect the
	 * trace_clock text, u64-sized, after each one's pairs.
	 */
	for (i = 0; i < w->nr_bufs; i++) {
		if (i)
			patch_u64(&m, buf_opt[i], m.len);
		pairs[i] = put_flyrecord(w, &m);
		put_u64(&m, strlen(clock));
		put(&m, clock, strlen(clock));
	}

	/* Each CPU's data starts on a page boundary and is whole pages. */
	off = (m.len + w->page_size - 1) / w->page_size * w->page_size;
	for (i = 0; i < w->nr_bufs; i++) {
		for (c = 0; c < w->nr_cpus; c++) {
			size = w->bufs[i].cpus[c].nr_pages * w->page_size;
			patch_u64(&m, pairs[i] + c * 16, off);
			patch_u64(&m, pairs[i] + c * 16 + 8, size);
			off += size;
		}
	}
	if (m.oom) {
		ret = ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
		goto out;
	}
	off = (m.len + w->page_size - 1) / w->page_size * w->page_size;
	errno = 0;
	if (fwrite(m.p, 1, m.len, w->out) != m.len) {
		ret = write_failed(w, err, errsz);
		goto out;
	}
	for (size = m.len; size < off; size++)
		if (fputc(0, w->out) == EOF) {
			ret = write_failed(w, err, errsz);
			goto out;
		}
	for (i = 0; i < w->nr_bufs && !ret; i++)
		for (c = 0; c < w->nr_cpus && !ret; c++)
			ret = copy_stage(w, &w->bufs[i].cpus[c], err, errsz);
	errno = 0;
	if (!ret && fflush(w->out) != 0)
		ret = write_failed(w, err, errsz);
out:
	free(m.p);
	free(clock);
	free(buf_opt);
	free(pairs);
	return ret;
}
