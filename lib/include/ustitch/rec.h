/* SPDX-License-Identifier: LGPL-2.1 */
/* ustitch record: the command line, the recording, the BPF record spool. */
#ifndef USTITCH_REC_H
#define USTITCH_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

struct rec_event {
	char *system, *event;	/* after glob expansion: exact names */
	char *filter;
};

struct rec_buffer {
	char *name;		/* NULL: the main buffer */
	struct rec_event *ev;	/* as typed (patterns), then expanded */
	int nr_ev;
	char **opts;		/* ftrace options to set, deferred ones removed */
	int nr_opts;
	bool deferred;		/* -O userstacktrace_delay */
};

struct rec_source;
struct ust_bpfu;
struct ust_cap;
struct ust_af;

/* getopt_long code of --unwind. */
#define REC_OPT_UNWIND	0x1800

struct rec_opts {
	struct rec_buffer *bufs;
	int nr_bufs;
	const char *output;
	const char *clock;
	bool clock_given;
	size_t buffer_kb;
	pid_t *pids;
	int nr_pids;
	bool quiet;
	char **cmd;		/* NULL: until SIGINT/SIGTERM */
	struct rec_source *sources;	/* extra producers (perf sampling, ...) */
	bool lockheld;		/* -p lockheld: lock_held() filters asked for explicitly */
	struct ust_af *af;	/* --addr-filter ranges, or NULL (rec_addrfilter.c) */
	bool unwind_fp;		/* --unwind fp: user stacks by frame pointers only */
};

/* No command and no -P: the whole machine is recorded. */
static inline bool rec_whole_machine(const struct rec_opts *o)
{
	return !o->cmd && !o->nr_pids;
}

/*
 * What a source gets to work with while recording.  Records it produces go
 * into the spool (written into the trace.dat's "ustitch" buffer, per CPU
 * in timestamp order); the formats of the events they use are registered
 * with rec_ctx_add_format() so that the file describes them.
 */
struct rec_ctx {
	struct rec_opts *o;
	struct rec_spool *spool;
	struct rec_maps *maps;
	struct ust_bpfu *bpfu;		/* NULL unless deferred stacks come from BPF */
	pid_t child;			/* the command, or -1 */
	uint16_t cookie_id, stack_id, mapping_id;	/* ids of the BPF-made records */
	uint16_t flags_id;		/* ustitch/stack_flags */
	struct ust_cap *cap;		/* its writer takes a source's cmdlines */
	int next_id;			/* first id free for a source's own events */
	char **formats;			/* "system\0text" pairs added at the end */
	int nr_formats;
};

/* Register a format text for the file ("ustitch", text). 0 or -1. */
int rec_ctx_add_format(struct rec_ctx *c, const char *system, const char *text);
/* A fresh event id no event of this kernel (nor another source) uses. */
int rec_ctx_new_id(struct rec_ctx *c);

/* CLOCK_MONOTONIC in ns: the clock of BPF, perf (use_clockid) and "mono". */
static inline uint64_t rec_mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/*
 * An extra producer of records: parsed from the command line, checked
 * before anything is touched, started once the ftrace instances exist,
 * polled (without blocking) in the main loop, stopped before the file is
 * written.
 */
struct rec_source_ops {
	const char *name;
	int (*start)(struct rec_source *s, struct rec_ctx *c, char *err, size_t errlen);
	/* 0, 1 to be polled again soon (its buffers fill up), or -1. */
	int (*poll)(struct rec_source *s, struct rec_ctx *c);
	/*
	 * Optional, after start: add to the epoll set @epfd the fds that
	 * become readable when the source's buffers need reading (perf
	 * wakeup watermarks), so that the main loop polls it before they
	 * overflow.  0 or -1.
	 */
	int (*wait_fds)(struct rec_source *s, int epfd);
	void (*stop)(struct rec_source *s, struct rec_ctx *c);
	void (*summary)(struct rec_source *s, FILE *out);
	void (*free)(struct rec_source *s);
};

