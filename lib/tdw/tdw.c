// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_tdw: the writer's object and everything that is not record data:
 * format texts, kallsyms, printk formats, cmdlines and buffers.  These are
 * kept in memory (they are small next to the records) and written out by
 * tdw_file.c at close; records go through tdw_page.c into per-CPU staging
 * files so that memory stays bounded however long the trace is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ustitch/kbits.h"
#include "tdw_priv.h"

static char *dup_or_default(const char *s, const char *def)
{
	return strdup(s ? s : def);
}

/* What trace-cmd itself stores in the UNAME option. */
static char *host_uname(void)
{
	struct utsname u;
	char *s;

	if (uname(&u) < 0)
		return strdup("unknown");
	if (asprintf(&s, "%s %s %s %s %s", u.sysname, u.nodename, u.release,
		     u.version, u.machine) < 0)
		return NULL;
	return s;
}

static bool power_of_two(unsigned int v)
{
	return v && !(v & (v - 1));
}

static struct ust_tdw *open_writer(const char *path, const struct ust_tdw_opts *opts,
				   bool direct, char *err, size_t errsz);

/*
 * What @path holds until ust_tdw_close() puts the finished file there: a
 * small trace whose one event says so.  trace-cmd 3.1.6 does not notice a
 * cut trace.dat (it prints nothing and exits 0, or crashes, depending on
 * where the cut is), so a writer that is killed must leave this instead.
 */
static int write_unfinished(const char *path, const struct ust_tdw_opts *opts,
			    char *err, size_t errsz)
{
	struct ust_tdw_opts o = *opts;
	struct ust_tdw *m;
	unsigned char rec[512] = { 0 };
	uint16_t type = 65030;	/* kernel-bits' ustitch/unfinished */
	int32_t pid = (int32_t)getpid();
	uint32_t loc;
	int n, ret;

	o.nr_cpus = 1;
	m = open_writer(path, &o, true, err, errsz);
	if (!m)
		return -errno;
	n = snprintf((char *)rec + 12, sizeof(rec) - 12,
		     "UNFINISHED: %s (pid %d) has not finished writing this trace: it is still "
		     "running, or it was killed before the end; its events are not in this file",
		     program_invocation_short_name, (int)pid);
	if (n < 0 || (size_t)n >= sizeof(rec) - 12)
		n = (int)strlen((char *)rec + 12);
	loc = (uint32_t)(n + 1) << 16 | 12;	/* __data_loc: length << 16 | offset */
	memcpy(rec, &type, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &loc, 4);
	ret = ust_tdw_add_format(m, "ustitch", ust_kbits_get("ustitch/unfinished"), err, errsz);
	if (!ret)
		ret = ust_tdw_add_cmdline(m, pid, program_invocation_short_name, err, errsz);
	if (!ret)
		ret = ust_tdw_event(m, 0, 0, 0, rec, (size_t)(12 + n + 1), err, errsz);
	if (ret < 0) {
		ust_tdw_abort(m);
		return ret;
	}
	return ust_tdw_close(m, err, errsz);
}

struct ust_tdw *ust_tdw_open(const char *path, const struct ust_tdw_opts *opts,
			     char *err, size_t errsz)
{
	return open_writer(path, opts, false, err, errsz);
}

/*
 * @direct: write @path in place (the placeholder itself).  Otherwise a
 * regular file (or a new one) is written beside it, unnamed (O_TMPFILE),
 * and renamed over it at close: a reader of @path sees the placeholder or
 * the whole trace, never a part of it.  Anything else (/dev/null, a FIFO)
 * is written in place.
 */
