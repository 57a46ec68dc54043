/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_tdw: a trace.dat version 6 writer (uncompressed).
 *
 * Used by the recorder (raw kernel pages copied unchanged) and by the test
 * fixtures (records packed into pages here).  Per-CPU data is staged in
 * temporary files and laid out page-aligned at ust_tdw_close().
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

struct ust_tdw *ust_tdw_open(const char *path, const struct ust_tdw_opts *opts);

/* An event format text (the "format" file).  System "ftrace" goes into the
 * ftrace section, every other into the event systems. */
int ust_tdw_add_format(struct ust_tdw *w, const char *system, const char *text);
int ust_tdw_set_kallsyms(struct ust_tdw *w, const char *text, size_t len);
int ust_tdw_set_printk(struct ust_tdw *w, const char *text, size_t len);
int ust_tdw_add_cmdline(struct ust_tdw *w, int pid, const char *comm);
/* Has a comm been added for @pid? */
bool ust_tdw_has_cmdline(const struct ust_tdw *w, int pid);

/* Buffer 0 is the top buffer; this adds an instance buffer, returns its index. */
int ust_tdw_add_buffer(struct ust_tdw *w, const char *name);

/* Append one record (the event's bytes, starting with common_type) at @ts.
 * Timestamps must not decrease per (buffer, cpu). */
int ust_tdw_event(struct ust_tdw *w, int buf, int cpu, uint64_t ts,
		  const void *data, size_t len);

/* Mark that @missed events were lost before the next record on (buf, cpu)
 * (sets the page's missed-events bits, storing the count). */
int ust_tdw_lost(struct ust_tdw *w, int buf, int cpu, unsigned long missed);

/* Append a kernel ring-buffer page unchanged (the recorder's path). */
int ust_tdw_raw_page(struct ust_tdw *w, int buf, int cpu, const void *page, size_t len);

/* Write the file and free @w.  Returns 0 or a negative errno. */
int ust_tdw_close(struct ust_tdw *w);
/* Discard without writing. */
void ust_tdw_abort(struct ust_tdw *w);
/* Last error text. */
const char *ust_tdw_error(const struct ust_tdw *w);

#endif
