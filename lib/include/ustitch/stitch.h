/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_stitch: the index that joins each requesting event to the user stack
 * the kernel recorded later under the same cookie.
 *
 * A request is a user_unwind_cookie record together with the event just
 * before it on its CPU and buffer (the event that asked for the stack).
 * Stacks are keyed by cookie; identical frames are stored once; one stack serves every request of one kernel
 * entry.  Cookies are unique system-wide, so a stack may sit on another
 * CPU or in another instance buffer than its requests; a stack in the
 * request's own buffer is preferred.
 */
#ifndef USTITCH_STITCH_H
#define USTITCH_STITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ustitch/decode.h"
#include "ustitch/hmap.h"

/* A request as the first pass found it (the argument of add_request). */
struct ust_stitch_req {
	uint64_t rec_off;	/* file offset of the cookie record */
	uint64_t cookie;
	uint64_t ts;
	int cpu, buf;
	int pid;		/* the cookie record's task */
	int req_id;		/* requester's event id, -1 if none */
	int req_pid;
	uint64_t req_off;
	uint64_t req_ts;
};

/*
 * What is kept of a request: what printing needs.  32 bytes, in an array
 * sorted by rec_off.
 */
struct ust_stitch_rq {
	uint64_t rec_off;
	uint64_t cookie;
	uint64_t ts;		/* the cookie record's, as the file has it (a host may shift its own) */
	int32_t req_pid;	/* the requester's task, -1: none found */
	int32_t stack;		/* its stack's index (ust_stitch_req_stack), -1: none */
};

/* What choosing a request's stack needs besides, until ust_stitch_finish(). */
struct ust_stitch_rqx {
	uint64_t ts;
	uint64_t rec_off;	/* the cookie record's */
	int32_t pid;		/* the cookie record's task */
	int16_t buf, cpu;
};

/* One distinct stack content: identical frames are stored once. */
struct ust_stitch_frames {
	struct ust_dec_frame *frames;
	unsigned int nr;
	bool has_files;
	bool rendered_used;	/* printed since ust_stack_text last looked */
	char *rendered;		/* its text, kept by ust_stack_text; owned */
};

/* A user_unwind_stack record. */
struct ust_stitch_stack {
	uint64_t cookie;
	uint64_t rec_off, ts;
	struct ust_dec_frame *frames;	/* its content's frames (shared) */
	char *bad;		/* decode error, frames unusable */
	int32_t pid;
	unsigned int nr;
	uint32_t flags;		/* UST_ABI_STACK_F_*, from a stack_flags record */
	unsigned int nr_req;	/* requests that resolved to this stack */
	unsigned int nr_foreign;/* requests by another task: refused */
	unsigned int nr_dup;	/* further stack records with the same cookie */
	int32_t next_same_cookie;/* index chain in (buf, cpu, rec_off) order, -1 ends */
	uint32_t content;	/* ust_stitch.contents index, UINT32_MAX: none */
	int16_t buf, cpu;
	bool has_files;		/* false for the stack-only layout */
};

/*
 * A key of @s's frames, the same for every stack of the same frames (the
 * stitch index stores each distinct content once); 0 for none.
 */
static inline uint64_t ust_stitch_stack_key(const struct ust_stitch_stack *s)
{
	return s && s->content != UINT32_MAX ? (uint64_t)s->content + 1 : 0;
}

struct ust_stitch_stats {
	unsigned long requests, stacks, bad_stacks, unresolved, orphan_stacks;
	unsigned long lost_events;
};

/* A stack_flags record, with where it was (the last one by file order wins). */
struct ust_stitch_flag {
	uint64_t rec_off;
	uint32_t flags;
	int16_t buf, cpu;
};