static struct ust_tdw *open_writer(const char *path, const struct ust_tdw_opts *opts,
				   bool direct, char *err, size_t errsz)
{
	struct ust_tdw *w;
	struct stat st;
	bool existed;
	int fd = -1, ret;

	if (!path || !opts) {
		errno = -ust_tdw_err(err, errsz, -EINVAL, "ust_tdw_open: no path or options");
		return NULL;
	}
	if (opts->nr_cpus < 1 || opts->nr_cpus > 65536) {
		errno = -ust_tdw_err(err, errsz, -EINVAL, "ust_tdw_open: bad CPU count %d",
				     opts->nr_cpus);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = -ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
		return NULL;
	}
	w->nr_cpus = opts->nr_cpus;
	w->page_size = opts->page_size ? opts->page_size : TDW_DEFAULT_PAGE_SIZE;
	/* The commit word keeps the data length in 27 bits. */
	if (!power_of_two(w->page_size) || w->page_size < 256 ||
	    w->page_size > TDW_COMMIT_MASK) {
		errno = -ust_tdw_err(err, errsz, -EINVAL, "ust_tdw_open: bad page size %u",
				     w->page_size);
		goto fail;
	}
	w->header_page = dup_or_default(opts->header_page, ust_kbits_get("header_page"));
	w->header_event = dup_or_default(opts->header_event, ust_kbits_get("header_event"));
	w->clock = dup_or_default(opts->clock, TDW_DEFAULT_CLOCK);
	w->uname = opts->uname ? strdup(opts->uname) : host_uname();
	w->path = strdup(path);
	if (!w->header_page || !w->header_event || !w->clock || !w->uname || !w->path) {
		errno = -ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
		goto fail;
	}
	if (strchr(w->clock, ' ') || strchr(w->clock, '\n') || !w->clock[0]) {
		errno = -ust_tdw_err(err, errsz, -EINVAL, "ust_tdw_open: bad clock name \"%s\"",
				     w->clock);
		goto fail;
	}
	if (ust_tdw_parse_header_page(w->header_page, &w->pl, err, errsz) < 0) {
		errno = EINVAL;
		goto fail;
	}
	if (w->pl.data_off + 16 > w->page_size) {
		errno = -ust_tdw_err(err, errsz, -EINVAL, "ust_tdw_open: page size %u too small",
				     w->page_size);
		goto fail;
	}
	if (ust_tdw_add_buffer(w, NULL, NULL, 0) != 0) {
		/* The top buffer, the first: nothing but memory can fail. */
		errno = -ust_tdw_err(err, errsz, -ENOMEM, "ust_tdw_open: out of memory");
		goto fail;
	}

	/* Open now so that a bad path fails here, not after a long recording. */
	existed = stat(path, &st) == 0;
	/* Only a regular file of ours is removed when the trace is abandoned. */
	w->created = !existed || S_ISREG(st.st_mode);
	if (!direct && w->created) {
		ret = write_unfinished(path, opts, err, errsz);
		if (ret < 0) {
			errno = -ret;
			goto fail_placeholder;
		}
		/* File systems without O_TMPFILE: in place, as a direct write. */
		fd = ust_tdw_open_beside(path, O_TMPFILE | O_WRONLY, 0644);
		w->replace = fd >= 0;
	}
	if (fd < 0)
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(w->out = fdopen(fd, "w"))) {
		ret = errno;
		if (fd >= 0)
			close(fd);
		errno = -ust_tdw_err(err, errsz, -ret, "%s: %s", path, strerror(ret));
		goto fail_placeholder;
	}
	return w;
fail_placeholder:
	if (!direct && w->created)
		unlink(path);
fail:
	ret = errno;
	ust_tdw_abort(w);
	errno = ret;
	return NULL;
}

/* The finished file, written unnamed beside @w->path, takes its place. */
static int publish(struct ust_tdw *w, char *err, size_t errsz)
{
	char proc[64], *tmp;
	int ret = 0;

	if (asprintf(&tmp, "%s.%d.tmp", w->path, (int)getpid()) < 0)
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(w->out));
	unlink(tmp);
	/* Through /proc, as AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH. */
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) < 0 &&
	    linkat(fileno(w->out), "", AT_FDCWD, tmp, AT_EMPTY_PATH) < 0)
		ret = ust_tdw_err(err, errsz, -errno, "%s: cannot name the finished file: %s",
				  w->path, strerror(errno));
	else if (rename(tmp, w->path) < 0)
		ret = ust_tdw_err(err, errsz, -errno, "%s: %s", w->path, strerror(errno));
	if (ret < 0)
		unlink(tmp);
	free(tmp);
	return ret;
}

static void free_writer(struct ust_tdw *w)
{
	int i, c;

	for (i = 0; i < w->nr_bufs; i++) {
		for (c = 0; c < w->nr_cpus; c++)
			ust_tdw_cpu_fini(&w->bufs[i].cpus[c]);
		free(w->bufs[i].cpus);
		free(w->bufs[i].name);
	}
	free(w->bufs);
	for (i = 0; i < w->nr_formats; i++) {
		free(w->formats[i].system);
		free(w->formats[i].name);
		free(w->formats[i].text);
	}
	free(w->formats);
	for (i = 0; i < w->nr_cmdlines; i++)
		free(w->cmdlines[i].comm);
	free(w->cmdlines);
	free(w->kallsyms);
	free(w->printk);
	free(w->header_page);
	free(w->header_event);
	free(w->clock);
	free(w->uname);
	free(w->path);
	free(w);
}

