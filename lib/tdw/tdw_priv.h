/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_tdw internals, shared by tdw.c (metadata and API), tdw_page.c
 * (ring-buffer pages) and tdw_file.c (the file layout at close).
 */
#ifndef USTITCH_TDW_PRIV_H
#define USTITCH_TDW_PRIV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ustitch/tdw.h"

#define TDW_DEFAULT_PAGE_SIZE	4096U
#define TDW_DEFAULT_CLOCK	"local"

/* Ring-buffer event header (header_event): 5-bit type_len, 27-bit delta. */
#define TDW_TYPE_PADDING	29
#define TDW_TYPE_TIME_EXTEND	30
#define TDW_TS_BITS		27
#define TDW_TS_MASK		((1U << TDW_TS_BITS) - 1)
#define TDW_MAX_SMALL_DATA	(28 * 4)	/* largest data with type_len != 0 */
#define TDW_ALIGN		4		/* RB_ARCH_ALIGNMENT of x86-64 */

/* Commit word flags of a read page (kernel ring_buffer.c). */
#define TDW_MISSED_EVENTS	(1ULL << 31)
#define TDW_MISSED_STORED	(1ULL << 30)
#define TDW_COMMIT_MASK		((1ULL << 27) - 1)

struct tdw_format {
	char *system;
	char *name;
	long id;
	char *text;
	size_t len;
};

struct tdw_cmdline {
	int pid;
	char *comm;
};

/*
 * The stdio buffer of a staging file: pages come one at a time, and
 * stdio's own buffer (st_blksize, 4 KiB) made a write() of each.
 */
#define TDW_STAGE_BUF (256 * 1024)

/* The page being filled and the staged, finished pages of one (buffer, cpu). */
struct tdw_cpu {
	FILE *stage;		/* finished pages; created with the first one */
	char *stage_buf;	/* its stdio buffer, TDW_STAGE_BUF bytes */
	uint64_t nr_pages;
	unsigned char *page;	/* page_size bytes, allocated once */
	bool open;		/* @page holds records not yet staged */
	unsigned int used;	/* data bytes used after the page header */
	uint64_t page_ts;	/* timestamp of the last record put on the page */
	uint64_t last_ts;	/* of the last record on this cpu, for the order check */
	bool have_ts;
	bool missed;		/* the next page starts after lost events */
	unsigned long nr_missed; /* their count, 0 if unknown */
};

struct tdw_buffer {
	char *name;		/* NULL for the top buffer */
	struct tdw_cpu *cpus;
	unsigned long nr_records;	/* data records written, raw pages' too */
};

/* Where the fields of a ring-buffer page header are (from header_page). */
struct tdw_page_layout {
	unsigned int ts_off;
	unsigned int commit_off;
	unsigned int commit_size;	/* the kernel's long: 4 or 8 */
	unsigned int data_off;
};

struct ust_tdw {
	char *path;
	FILE *out;
	bool created;			/* we created/truncated @path: remove on failure */
	bool replace;			/* @out is unnamed, renamed over @path at close */
	int nr_cpus;
	unsigned int page_size;
	struct tdw_page_layout pl;
	char *header_page;
	char *header_event;
	char *clock;
	char *uname;

	struct tdw_format *formats;
	int nr_formats;
	char *kallsyms;
	size_t kallsyms_len;
	char *printk;
	size_t printk_len;
	struct tdw_cmdline *cmdlines;
	int nr_cmdlines;

	struct tdw_buffer *bufs;
	int nr_bufs;

	/*
	 * A staging write failed (negative errno), 0 if none.  Not an error
	 * state for the caller to read: the failure, with its message, was
	 * returned by the call that hit it.  The page being written is gone,
	 * so the trace is incomplete: this only stops every later write (and
	 * ust_tdw_close()) from making a file that silently lacks it.
	 */
	int io_error;
};

/* ust_tdw_err.c: format the message into @err (if any); returns @ret. */
int ust_tdw_err(char *err, size_t errsz, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* tdw.c: open(2) @flags in the directory of @path (for O_TMPFILE); fd or -1. */
int ust_tdw_open_beside(const char *path, int flags, mode_t mode);

/* tdw_page.c */
int ust_tdw_parse_header_page(const char *text, struct tdw_page_layout *pl,
			      char *err, size_t errsz);
int ust_tdw_cpu_init(struct ust_tdw *w, struct tdw_cpu *c);
void ust_tdw_cpu_fini(struct tdw_cpu *c);
/* Stage the open page and any pending lost-events mark. */
int ust_tdw_cpu_flush(struct ust_tdw *w, struct tdw_cpu *c, char *err, size_t errsz);
/* w->io_error, with a message: the writer stopped after a failed write. */
int ust_tdw_stopped(const struct ust_tdw *w, char *err, size_t errsz);

/* tdw_file.c */
int ust_tdw_write_file(struct ust_tdw *w, char *err, size_t errsz);

#endif
