// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_tdw ring-buffer pages: records are packed the way the kernel's ring
 * buffer lays them out (kernel/trace/ring_buffer.c), so that readers see
 * exactly what a real recording would give them:
 *
 *   page:  u64 timestamp of the first record | commit word (kernel long)
 *          | records from data_off on
 *   event: u32 { type_len:5, time_delta:27 } [u32 array[0]] data
 *
 * The data is padded to 4 bytes (RB_ARCH_ALIGNMENT of x86-64), so record
 * bytes are only 4-byte aligned.  A record that does not fit the rest of
 * the page ends it with a padding event, as the kernel does; a page after
 * lost events keeps its real end so that the lost count fits behind it
 * (ring_buffer_read_page() uses real_end for the same reason).
 *
 * The file endianness is the host's; the event header bit-fields follow it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tdw_priv.h"

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put_long(unsigned char *p, uint64_t v, unsigned int size)
{
	uint32_t v32 = (uint32_t)v;

	if (size == 8)
		put64(p, v);
	else
		memcpy(p, &v32, 4);
}

static uint32_t event_header(unsigned int type_len, uint32_t delta)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return ((uint32_t)type_len << TDW_TS_BITS) | (delta & TDW_TS_MASK);
#else
	return type_len | ((delta & TDW_TS_MASK) << 5);
#endif
}

/* One "field: TYPE NAME; offset:N; size:N; ..." line of header_page. */
static int header_field(const char *text, const char *name, unsigned int *off,
			unsigned int *size)
{
	size_t nlen = strlen(name);
	const char *p, *semi, *o, *s, *eol;

	for (p = text; (p = strstr(p, "field:")); p++) {
		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		semi = memchr(p, ';', eol - p);
		if (!semi || semi - p < (long)nlen + 1 ||
		    strncmp(semi - nlen, name, nlen) ||
		    (semi[-(long)nlen - 1] != ' ' && semi[-(long)nlen - 1] != '\t'))
			continue;
		o = strstr(semi, "offset:");
		s = strstr(semi, "size:");
		if (!o || !s || o > eol || s > eol)
			return -1;
		*off = (unsigned int)strtoul(o + 7, NULL, 10);
		*size = (unsigned int)strtoul(s + 5, NULL, 10);
		return 0;
	}
	return -1;
}

int ust_tdw_parse_header_page(const char *text, struct tdw_page_layout *pl,
			      char *err, size_t errsz)
{
	unsigned int ts_size, data_size;

	if (header_field(text, "timestamp", &pl->ts_off, &ts_size) < 0 ||
	    header_field(text, "commit", &pl->commit_off, &pl->commit_size) < 0 ||
	    header_field(text, "data", &pl->data_off, &data_size) < 0)
		return ust_tdw_err(err, errsz, -1,
				   "header_page: no timestamp, commit or data field");
	if (ts_size != 8 || (pl->commit_size != 4 && pl->commit_size != 8) ||
	    pl->ts_off + 8 > pl->data_off || pl->commit_off + pl->commit_size > pl->data_off ||
	    pl->data_off % 4)
		return ust_tdw_err(err, errsz, -1, "header_page: unsupported page header layout");
	return 0;
}

int ust_tdw_cpu_init(struct ust_tdw *w, struct tdw_cpu *c)
{
	(void)w;
	memset(c, 0, sizeof(*c));
	return 0;
}

void ust_tdw_cpu_fini(struct tdw_cpu *c)
{
	if (c->stage)
		fclose(c->stage);
	free(c->stage_buf);
	free(c->page);
	memset(c, 0, sizeof(*c));
}

static unsigned int page_cap(const struct ust_tdw *w)
{
	return w->page_size - w->pl.data_off;
}

/*
 * Staging files live beside the output when the file system allows
 * (O_TMPFILE): /tmp may be a tmpfs, i.e. memory, and a long recording
 * should cost disk, not RAM.  They vanish with their last descriptor.
 */