void ust_tdw_abort(struct ust_tdw *w)
{
	if (!w)
		return;
	if (w->out) {
		fclose(w->out);
		if (w->created)
			unlink(w->path);
	}
	free_writer(w);
}

int ust_tdw_close(struct ust_tdw *w, char *err, size_t errsz)
{
	int ret, i, c;

	if (!w)
		return -EINVAL;
	ret = w->io_error ? ust_tdw_stopped(w, err, errsz) : 0;
	for (i = 0; !ret && i < w->nr_bufs; i++)
		for (c = 0; !ret && c < w->nr_cpus; c++)
			ret = ust_tdw_cpu_flush(w, &w->bufs[i].cpus[c], err, errsz);
	if (!ret)
		ret = ust_tdw_write_file(w, err, errsz);
	if (!ret && w->replace)
		ret = publish(w, err, errsz);
	if (fclose(w->out) != 0 && !ret) {
		ret = -errno;
		ust_tdw_err(err, errsz, ret, "%s: %s", w->path, strerror(-ret));
	}
	w->out = NULL;
	if (ret < 0 && w->created)
		unlink(w->path);
	free_writer(w);
	return ret;
}

/* "name: NAME" and "ID: N" of a format text. */
static int parse_format_head(const char *text, char **name, long *id)
{
	const char *p, *e;
	char *end;

	*name = NULL;
	*id = -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "name:", 5) && !*name) {
			p += 5;
			p += strspn(p, " \t");
			e = p + strcspn(p, " \t\r\n");
			if (e == p)
				return -1;
			*name = strndup(p, e - p);
			if (!*name)
				return -1;
		} else if (!strncmp(p, "ID:", 3) && *id < 0) {
			errno = 0;
			*id = strtol(p + 3, &end, 10);
			if (errno || end == p + 3 || *id < 0 || *id > 65535)
				return -1;
		}
	}
	return *name && *id >= 0 ? 0 : -1;
}

int ust_tdw_add_format(struct ust_tdw *w, const char *system, const char *text,
		       char *err, size_t errsz)
{
	struct tdw_format *f;
	char *name;
	long id;
	int i;

	if (!w || !system || !text || !system[0] || strchr(system, '/'))
		return ust_tdw_err(err, errsz, -EINVAL, "add_format: bad system");
	if (parse_format_head(text, &name, &id) < 0) {
		free(name);
		return ust_tdw_err(err, errsz, -EINVAL,
				   "add_format: %s: the text has no valid \"name:\" and \"ID:\"",
				   system);
	}
	/* Readers key events by ID and by system/name: both must be unique. */
	for (i = 0; i < w->nr_formats; i++) {
		f = &w->formats[i];
		if (f->id == id && !strcmp(f->system, system) && !strcmp(f->name, name) &&
		    !strcmp(f->text, text)) {
			free(name);
			return 0;	/* the same format again */
		}
		if (f->id == id || (!strcmp(f->system, system) && !strcmp(f->name, name))) {
			ust_tdw_err(err, errsz, -EEXIST,
				    "add_format: %s/%s (ID %ld) clashes with %s/%s (ID %ld)",
				    system, name, id, f->system, f->name, f->id);
			free(name);
			return -EEXIST;
		}
	}
	f = realloc(w->formats, (w->nr_formats + 1) * sizeof(*f));
	if (!f) {
		free(name);
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	}
	w->formats = f;
	f = &w->formats[w->nr_formats];
	f->system = strdup(system);
	f->text = strdup(text);
	f->name = name;
	f->id = id;
	f->len = strlen(text);
	if (!f->system || !f->text) {
		free(f->system);
		free(f->text);
		free(name);
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	}
	w->nr_formats++;
	return 0;
}

/* Takes @text (malloc'ed) as section @what; freed here on error. */
static int take_blob(char **dst, size_t *dlen, char *text, size_t len,
		     const char *what, char *err, size_t errsz)
{
	/* The section sizes are u32 in version 6. */
	if (len > UINT32_MAX) {
		free(text);
		return ust_tdw_err(err, errsz, -E2BIG, "%s: too large", what);
	}
	free(*dst);
	*dst = text;
	*dlen = len;
	return 0;
}

