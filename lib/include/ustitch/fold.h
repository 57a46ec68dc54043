/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_fold: folded stacks, the input of flame-graph tools
 * (flamegraph.pl, inferno-flamegraph, speedscope):
 *
 *   comm;user frame (outermost);...;user frame (innermost);kernel frame_[k];... count
 *
 * One line per distinct stack, sorted.  The stacks are those of the
 * samples in a trace (ustitch/sample records, each followed on its CPU by
 * its ftrace/kernel_stack and user_unwind_cookie records): user frames
 * from the stitched user stack, kernel frames named through the trace's
 * kallsyms.  A sample whose user stack was lost shows "[user stack lost]"
 * in place of its user frames, never another stack's.
 */
#ifndef USTITCH_FOLD_H
#define USTITCH_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ust_fold;
struct ust_scan;
struct ust_res;
struct ust_sym_cache;

struct ust_fold *ust_fold_new(void);
void ust_fold_free(struct ust_fold *f);
/* Count @count more for @stack (copied).  0 or -ENOMEM. */
int ust_fold_add(struct ust_fold *f, const char *stack, unsigned long count);
/* "stack count" lines, sorted by stack.  Returns the number of lines, -EIO on a write error. */
long ust_fold_print(const struct ust_fold *f, FILE *out);
unsigned long ust_fold_total(const struct ust_fold *f);
/* The distinct stacks, in the order first seen: @i < ust_fold_nr(). */
size_t ust_fold_nr(const struct ust_fold *f);
const char *ust_fold_stack(const struct ust_fold *f, size_t i, unsigned long *count);

/* What a frame's name is the code of, for flame-graph colours. */
enum ust_fold_kind {
	UST_FOLD_OTHER,		/* the root (the task), unknown or lost frames */
	UST_FOLD_PROGRAM,	/* a program's own code */
	UST_FOLD_LIBRARY,	/* a shared object's (a name ".so" is in) */
	UST_FOLD_KERNEL,	/* "name_[k]" */
};
/* Of a frame name in the stacks: what ust_fold_file saw it in. */
enum ust_fold_kind ust_fold_kind(const struct ust_fold *f, const char *frame);
/*
 * The object (file basename) a frame name was seen in; "[several]" for a
 * name seen in more than one (each program's main), "[kernel.kallsyms]"
 * for "name_[k]", NULL for the root and frames without a name.
 */
const char *ust_fold_object(const struct ust_fold *f, const char *frame);
/* Roots "comm-TID" instead of "comm" (a flame graph per thread); before ust_fold_file. */
void ust_fold_per_thread(struct ust_fold *f, bool on);

/* Frame names, as plugin_ustitch already holds them; NULL: built here. */
struct ust_fold_names {
	struct ust_res *res;
	struct ust_sym_cache *sym;
};

/*
 * One stack, frame by frame, into @sb, then ust_fold_add(f, ust_sb_str(sb), n):
 * _begin puts the root (@comm, "[unknown]" if none; "comm-TID" per
 * thread), _put_user a user stack (@fr[0] innermost; as ust_render names
 * the frames; @key, not 0, is the same for every stack of these frames
 * and names as they do now, ust_stitch_stack_key() for instance: each is
 * then named once), _put_name any other frame ("[user stack lost]", "fn_[k]").
 * For traces of other tracers' too (the babeltrace2 component).
 */
struct ust_sb;
struct ust_dec_frame;

void ust_fold_begin(const struct ust_fold *f, struct ust_sb *sb, const char *comm, int tid);
void ust_fold_put_user(struct ust_fold *f, struct ust_sb *sb, const struct ust_fold_names *n,
		       uint64_t key, const struct ust_dec_frame *fr, unsigned int nr, bool has_files);
void ust_fold_put_name(struct ust_sb *sb, const char *name);

/*
 * What a pass over a trace's samples reads (ust_fold_file, ust_pprof): the
 * first pass if it has the samples (and the events' @weight field, when
 * not NULL), else one made here; the caller's frame names, else a resolver
 * and symbol cache of its own fed the trace's mapping records.  0, or a
 * negative errno with @err.
 */
struct ust_scan_sample;

struct ust_fold_input {
	const struct ust_scan *scan;
	const struct ust_fold_names *names;
	struct ust_scan *own_scan;	/* made here: freed by _fini */
	struct ust_fold_names own;
};
int ust_fold_input_init(struct ust_fold_input *in, const char *path, const struct ust_scan *scan,
			const struct ust_fold_names *names, const char *weight, char *err,
			size_t errsz);
void ust_fold_input_fini(struct ust_fold_input *in);

/*
 * Whether entry @s of @sc's samples is counted in a fold: the samples, or
 * where the recording has none, its events with deferred stacks.
 */
bool ust_fold_counts(const struct ust_scan *sc, const struct ust_scan_sample *s);

/*
 * The user stack entry @s of @sc shows: its request's (the cookie alone
 * where the request is not known), never another task's; NULL when lost
 * or none.
 */
struct ust_scan_sample;
struct ust_stitch_stack;
const struct ust_stitch_stack *ust_fold_user_stack(const struct ust_scan *sc,
						   const struct ust_scan_sample *s);

/*
 * Fold @count entries like @s of the first pass @sc, its user stack @st
 * (NULL: none, or "[user stack lost]" where it asked for one).
 */
void ust_fold_entry(struct ust_fold *f, struct ust_sb *sb, const struct ust_scan *sc,
		    const struct ust_fold_names *names, const struct ust_scan_sample *s,
		    const struct ust_stitch_stack *st, unsigned long count);

/*
 * Fold the samples (or events: ust_fold_counts()) of the trace.dat @path.  @scan: its first pass (the
 * stitched user stacks); NULL: one is made here.  0, or a negative errno with @err.
 */
int ust_fold_file(struct ust_fold *f, const char *path, const struct ust_scan *scan,
		  const struct ust_fold_names *names, char *err, size_t errsz);

/*
 * @f's lines to stdout (@dest "1") or into the file @dest, after a marker
 * line on stdout saying how many and where.  0, or a negative errno with @err.
 */
int ust_fold_write(const struct ust_fold *f, const char *dest, char *err, size_t errsz);

#endif