static FILE *open_stage(struct ust_tdw *w)
{
	int fd = ust_tdw_open_beside(w->path, O_TMPFILE | O_RDWR, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;

	if (fd >= 0 && !f)
		close(fd);
	return f ? f : tmpfile();
}

/*
 * A failure here loses the page: it is returned, with its message, to the
 * call that staged the page, and w->io_error stops the writer from then on
 * (see tdw_priv.h).
 */
static int stage_page(struct ust_tdw *w, struct tdw_cpu *c, const void *page,
		      char *err, size_t errsz)
{
	int e;

	if (!c->stage) {
		c->stage = open_stage(w);
		if (!c->stage) {
			e = errno ? errno : EIO;
			return w->io_error = ust_tdw_err(err, errsz, -e, "%s: staging file: %s",
							 w->path, strerror(e));
		}
		/* glibc takes a size only with a buffer; without one, stdio's own. */
		c->stage_buf = malloc(TDW_STAGE_BUF);
		if (c->stage_buf)
			setvbuf(c->stage, c->stage_buf, _IOFBF, TDW_STAGE_BUF);
	}
	errno = 0;
	if (fwrite(page, w->page_size, 1, c->stage) != 1) {
		e = errno ? errno : EIO;
		return w->io_error = ust_tdw_err(err, errsz, -e,
						 "%s: staging file: write failed: %s",
						 w->path, strerror(e));
	}
	c->nr_pages++;
	return 0;
}

int ust_tdw_stopped(const struct ust_tdw *w, char *err, size_t errsz)
{
	return ust_tdw_err(err, errsz, w->io_error, "%s: staging file: an earlier write failed: %s",
			   w->path, strerror(-w->io_error));
}

static int start_page(struct ust_tdw *w, struct tdw_cpu *c, uint64_t ts, char *err,
		      size_t errsz)
{
	if (!c->page) {
		c->page = malloc(w->page_size);
		if (!c->page)
			return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	}
	memset(c->page, 0, w->page_size);
	put64(c->page + w->pl.ts_off, ts);
	c->open = true;
	c->used = 0;
	c->page_ts = ts;
	return 0;
}

/*
 * Finish the open page: set its commit word and stage it.  @pad: the page
 * ends because the next record does not fit; fill it with a padding event
 * as the kernel does (unless only 4 bytes remain: a padding header there
 * would have its length word outside the page).
 */
static int end_page(struct ust_tdw *w, struct tdw_cpu *c, bool pad, char *err, size_t errsz)
{
	unsigned char *data = c->page + w->pl.data_off;
	unsigned int cap = page_cap(w), rest = cap - c->used;
	uint64_t commit;
	int ret;

	if (c->missed) {
		/* Lost events: keep the real end, store the count if it fits. */
		commit = c->used | TDW_MISSED_EVENTS;
		if (c->nr_missed && rest >= w->pl.commit_size) {
			put_long(data + c->used, c->nr_missed, w->pl.commit_size);
			commit |= TDW_MISSED_STORED;
		}
	} else {
		if (pad && rest >= 8) {
			/* time_delta must be non-zero for a padding with a length */
			put32(data + c->used, event_header(TDW_TYPE_PADDING, 1));
			put32(data + c->used + 4, rest - 4);
			c->used = cap;
		}
		commit = c->used;
	}
	put_long(c->page + w->pl.commit_off, commit, w->pl.commit_size);
	ret = stage_page(w, c, c->page, err, errsz);
	c->open = false;
	c->missed = false;
	c->nr_missed = 0;
	return ret;
}

int ust_tdw_cpu_flush(struct ust_tdw *w, struct tdw_cpu *c, char *err, size_t errsz)
{
	int ret;

	/* A loss with no record after it still gets its (empty) page. */
	if (!c->open && c->missed) {
		ret = start_page(w, c, c->have_ts ? c->last_ts : 0, err, errsz);
		if (ret < 0)
			return ret;
	}
	return c->open ? end_page(w, c, false, err, errsz) : 0;
}

/* A page write may go to (@buf, @cpu): it exists and the writer has not stopped. */
static int check_target(struct ust_tdw *w, int buf, int cpu, char *err, size_t errsz)
{
	if (!w)
		return -EINVAL;
	if (buf < 0 || buf >= w->nr_bufs)
		return ust_tdw_err(err, errsz, -EINVAL, "no buffer %d", buf);
	if (cpu < 0 || cpu >= w->nr_cpus)
		return ust_tdw_err(err, errsz, -EINVAL, "no CPU %d (the trace has %d)", cpu,
				   w->nr_cpus);
	if (w->io_error)
		return ust_tdw_stopped(w, err, errsz);
	return 0;
}

static const char *buf_name(const struct ust_tdw *w, int buf)
{
	return w->bufs[buf].name ? w->bufs[buf].name : "top";
}

int ust_tdw_event(struct ust_tdw *w, int buf, int cpu, uint64_t ts,
		  const void *data, size_t len, char *err, size_t errsz)
{
	unsigned int cap, hdr, dlen, need, ext = 0;
	struct tdw_cpu *c;
	unsigned char *p;
	uint64_t delta = 0;
	int ret;

	ret = check_target(w, buf, cpu, err, errsz);
	if (ret < 0)
		return ret;
	c = &w->bufs[buf].cpus[cpu];
	cap = page_cap(w);
	/* The largest record: a whole page but for its 8-byte header. */
	if (!data || !len || len > cap - 8)
		return ust_tdw_err(err, errsz, -EINVAL,
				   "buffer %s cpu %d: a record of %zu bytes does not fit a page (1..%u)",
				   buf_name(w, buf), cpu, len, cap - 8);
	if (c->have_ts && ts < c->last_ts)
		return ust_tdw_err(err, errsz, -EINVAL,
				   "buffer %s cpu %d: timestamp %llu is before the previous record's %llu",
				   buf_name(w, buf), cpu, (unsigned long long)ts,
				   (unsigned long long)c->last_ts);

	dlen = (len + TDW_ALIGN - 1) & ~(TDW_ALIGN - 1);
	hdr = dlen > TDW_MAX_SMALL_DATA ? 8 : 4;
	need = hdr + dlen;

	if (c->open) {
		delta = ts - c->page_ts;
		if (delta > TDW_TS_MASK)
			ext = 8;
		/* A delta beyond TIME_EXTEND's 59 bits: a new page has an absolute ts. */
		if (c->used + ext + need > cap || (delta >> TDW_TS_BITS) > UINT32_MAX) {
			ret = end_page(w, c, true, err, errsz);
			if (ret < 0)
				return ret;
		}
	}
	if (!c->open) {
		ret = start_page(w, c, ts, err, errsz);
		if (ret < 0)
			return ret;
		delta = 0;
		ext = 0;
	}

	p = c->page + w->pl.data_off + c->used;
	if (ext) {
		put32(p, event_header(TDW_TYPE_TIME_EXTEND, delta & TDW_TS_MASK));
		put32(p + 4, (uint32_t)(delta >> TDW_TS_BITS));
		p += 8;
		delta = 0;
	}
	if (hdr == 8) {
		put32(p, event_header(0, (uint32_t)delta));
		put32(p + 4, dlen + 4);	/* the length counts its own word */
	} else {
		put32(p, event_header(dlen / 4, (uint32_t)delta));
	}
	memcpy(p + hdr, data, len);	/* the page is zeroed: tail padding is 0 */
	c->used += ext + need;
	c->page_ts = ts;
	c->last_ts = ts;
	c->have_ts = true;
	w->bufs[buf].nr_records++;
	return 0;
}

int ust_tdw_lost(struct ust_tdw *w, int buf, int cpu, unsigned long missed,
		 char *err, size_t errsz)
{
	struct tdw_cpu *c;
	int ret;

	ret = check_target(w, buf, cpu, err, errsz);
	if (ret < 0)
		return ret;
	c = &w->bufs[buf].cpus[cpu];
	/* Two losses in a row with no record between them are one loss. */
	if (c->open) {
		ret = end_page(w, c, false, err, errsz);
		if (ret < 0)
			return ret;
	}
	if (!c->missed) {
		c->missed = true;
		c->nr_missed = missed;
	} else if (c->nr_missed && missed) {
		c->nr_missed += missed;
	} else {
		c->nr_missed = 0;	/* one unknown count makes the sum unknown */
	}
	return 0;
}

/*
 * The data records of a kernel page, for the recorder's counts: time
 * extends, time stamps and padding (a discarded record, or the page's
 * end) are not records.  Stops at the commit, or at anything malformed.
 */
static unsigned long page_records(const struct ust_tdw *w, const unsigned char *page, size_t len)
{
	uint64_t commit = 0;
	uint32_t commit32;
	size_t off = w->pl.data_off, end;
	unsigned long n = 0;

	if (w->pl.commit_size == 8) {
		memcpy(&commit, page + w->pl.commit_off, 8);
	} else {
		memcpy(&commit32, page + w->pl.commit_off, 4);
		commit = commit32;
	}
	end = off + (size_t)(commit & TDW_COMMIT_MASK);
	if (end > len)
		end = len;
	while (off + 4 <= end) {
		uint32_t h, a0 = 0, step, delta;
		unsigned int type_len;

		memcpy(&h, page + off, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		type_len = h >> TDW_TS_BITS;
		delta = h & TDW_TS_MASK;
#else
		type_len = h & 0x1f;
		delta = h >> 5;
#endif
		if (off + 8 <= end)
			memcpy(&a0, page + off + 4, 4);
		if (type_len == TDW_TYPE_PADDING) {
			if (!delta || !a0)
				break;	/* no delta: the rest of the page is empty */
			step = 4 + a0;
		} else if (type_len > TDW_TYPE_PADDING) {
			step = 8;	/* time extend, time stamp */
		} else if (type_len) {
			step = 4 + type_len * 4;
			n++;
		} else {
			if (a0 < 4)
				break;
			step = 4 + a0;
			n++;
		}
		off += step;
	}
	return n;
}

int ust_tdw_raw_page(struct ust_tdw *w, int buf, int cpu, const void *page, size_t len,
		     char *err, size_t errsz)
{
	struct tdw_cpu *c;
	int ret;

	ret = check_target(w, buf, cpu, err, errsz);
	if (ret < 0)
		return ret;
	if (!page || len < w->pl.data_off || len > w->page_size)
		return ust_tdw_err(err, errsz, -EINVAL, "raw page of %zu bytes (page size %u)",
				   len, w->page_size);
	c = &w->bufs[buf].cpus[cpu];
	ret = ust_tdw_cpu_flush(w, c, err, errsz);
	if (ret < 0)
		return ret;
	if (!c->page) {
		c->page = malloc(w->page_size);
		if (!c->page)
			return ust_tdw_err(err, errsz, -ENOMEM, "out of memory");
	}
	/* A short read of trace_pipe_raw: the rest of the page is unused. */
	memcpy(c->page, page, len);
	memset(c->page + len, 0, w->page_size - len);
	ret = stage_page(w, c, c->page, err, errsz);
	if (!ret)
		w->bufs[buf].nr_records += page_records(w, c->page, len);
	return ret;
}

unsigned long ust_tdw_buffer_records(const struct ust_tdw *w, int buf)
{
	return buf >= 0 && buf < w->nr_bufs ? w->bufs[buf].nr_records : 0;
}