static int set_blob(char **dst, size_t *dlen, const char *text, size_t len,
		    const char *what, char *err, size_t errsz)
{
	char *p;

	if (len > UINT32_MAX)	/* said before copying megabytes */
		return take_blob(dst, dlen, NULL, len, what, err, errsz);
	p = malloc(len ? len : 1);
	if (!p)
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	if (len)
		memcpy(p, text, len);
	return take_blob(dst, dlen, p, len, what, err, errsz);
}

int ust_tdw_set_kallsyms(struct ust_tdw *w, const char *text, size_t len,
			 char *err, size_t errsz)
{
	if (!w || (!text && len))
		return -EINVAL;
	return set_blob(&w->kallsyms, &w->kallsyms_len, text, len, "kallsyms", err, errsz);
}

int ust_tdw_take_kallsyms(struct ust_tdw *w, char *text, size_t len, char *err, size_t errsz)
{
	if (!w || !text) {
		free(text);
		return -EINVAL;
	}
	return take_blob(&w->kallsyms, &w->kallsyms_len, text, len, "kallsyms", err, errsz);
}

int ust_tdw_set_printk(struct ust_tdw *w, const char *text, size_t len,
		       char *err, size_t errsz)
{
	if (!w || (!text && len))
		return -EINVAL;
	return set_blob(&w->printk, &w->printk_len, text, len, "printk formats", err, errsz);
}

int ust_tdw_add_cmdline(struct ust_tdw *w, int pid, const char *comm, char *err, size_t errsz)
{
	struct tdw_cmdline *c;
	char *s;
	int i;

	if (!w || !comm)
		return -EINVAL;
	/* One "PID COMM" per line: a newline would split the entry. */
	if (pid < 0 || !comm[0] || strchr(comm, '\n'))
		return ust_tdw_err(err, errsz, -EINVAL, "add_cmdline: bad entry for pid %d", pid);
	s = strdup(comm);
	if (!s)
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	/* Like saved_cmdlines, one comm per pid: the last one wins. */
	for (i = 0; i < w->nr_cmdlines; i++) {
		if (w->cmdlines[i].pid == pid) {
			free(w->cmdlines[i].comm);
			w->cmdlines[i].comm = s;
			return 0;
		}
	}
	c = realloc(w->cmdlines, (w->nr_cmdlines + 1) * sizeof(*c));
	if (!c) {
		free(s);
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	}
	w->cmdlines = c;
	w->cmdlines[w->nr_cmdlines].pid = pid;
	w->cmdlines[w->nr_cmdlines].comm = s;
	w->nr_cmdlines++;
	return 0;
}

bool ust_tdw_has_cmdline(const struct ust_tdw *w, int pid)
{
	int i;

	for (i = 0; w && i < w->nr_cmdlines; i++)
		if (w->cmdlines[i].pid == pid)
			return true;
	return false;
}

/* Internal use with @name NULL: the top buffer, created by ust_tdw_open(). */
int ust_tdw_add_buffer(struct ust_tdw *w, const char *name, char *err, size_t errsz)
{
	struct tdw_buffer *b;
	int i, c;

	if (!w)
		return -EINVAL;
	if (name) {
		if (!name[0] || strchr(name, '/') || strchr(name, '\n'))
			return ust_tdw_err(err, errsz, -EINVAL, "add_buffer: bad name \"%s\"",
					   name);
		for (i = 1; i < w->nr_bufs; i++)
			if (!strcmp(w->bufs[i].name, name))
				return ust_tdw_err(err, errsz, -EEXIST,
						   "add_buffer: \"%s\" exists", name);
	} else if (w->nr_bufs) {
		return ust_tdw_err(err, errsz, -EINVAL, "add_buffer: an instance needs a name");
	}
	b = realloc(w->bufs, (w->nr_bufs + 1) * sizeof(*b));
	if (!b)
		return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	w->bufs = b;
	b = &w->bufs[w->nr_bufs];
	memset(b, 0, sizeof(*b));
	b->name = name ? strdup(name) : NULL;
	b->cpus = calloc(w->nr_cpus, sizeof(*b->cpus));
	if ((name && !b->name) || !b->cpus)
		goto nomem;
	for (c = 0; c < w->nr_cpus; c++)
		if (ust_tdw_cpu_init(w, &b->cpus[c]) < 0)
			goto nomem;
	return w->nr_bufs++;
nomem:
	if (b->cpus)
		for (c = 0; c < w->nr_cpus; c++)
			ust_tdw_cpu_fini(&b->cpus[c]);
	free(b->cpus);
	free(b->name);
	return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
}
