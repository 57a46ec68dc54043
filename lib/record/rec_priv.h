/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_rec internals: the record sources (perf sampling, lock_held() and
 * --addr-filter events) and what the run lends them, the messages.
 * Not installed; the API is ustitch/rec.h.
 */
#ifndef USTITCH_REC_PRIV_H
#define USTITCH_REC_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ustitch/hmap.h"
#include "ustitch/rec.h"

struct ust_cap;

/* Every line the library prints starts so. */
#define UST_REC_PFX	"ustitch record: "

/* A warning (or note) through the print function set by ust_rec_set_print(). */
__attribute__((format(printf, 2, 3)))
void ust_rec_pr(enum ust_rec_print_level level, const char *fmt, ...);
#define ust_rec_warn(...)	ust_rec_pr(UST_REC_WARN, __VA_ARGS__)
#define ust_rec_info(...)	ust_rec_pr(UST_REC_INFO, __VA_ARGS__)

/* Where the summary and progress lines go. */
static inline FILE *ust_rec_out(const struct ust_rec_opts *o)
{
	return o->out ? o->out : stderr;
}

/*
 * What a source gets to work with while recording.  Records it produces go
 * into the spool (written into the trace.dat's "ustitch" buffer, per CPU
 * in timestamp order); the formats of the events they use are registered
 * with ust_rec_ctx_add_format() so that the file describes them.
 */
struct ust_rec_ctx {
	struct ust_rec_opts *o;
	struct ust_rec_spool *spool;
	struct ust_rec_maps *maps;
	struct ust_bpfu *bpfu;		/* NULL unless deferred stacks come from BPF */
	pid_t child;			/* the command, or -1 */
	uint16_t cookie_id, stack_id, mapping_id;	/* ids of the BPF-made records */
	uint16_t flags_id;		/* ustitch/stack_flags */
	struct ust_cap *cap;		/* its writer takes a source's cmdlines */
	int next_id;			/* first id free for a source's own events */
	char **formats;			/* "system\0text" pairs added at the end */
	int nr_formats;
	/*
	 * The kernel addresses the sources wrote, when they are the file's
	 * only ones (no ftrace event is recorded, and every source says each
	 * it writes: ust_rec_source_ops.kaddrs_all): its kallsyms then names
	 * just those.  NULL: not collected.
	 */
	struct ust_hmap *kaddrs;
	bool kaddrs_lost;		/* one could not be kept: kallsyms whole */
};

/* Register a format text for the file ("ustitch", text). 0 or -1. */
int ust_rec_ctx_add_format(struct ust_rec_ctx *c, const char *system, const char *text);
/* A kernel address a source wrote into the file (ctx->kaddrs). */
void ust_rec_ctx_kaddr(struct ust_rec_ctx *c, uint64_t addr);
/* A fresh event id no event of this kernel (nor another source) uses. */
int ust_rec_ctx_new_id(struct ust_rec_ctx *c);

/*
 * What a source put into the "ustitch" buffer, for the status line
 * (while recording: what it knows so far) and the summary (after stop).
 */
struct ust_rec_counts {
	unsigned long samples;		/* perf samples */
	unsigned long sample_stacks;	/* ... of them with their user stack */
	bool sample_stacks_asked;	/* -g: user stacks were asked for */
	unsigned long kept, filtered;	/* events a filter kept, of those it saw */
	unsigned long long lost;	/* records lost (a ring or perf buffer full) */
};

/*
 * An extra producer of records: set up with the options, checked before
 * anything is touched, started once the ftrace instances exist, polled
 * (without blocking) in the main loop, stopped before the file is written.
 */
struct ust_rec_source_ops {
	const char *name;
	int (*start)(struct ust_rec_source *s, struct ust_rec_ctx *c, char *err, size_t errlen);
	/* 0, 1 to be polled again soon (its buffers fill up), or -1. */
	int (*poll)(struct ust_rec_source *s, struct ust_rec_ctx *c);
	/*
	 * Optional, after start: add to the epoll set @epfd the fds that
	 * become readable when the source's buffers need reading (perf
	 * wakeup watermarks), so that the main loop polls it before they
	 * overflow.  0 or -1.
	 */
	int (*wait_fds)(struct ust_rec_source *s, int epfd);
	void (*stop)(struct ust_rec_source *s, struct ust_rec_ctx *c);
	/* Its details, for ustitch record -v. */
	void (*summary)(struct ust_rec_source *s, FILE *out);
	/* Optional: add what it recorded to @n. */
	void (*counts)(struct ust_rec_source *s, struct ust_rec_counts *n);
	/* Every kernel address it writes goes through ust_rec_ctx_kaddr(). */
	bool kaddrs_all;
	void (*free)(struct ust_rec_source *s);
};

struct ust_rec_source {
	const struct ust_rec_source_ops *ops;
	void *priv;
	struct ust_rec_source *next;
};

/* Append @s to the options' list of sources. */
void ust_rec_add_source(struct ust_rec_opts *o, struct ust_rec_source *s);
/* Free every source of @o. */
void ust_rec_free_sources(struct ust_rec_opts *o);

/*
 * Every field the ftrace filter @filter compares is one of @sys:@ev's (or
 * a field every event has).  0 (also when the format cannot be read: the
 * kernel judges), or -EINVAL with the misspelled name and the event's
 * fields in @err.
 */
int ust_rec_filter_fields(const char *sys, const char *ev, const char *filter, char *err,
			  size_t errsz);

/*
 * After the summary, one line each: a filter that kept nothing, with its
 * likely reason.  @events: the ftrace buffers' event counts.
 */
void ust_rec_filter_hint(const struct ust_rec_opts *o, const unsigned long *events, FILE *out);
void ust_rec_addrfilter_hint(const struct ust_rec_opts *o, FILE *out);

/*
 * After event expansion: parse, resolve against this kernel and compile
 * every lock_held() filter, move those events (every event, with
 * --addr-filter) into a source recorded through perf.  Touches nothing.
 * @want_stacks: set when those events want user stacks (BPF's, always).
 * 0, or -EINVAL (-ENOMEM) with the reason in @err.
 */
int ust_rec_lockheld_claim(struct ust_rec_opts *o, bool *want_stacks, char *err, size_t errsz);

/*
 * The sampling options hang together, the events open on this kernel,
 * the user stacks have a way to be made (see rec_perf.c).  Sets the trace
 * clock to mono.  0, or -EINVAL with the reason in @err.
 */
int ust_rec_perf_validate(struct ust_rec_opts *o, char *err, size_t errsz);

#endif
