/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Helpers of the tdw and mktrace tests: run the real trace-cmd on written
 * files, and read their records back through libtracecmd.
 */
#ifndef TDW_TESTLIB_H
#define TDW_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tt_env {
	const char *trace_cmd;
	const char *mktrace;
	char dir[256];		/* private temporary directory */
};

extern struct tt_env tt;

/* argv[1] = trace-cmd, argv[2] = ust-mktrace (if @need_mktrace).
 * Returns 0, or 77 (skip) when a program is missing. */
int tt_init(int argc, char **argv, bool need_mktrace);
void tt_fini(void);

/* @name inside the temporary directory (static buffer, 4 of them rotate). */
const char *tt_path(const char *name);
void tt_write_file(const char *path, const char *text);

/* Run @argv (NULL-terminated) with @in as stdin (may be NULL); output and
 * errors are returned malloc'ed.  Returns the exit status, -1 if killed. */
int tt_run(const char *const *argv, const char *in, char **out, char **err);

/* `trace-cmd report -N [opt] FILE` (no plugins: stable text); NULL on failure. */
char *tt_report(const char *file, const char *opt);
/* `trace-cmd dump -v` says "valid trace-cmd file". */
bool tt_dump_valid(const char *file);
/* `trace-cmd convert --file-version 7`, then report of the result. */
char *tt_convert_v7_report(const char *file);

struct tt_rec {
	char buf[32];		/* "" for the top buffer */
	int cpu;
	uint64_t ts;
	int size;		/* data size as the reader sees it (4-byte multiple) */
	unsigned char *data;
	long long missed;	/* missed_events of the record */
	uint64_t offset;	/* file offset of the record's data */
};

/* Every record of every buffer, buffer by buffer, CPU by CPU, in order. */
int tt_read_records(const char *file, int nr_cpus, struct tt_rec **out);
void tt_free_records(struct tt_rec *r, int n);
/* The ring-buffer page (4096 bytes) that holds file offset @off. */
int tt_read_page(const char *file, uint64_t off, unsigned char *page);

uint16_t tt_u16(const unsigned char *p);
uint32_t tt_u32(const unsigned char *p);
uint64_t tt_u64(const unsigned char *p);

#endif