struct ust_stitch {
	struct ust_stitch_rq *reqs;	/* sorted by rec_off once finished */
	struct ust_stitch_rqx *reqx;	/* beside reqs, freed by finish */
	unsigned long nr_reqs;
	size_t cap_reqs, cap_reqx;
	struct ust_stitch_stack *stacks;
	unsigned long nr_stacks;
	size_t cap_stacks;
	struct ust_stitch_frames *contents;
	unsigned long nr_contents;
	size_t cap_contents;
	unsigned long nr_frames;	/* frames stored, over all contents */
	struct ust_hmap content_by_hash;/* frames hash -> contents index */
	struct ust_hmap stack_by_off;	/* rec_off -> stacks index */
	struct ust_hmap stack_by_cookie;/* cookie -> first stacks index */
	struct ust_hmap bad_by_cookie;	/* cookie -> a malformed stack's index */
	struct ust_hmap flags_by_cookie;/* cookie -> flag_recs index */
	struct ust_stitch_flag *flag_recs;
	unsigned long nr_flags;
	size_t cap_flags;
	uint64_t *lost_ts;		/* timestamps of lost-event marks */
	unsigned long nr_lost;
	size_t cap_lost;
	unsigned long lost_events;
	/*
	 * The stacks are the kernel's own (seed 004's ftrace records): the
	 * trace has no stack_flags event, which every BPF-made stack comes
	 * with.  Set before ust_stitch_finish(): they are marked
	 * UST_ABI_STACK_F_KERNEL (the kernel's deferred unwinder follows
	 * frame pointers only).
	 */
	bool kernel_stacks;
	bool finished;
};

void ust_stitch_init(struct ust_stitch *st);
void ust_stitch_fini(struct ust_stitch *st);

/* The add functions: 0, or -ENOMEM. */
int ust_stitch_add_request(struct ust_stitch *st, const struct ust_stitch_req *r);
/* Copies the frames, once per distinct content. @bad: decode error (then @s may be partial). */
int ust_stitch_add_stack(struct ust_stitch *st, int buf, int cpu, uint64_t ts,
			 uint64_t rec_off, int pid, const struct ust_dec_stack *s,
			 bool has_files, const char *bad);
/* A stack_flags record: applies to the stack of @cookie.  Where it was
 * (@buf, @cpu, @rec_off) decides which of several counts: the last by
 * buffer, CPU and file order, whatever order they were added in. */
void ust_stitch_add_flags(struct ust_stitch *st, int buf, int cpu, uint64_t rec_off,
			  uint64_t cookie, uint32_t flags);
/* @missed events were dropped before @ts (any CPU, any buffer). */
void ust_stitch_add_lost(struct ust_stitch *st, uint64_t ts, long long missed);
/*
 * Count requests per stack; call once after the last add.  Stacks, flags and
 * requests may have been added in any order: a cookie's first stack is the
 * first by (buffer, CPU, file offset).
 */
void ust_stitch_finish(struct ust_stitch *st, struct ust_stitch_stats *stats);

/* Once finished: the request whose cookie record is at @rec_off (binary search). */
const struct ust_stitch_rq *ust_stitch_req_at(const struct ust_stitch *st, uint64_t rec_off);
struct ust_stitch_stack *ust_stitch_stack_at(const struct ust_stitch *st, uint64_t rec_off);
/*
 * Once finished: @r's stack, NULL if none arrived.  Cookies are reused once
 * a CPU's counter wraps, and records are lost: of the stacks with @r's
 * cookie, only one between its task's requests of other cookies (the
 * task's kernel entries before and after @r's) is @r's.
 */
struct ust_stitch_stack *ust_stitch_req_stack(const struct ust_stitch *st,
					      const struct ust_stitch_rq *r);
/* The first stack for @cookie, preferring buffer @buf, whatever its time
 * (samples); NULL if none arrived. */
struct ust_stitch_stack *ust_stitch_lookup(const struct ust_stitch *st, uint64_t cookie, int buf);
/* A malformed stack record that claims @cookie (its arrays are unusable,
 * but its cookie field was readable), to explain a missing stack. */
const struct ust_stitch_stack *ust_stitch_bad_for(const struct ust_stitch *st, uint64_t cookie);
/* Were events lost at or after @ts?  Explains a stack that never arrived. */
bool ust_stitch_lost_after(const struct ust_stitch *st, uint64_t ts);

#endif
