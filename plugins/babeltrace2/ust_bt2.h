/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * babeltrace2 plugin "ustitch": sink.ustitch.text prints a trace in the
 * style of sink.text.pretty, with each event's user stack (context
 * $app.ustitch:stack_id, stitched to its ustitch:stack event) printed
 * under it and the held locks ($app.ustitch:locks) named.
 *
 *   ust_bt2_plugin.c   component class, parameters, message loop
 *   ust_bt2_queue.c    lookahead: events wait for a stack that follows
 *   ust_bt2_pretty.c   sink.text.pretty-style event lines
 *   ust_bt2_stacks.c   stack ids -> frames, objects, lock names
 *   ust_bt2_profile.c  the events' stacks as folded stacks, a flame
 *                      graph, a pprof profile, a summary
 *   ust_bt2_datasym.c  data symbols (lock variables) of an ELF file
 *
 * Symbolizing and rendering of frames are libustitch's (ust_sym,
 * ust_res, ust_render): frames arrive as (file offset, inode, dev), like
 * the kernel's, and ustitch:object events feed ust_res its mappings.
 */
#ifndef USTITCH_BT2_H
#define USTITCH_BT2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustitch/decode.h"
#include "ustitch/fold.h"
#include "ustitch/hmap.h"
#include "ustitch/render.h"
#include "ustitch/resolve.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"

/* --- ust_bt2_datasym.c ------------------------------------------------ */

struct ust_bt2_datasym;

/* @demangle: C++ and Rust names as perf prints them. */
struct ust_bt2_datasym *ust_bt2_datasym_new(bool demangle);
void ust_bt2_datasym_free(struct ust_bt2_datasym *d);
/*
 * The data object (STT_OBJECT, STT_COMMON) of ELF file @path that
 * covers link-time address @vaddr.  Files are opened once; returns the
 * name (owned by @d) and fills @off, or NULL.
 */
const char *ust_bt2_datasym_lookup(struct ust_bt2_datasym *d, const char *path,
				   uint64_t vaddr, uint64_t *off);

/* --- ust_bt2_stacks.c -------------------------------------------------- */

struct ust_bt2_stack {
	int pid;
	unsigned int nr;
	struct ust_dec_frame *frames;
	char *text;			/* rendered once all its objects are known */
	bool complete;			/* every file of its frames is described */
};

struct ust_bt2_obj {
	int pid;
	uint64_t base, lo, hi;
	uint64_t ino;
	uint32_t kdev;
};

struct ust_bt2_stacks {
	struct ust_hmap ids;		/* stack id -> index + 1 */
	struct ust_bt2_stack *v;
	size_t nr, cap;
	struct ust_bt2_obj *objs;
	size_t nr_objs, cap_objs;
	struct ust_hmap obj_keys;	/* (pid, base, ino) seen */
	struct ust_hmap files;		/* (dev, ino) described */
	struct ust_res *res;
	struct ust_sym_cache *sym;
	struct ust_render rnd;
	struct ust_bt2_datasym *dsym;
};

#define UST_BT2_MAX_DEBUG_DIRS	16

struct ust_bt2_opts {
	bool symbols;
	bool lines;
	bool demangle;		/* C++ and Rust names as perf prints them (ust_sym) */
	unsigned int max_frames;
	const char *const *debug_dirs;
	int nr_debug_dirs;
	bool debuginfod;	/* fetch missing files by build-id (lib/resolve/res_debuginfod.c) */
	const char *archive;	/* `ustitch archive`'s directory, or NULL */
	const struct ust_res_opts *res;	/* where files are looked for; NULL: everywhere */
};

/* -1: out of memory, or @o->archive cannot be used (said on stderr). */
int ust_bt2_stacks_init(struct ust_bt2_stacks *s, const struct ust_bt2_opts *o);
void ust_bt2_stacks_fini(struct ust_bt2_stacks *s);
/* A ustitch:stack event; a later duplicate (re-emission) is ignored. */
int ust_bt2_stacks_add(struct ust_bt2_stacks *s, uint64_t id, int pid, const uint64_t *off,
		       const uint64_t *ino, const uint32_t *kdev, unsigned int nr);
struct ust_bt2_stack *ust_bt2_stacks_find(const struct ust_bt2_stacks *s, uint64_t id);
/*
 * A ustitch:stack event's payload as plain values, each array with the
 * length the trace gave it (NULL: missing, or not all integers).  The
 * provider writes three arrays of one length; a trace may say otherwise.
 */
struct ust_bt2_stack_ev {
	uint64_t id, pid;
	const uint64_t *offs, *inos, *devs;
	uint64_t nr_offs, nr_inos, nr_devs;
};
/* Adds it (ust_bt2_stacks_add) if its arrays agree: 0 (also when it is
 * ignored), -1 when out of memory. */
int ust_bt2_take_stack(struct ust_bt2_stacks *s, const struct ust_bt2_stack_ev *ev);
/* A ustitch:object event's payload; @path NULL: not a string. */
struct ust_bt2_object_ev {
	uint64_t pid, base, lo, hi, dev, ino;
	const char *path;
	const uint64_t *bid;		/* build-id, a byte per element */
	uint64_t nr_bid;
};
int ust_bt2_take_object(struct ust_bt2_stacks *s, const struct ust_bt2_object_ev *ev);
/* Calls @fn for each lock of a $app.ustitch:locks text (hexadecimal
 * addresses; "..." gives 0 and @more); false when @fn said stop. */
bool ust_bt2_each_lock(const char *s, bool (*fn)(void *data, uint64_t addr, bool more), void *data);
/* A ustitch:object event. */
int ust_bt2_objs_add(struct ust_bt2_stacks *s, int pid, uint64_t base, uint64_t lo,
		     uint64_t hi, uint32_t kdev, uint64_t ino, const char *path,
		     const uint8_t *bid, size_t bid_len);
