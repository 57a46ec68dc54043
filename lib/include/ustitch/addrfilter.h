/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_af: address-range filters in the language of perf's instruction
 * trace filters (seed 001_a69da2a8da120d5b.txt):
 *
 *   ACTION SOURCE:RANGE_SPEC [, ...]     separated by spaces, commas, newlines
 *   ACTION  filter | start | stop
 *   SOURCE  file:OFFSET[/SIZE]@PATH      a range of an object file (by inode)
 *           kernel:ADDR[/SIZE]
 *
 * plus the symbolic forms users expect, resolved to the same ranges:
 *   file:SYMBOL[/SIZE]@PATH   the function's whole size from its symbol table
 *   kernel:SYMBOL[/SIZE]      from /proc/kallsyms
 *
 * Without SIZE a range is the single address.  Files are identified by
 * (kernel dev_t, inode), as the kernel identifies them, so a filter holds
 * wherever and whenever the file is mapped.
 */
#ifndef USTITCH_ADDRFILTER_H
#define USTITCH_ADDRFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ust_af_action {
	UST_AF_FILTER,
	UST_AF_START,
	UST_AF_STOP,
};

struct ust_af_range {
	enum ust_af_action action;
	bool kernel;
	uint64_t start;		/* file offset, or kernel address */
	uint64_t size;		/* >= 1 */
	char *path;		/* file: as given */
	char *symbol;		/* the symbolic form's name, or NULL */
	uint32_t kdev;		/* file: the file's identity */
	uint64_t ino;
};

struct ust_af {
	struct ust_af_range *r;
	int nr;
};

struct ust_af_opts {
	const char *kallsyms;	/* NULL: /proc/kallsyms */
};

/*
 * Parse and resolve @spec into @af.  On error returns a negative errno
 * (-EINVAL: syntax; -ENOENT: no such file, symbol or kernel symbol;
 * -ENOMEM) and writes into @err one line that names the column and what is
 * wrong, e.g.
 *   "column 8: no such file: /nope/libx.so"
 */
int ust_af_parse(const char *spec, const struct ust_af_opts *opts, struct ust_af *af,
		 char *err, size_t errsz);
void ust_af_free(struct ust_af *af);

/* The index of the first range of @action kind holding (kdev, ino, off);
 * -ENOENT if none.  @action < 0: any action.  ust_af_match_kernel likewise. */
int ust_af_match_file(const struct ust_af *af, int action, uint32_t kdev, uint64_t ino,
		      uint64_t off);
int ust_af_match_kernel(const struct ust_af *af, int action, uint64_t addr);

/* "filter file:0x1234/0x56@/path" for range @i (for messages). */
void ust_af_format(const struct ust_af *af, int i, char *buf, size_t len);

/* ---- in the filters' decision graph (lib/addrfilter/af_compile.c) ---- */

struct ust_filter_graph;

/* The index of @af's first "filter kernel:" range, or -ENOENT. */
int ust_af_kernel_filter(const struct ust_af *af);

/* Put the address tests of @af in front of @g.  0, or -E2BIG (too many nodes). */
int ust_af_prepend(const struct ust_af *af, struct ust_filter_graph *g, char *err, size_t errsz);

#endif
