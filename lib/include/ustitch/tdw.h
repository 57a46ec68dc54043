/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_tdw: a trace.dat version 6 writer (uncompressed).
 *
 * Used by the recorder (raw kernel pages copied unchanged) and by the test
 * fixtures (records packed into pages here).  Per-CPU data is staged in
 * temporary files and laid out page-aligned at ust_tdw_close().
 *
 * Errors follow the library's convention: 0 (or an index) or a negative
 * errno, the message in the trailing @err/@errsz (NULL/0 allowed).  After a
 * failed write of a staged page the writer stops: every later record,
 * lost mark, raw page and ust_tdw_close() fail with that same errno.
 */
#ifndef USTITCH_TDW_H
#define USTITCH_TDW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ust_tdw;

struct ust_tdw_opts {
	int nr_cpus;			/* every buffer has this many CPUs */
	unsigned int page_size;		/* 0 = 4096 */
	const char *header_page;	/* format texts; NULL = kernel-bits' */
	const char *header_event;
	const char *clock;		/* e.g. "mono"; NULL = "local" */
	const char *uname;		/* NULL = uname(2) of this machine */
};

/* Creates (truncates) @path now.  NULL with errno (and @err) on failure. */
struct ust_tdw *ust_tdw_open(const char *path, const struct ust_tdw_opts *opts,
			     char *err, size_t errsz);

/* An event format text (the "format" file).  System "ftrace" goes into the
 * ftrace section, every other into the event systems.  -EEXIST if its ID or
 * name clashes with another's, -EINVAL for a text without both. */
int ust_tdw_add_format(struct ust_tdw *w, const char *system, const char *text,
		       char *err, size_t errsz);
int ust_tdw_set_kallsyms(struct ust_tdw *w, const char *text, size_t len,
			 char *err, size_t errsz);
/* The same, taking @text (malloc'ed; freed by the writer, also on error):
 * /proc/kallsyms is megabytes, read once per recording. */
int ust_tdw_take_kallsyms(struct ust_tdw *w, char *text, size_t len, char *err, size_t errsz);
/*
 * Cut /proc/kallsyms @text (in place) to the lines a reader needs to name
 * each of @addrs as it would with the whole text: the symbol at or below
 * it and the next one above, which bounds it (tdw_kallsyms.c).  The new
 * length; @len (all kept) when out of memory.
 */
size_t ust_tdw_kallsyms_cut(char *text, size_t len, const uint64_t *addrs, size_t nr_addrs);
int ust_tdw_set_printk(struct ust_tdw *w, const char *text, size_t len,
		       char *err, size_t errsz);
int ust_tdw_add_cmdline(struct ust_tdw *w, int pid, const char *comm,
			char *err, size_t errsz);
/* Has a comm been added for @pid? */
bool ust_tdw_has_cmdline(const struct ust_tdw *w, int pid);

/* Buffer 0 is the top buffer; this adds an instance buffer, returns its index. */
int ust_tdw_add_buffer(struct ust_tdw *w, const char *name, char *err, size_t errsz);

/* Append one record (the event's bytes, starting with common_type) at @ts.
 * Timestamps must not decrease per (buffer, cpu).  The message is formatted
 * only on failure. */
int ust_tdw_event(struct ust_tdw *w, int buf, int cpu, uint64_t ts,
		  const void *data, size_t len, char *err, size_t errsz);

/* Mark that @missed events were lost before the next record on (buf, cpu)
 * (sets the page's missed-events bits, storing the count). */
int ust_tdw_lost(struct ust_tdw *w, int buf, int cpu, unsigned long missed,
		 char *err, size_t errsz);

/* Append a kernel ring-buffer page unchanged (the recorder's path). */
int ust_tdw_raw_page(struct ust_tdw *w, int buf, int cpu, const void *page, size_t len,
		     char *err, size_t errsz);

/* The data records written into buffer @buf so far (ust_tdw_event()'s and
 * the raw pages'), for a recorder's counts. */
unsigned long ust_tdw_buffer_records(const struct ust_tdw *w, int buf);

/* Write the file and free @w (also on failure, which removes the file).
 * Returns 0 or a negative errno. */
int ust_tdw_close(struct ust_tdw *w, char *err, size_t errsz);
/* Discard without writing. */
void ust_tdw_abort(struct ust_tdw *w);

#endif
