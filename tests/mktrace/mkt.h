/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust-mktrace internals: a trace.dat fixture generator built on ust_tdw.
 *
 *   mkt_ctx.c    the writer, formats and buffers of one run
 *   mkt_rec.c    records laid out from format texts (through libtraceevent)
 *   mkt_frame.c  the frame forms of `stack` lines
 *   mkt_elf.c    function symbols and build-ids read straight from ELF files
 *   mkt_spec.c   the spec language
 *   mkt_bench.c  the --bench generator
 *   mkt_torture.c the --torture generator (lost events, reused cookies)
 */
#ifndef USTITCH_MKT_H
#define USTITCH_MKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tep_event;
struct tep_format_field;
struct tep_handle;
struct ust_sym_cache;
struct ust_tdw;

/* ---- mkt_ctx.c ---- */

struct ust_mkt {
	const char *out_path;
	int nr_cpus;
	char *clock;
	struct ust_tdw *w;		/* opened with the first record */
	struct tep_handle *tep;		/* the formats added so far, for layouts */
	char **buffers;			/* instance names, in ust_tdw buffer order from 1 */
	int nr_buffers;
	struct { int pid; char *comm; } *cmdlines;	/* until the writer is open */
	int nr_cmdlines;
	char **keys;			/* kbits keys of the formats added */
	int nr_keys;
	int nr_written;			/* how many of them the writer has */
	struct ust_sym_cache *syms;	/* created on the first symbol frame */
	bool io_failed;			/* the last error was I/O, not the input's fault */
	bool native;			/* `native`: the kernel's own records, no stack_flags format */
	char err[512];
};

void ust_mkt_init(struct ust_mkt *m, const char *out_path);
/* Open the writer (once): cpus and clock are fixed from then on. */
int ust_mkt_start(struct ust_mkt *m);
bool ust_mkt_started(const struct ust_mkt *m);
int ust_mkt_finish(struct ust_mkt *m);
void ust_mkt_discard(struct ust_mkt *m);
int ust_mkt_set_error(struct ust_mkt *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Add the kbits format @key (e.g. "sched/sched_switch") once. */
int ust_mkt_add_format(struct ust_mkt *m, const char *key);
/* The event system/name, added from kbits "system/name" on first use. */
struct tep_event *ust_mkt_event(struct ust_mkt *m, const char *system, const char *name);
int ust_mkt_add_buffer(struct ust_mkt *m, const char *name);
/* Buffer index of @name (NULL: the top buffer), -1 if unknown. */
int ust_mkt_buffer(const struct ust_mkt *m, const char *name);
int ust_mkt_add_cmdline(struct ust_mkt *m, int pid, const char *comm);
/* Append one record (starts the writer if needed). */
int ust_mkt_write(struct ust_mkt *m, int buf, int cpu, uint64_t ts,
		  const void *data, size_t len);
int ust_mkt_lost(struct ust_mkt *m, int buf, int cpu, unsigned long count);

/* ---- mkt_rec.c ---- */

/* A record under construction: the fixed part, then dynamic data. */
struct ust_mkt_rec {
	struct tep_event *ev;
	unsigned char *buf;
	size_t len, cap;
	size_t fixed;		/* size of the fixed part (the kernel's struct) */
};

/* Size of the event's fixed part: last field end, rounded to the struct's alignment. */
size_t ust_mkt_fixed_size(struct tep_event *ev);
/* Element size of an array field, from its type (libtraceevent reports 0 for long[]). */
unsigned int ust_mkt_elem_size(const struct tep_format_field *f);

int ust_mkt_rec_init(struct ust_mkt_rec *r, struct tep_event *ev, int pid);
void ust_mkt_rec_fini(struct ust_mkt_rec *r);
/* Store @v as an integer of @size bytes (1, 2, 4 or 8). */
void ust_mkt_store(void *dst, uint64_t v, unsigned int size);
/* Store @v in the scalar field @f (truncated to its size). */
void ust_mkt_rec_put(struct ust_mkt_rec *r, const struct tep_format_field *f, uint64_t v);
/* Store raw bytes at the field's offset (static arrays). */
void ust_mkt_rec_put_bytes(struct ust_mkt_rec *r, const struct tep_format_field *f,
			   const void *data, size_t len);
/* Append @len bytes of dynamic data and point the __data_loc word @f at them. */
int ust_mkt_rec_append(struct ust_mkt_rec *r, const struct tep_format_field *f,
		       const void *data, size_t len);
/* Append bytes without a __data_loc word (for layouts that are broken on purpose). */
int ust_mkt_rec_grow(struct ust_mkt_rec *r, const void *data, size_t len);
void ust_mkt_rec_set_loc(struct ust_mkt_rec *r, const struct tep_format_field *f,
			 uint32_t off, uint32_t len);

/* ---- mkt_frame.c ---- */

struct ust_mkt_frame {
	uint64_t addr;		/* file offset, or the address when ino == 0 */
	uint64_t ino;
	uint32_t kdev;		/* kernel dev_t */
};

int ust_mkt_parse_frame(struct ust_mkt *m, const char *text, struct ust_mkt_frame *fr);

/* ---- mkt_elf.c ---- */

struct ust_mkt_func {
	char *name;
	uint64_t file_off;
	uint64_t size;
};

/* The sized function symbols of @path in executable PT_LOAD segments
 * (.symtab, else .dynsym), with their file offsets. */
int ust_mkt_elf_functions(const char *path, struct ust_mkt_func **out, size_t *nr,
			  char *err, size_t errlen);
void ust_mkt_free_functions(struct ust_mkt_func *f, size_t nr);
/* The GNU build-id note of @path; returns its length, 0 if none. */
size_t ust_mkt_elf_build_id(const char *path, uint8_t *out, size_t max);

/* ---- helpers shared by the parsers ---- */

/* "123" or "0x7b"; false on anything else (sign allowed if @neg_ok). */
bool ust_mkt_parse_u64(const char *s, uint64_t *v);
bool ust_mkt_parse_s64(const char *s, int64_t *v);

/* ---- mkt_spec.c / mkt_bench.c ---- */

/* Returns the exit code: 0, 1 (I/O) or 2 (bad spec). */
int ust_mkt_run_spec(const char *spec_path, const char *out_path);
/* --bench options: all 0 by default. */
struct ust_mkt_bench_opts {
	uint64_t ordinary;	/* events without a cookie, spread among the others */
	uint64_t distinct;	/* distinct stack contents (default and minimum: 64) */
	bool ustitch_buffer;	/* cookies, stacks, mappings in a "ustitch" buffer (BPF layout) */
};
int ust_mkt_run_bench(uint64_t nr_events, uint64_t nr_stacks, const char *out_path,
		      const char *binary, const struct ust_mkt_bench_opts *opts);
/* --torture: a random spec with lost events, and the truth about it (mkt_torture.c). */
int ust_mkt_run_torture(uint64_t seed, const char *spec_path, const char *truth_path);

#endif