/* Whether a ustitch:object described every file @st's frames are in. */
bool ust_bt2_stack_complete(struct ust_bt2_stacks *s, struct ust_bt2_stack *st);
/* Whether an object known for @pid (any pid when @pid < 0) holds @addr. */
bool ust_bt2_objs_cover(const struct ust_bt2_stacks *s, int pid, uint64_t addr);
/* "\n=> ..." per frame. */
void ust_bt2_render_stack(struct ust_bt2_stacks *s, struct ust_bt2_stack *st,
			  struct ust_sb *out);
/* "symbol+0xoff (object)", "object+0xvaddr" or "0xaddr". */
void ust_bt2_name_addr(struct ust_bt2_stacks *s, int pid, uint64_t addr, struct ust_sb *out);

/* --- ust_bt2_profile.c ------------------------------------------------ */

/* Parameters folded, flamegraph, pprof, top (NULL, 0: not wanted). */
struct ust_bt2_profile_opts {
	const char *folded;		/* "1": on stdout; else a path */
	const char *flamegraph;		/* PATH.svg */
	const char *pprof;		/* PATH.pb.gz */
	unsigned int top;		/* functions per table */
	bool icicle, per_thread, lines;
};

struct ust_fold;
struct ust_pprof;

struct ust_bt2_profile_ev_fold {
	char *name;
	struct ust_fold *fold;
};

struct ust_bt2_profile {
	struct ust_bt2_profile_opts o;
	bool on, oom;
	struct ust_fold_names names;
	struct ust_sb sb;
	struct ust_fold *fold;		/* every event: folded, flame graph, top */
	struct ust_bt2_profile_ev_fold *ev;	/* per event name: top's tables */
	size_t nr_ev, cap_ev;
	struct ust_pprof *pp;
	unsigned long events, lost;
	int64_t first_ns, last_ns;
	bool have_time;
};

/* An event with a stack_id value: its stack (NULL: not in the trace). */
struct ust_bt2_profile_ev {
	const char *event, *comm;	/* comm: NULL, "[unknown]" */
	int tid, cpu;			/* cpu < 0: not known */
	bool has_time;
	int64_t ns;			/* since the clock's origin */
	const struct ust_bt2_stack *stack;
	uint64_t stack_key;		/* its id once its objects are all known, else 0 */
};

bool ust_bt2_profile_wanted(const struct ust_bt2_profile_opts *o);
/* Frames are named through @st's resolver and symbols.  -1: out of memory. */
int ust_bt2_profile_init(struct ust_bt2_profile *p, const struct ust_bt2_profile_opts *o,
			 struct ust_bt2_stacks *st);
void ust_bt2_profile_add(struct ust_bt2_profile *p, const struct ust_bt2_profile_ev *e);
/* At the end: the files written and the summary printed after the events. */
void ust_bt2_profile_finish(struct ust_bt2_profile *p);
void ust_bt2_profile_fini(struct ust_bt2_profile *p);

/* --- ust_bt2_queue.c --------------------------------------------------- */

struct bt_message;

/* A message waiting to be printed, in arrival order. */
struct ust_bt2_item {
	const struct bt_message *msg;	/* owned reference */
	int64_t deadline;		/* print by then (trace time), ready or not */
	bool timed;			/* deadline is meaningful */
	uint64_t stack_id;		/* waits for this stack (0: does not) */
	bool lock_wait;			/* waits for the objects of its locks */
};

struct ust_bt2_queue {
	struct ust_bt2_item *v;
	size_t cap, head, len;		/* ring */
};

void ust_bt2_queue_init(struct ust_bt2_queue *q);
void ust_bt2_queue_fini(struct ust_bt2_queue *q);	/* drops what is left */
int ust_bt2_queue_push(struct ust_bt2_queue *q, const struct ust_bt2_item *it);
struct ust_bt2_item *ust_bt2_queue_head(struct ust_bt2_queue *q);
void ust_bt2_queue_pop(struct ust_bt2_queue *q);

/* --- ust_bt2_pretty.c -------------------------------------------------- */

struct bt_field;
struct bt_clock_snapshot;

enum ust_bt2_hook_ret {
	UST_BT2_MEMBER_DEFAULT,		/* print it as sink.text.pretty does */
	UST_BT2_MEMBER_SKIP,		/* leave it out */
	UST_BT2_MEMBER_DONE,		/* the hook wrote "name = value" */
};

/* Called for each structure member; may write into @out. */
typedef enum ust_bt2_hook_ret (*ust_bt2_member_hook)(void *data, const char *name,
						     const struct bt_field *f,
						     struct ust_sb *out);

/* A field as sink.text.pretty prints it. */
void ust_bt2_pretty_field(const struct bt_field *f, struct ust_sb *out);
/*
 * "{ a = 1, b = 2 }": members whose bit is set in @skip are left out, the
 * others go through @hook (may be NULL).
 */
void ust_bt2_pretty_struct(const struct bt_field *f, uint64_t skip, ust_bt2_member_hook hook,
			   void *data, struct ust_sb *out);
/* Decimal and "0x..." (lower case) without printf. */
void ust_bt2_put_u64(struct ust_sb *out, uint64_t v);
void ust_bt2_put_hex(struct ust_sb *out, uint64_t v);

struct ust_bt2_clock {
	bool gmt;
	bool have_last;
	int64_t last_ns;
};

/* "[hh:mm:ss.nnnnnnnnn] (+s.nnnnnnnnn) ", delta to the previous call. */
void ust_bt2_pretty_time(struct ust_bt2_clock *c, const struct bt_clock_snapshot *cs,
			 struct ust_sb *out);

#endif