struct rec_source {
	const struct rec_source_ops *ops;
	void *priv;
	struct rec_source *next;
};

/* Append @s to the options' list of sources. */
void rec_add_source(struct rec_opts *o, struct rec_source *s);

/* Parse; on error print "ustitch record: ..." and return 2. */
int rec_parse(int argc, char **argv, struct rec_opts *o);
/* Expand event patterns and check everything against this kernel without
 * changing anything.  0, or prints why and returns 2. */
int rec_validate(struct rec_opts *o, bool *native_deferred);
int rec_run(struct rec_opts *o, bool native_deferred);
void rec_usage(FILE *out);

/* The spool: BPF records kept until the end, then written per CPU in
 * timestamp order (a task_work can be preempted between taking its
 * timestamp and reserving ring-buffer space). */
struct rec_spool;
struct rec_spool *rec_spool_new(void);
int rec_spool_add(struct rec_spool *s, unsigned int cpu, uint64_t ts,
		  const void *data, size_t len);
/* Events lost before @ts on @cpu (the writer marks the next page). */
int rec_spool_add_lost(struct rec_spool *s, unsigned int cpu, uint64_t ts, uint64_t count);
struct ust_tdw;
int rec_spool_write(struct rec_spool *s, struct ust_tdw *w, int buf, int nr_cpus);
unsigned long rec_spool_count(const struct rec_spool *s);
void rec_spool_free(struct rec_spool *s);

/* Mapping records for the files in stacks, read while the process lives. */
struct rec_maps;
/* @cmd_path: the traced command (its directory is searched too), or NULL. */
struct rec_maps *rec_maps_new(uint16_t mapping_type, const char *cmd_path);
/* A frame's file (@kdev, @ino; 0 for none): if not seen before, spool a
 * ustitch/user_mapping record (path and build-id from /proc/TGID). */
void rec_maps_note_file(struct rec_maps *m, struct rec_spool *s, pid_t tgid,
			unsigned int cpu, uint64_t ts, uint32_t kdev, uint64_t ino);
/*
 * A process that made an event: look at its mappings now, while it surely
 * lives (its stacks may be handled after it exited).  Once per process.
 */
void rec_maps_note_task(struct rec_maps *m, pid_t tgid);
/* Snapshot a live process's file mappings. */
void rec_maps_snapshot(struct rec_maps *m, pid_t tgid);
unsigned long rec_maps_count(const struct rec_maps *m);
void rec_maps_free(struct rec_maps *m);

/* ---- unwind tables (rec_tables.c) ---------------------------------- */

struct ust_bpfu;

/* The command's file, as execvp() will find it; NULL if none. */
const char *rec_cmd_path(const char *cmd, char *buf, size_t len);
/* Load the tables of the command, the -P processes or (neither) every process, before tracing starts. */
void rec_tables_preload(struct ust_bpfu *u, const struct rec_opts *o);

/* How the stacks were taken (UST_BPFU_STACK_* flags), for the summary. */
struct rec_stack_counts {
	unsigned long stacks;
	unsigned long bottom_cfi;	/* reached the outermost frame by CFI alone */
	unsigned long bottom_fp;	/* ... with frame pointers for some frames */
	unsigned long truncated;
	unsigned long no_table, bad_cfa, fault, no_unwind;
};

struct ust_bpfu_rec;
/*
 * A ustitch/stack_flags record just before @rec's stack (how the BPF side
 * took it), when it has anything to say.  0, or -1 if the spool failed.
 */
int rec_tables_flags_record(struct rec_spool *spool, uint16_t flags_id, const struct ust_bpfu_rec *rec);
void rec_tables_count(struct rec_stack_counts *n, unsigned int flags);
void rec_tables_summary(struct ust_bpfu *u, const struct rec_stack_counts *n, FILE *out);

#endif
