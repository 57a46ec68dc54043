/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_rec: record a trace.dat the way `ustitch record` does.
 *
 *   ftrace events --(private tracefs instances: ust_cap)----> trace.dat
 *   BPF cookies and stacks, perf samples, lock_held() and
 *   --addr-filter events --(spool: ust_rec_spool)--> its "ustitch" buffer
 *
 * Typical use: fill a struct ust_rec_opts (one ust_rec_buffer per ftrace
 * buffer; sources such as perf sampling added through their
 * constructors), ust_rec_validate() it against this kernel (touches
 * nothing), then ust_rec_run() it.  ust_rec_opts_free() releases what the
 * options own.
 *
 * Messages: the summary and progress lines go to ust_rec_opts.out; errors
 * found before anything is touched come back in @err; warnings while
 * recording go to the print function (ust_rec_set_print(), as
 * libbpf_set_print()), by default to stderr.  Every line starts with
 * "ustitch record: ", and option names are ustitch record's spelling.
 */
#ifndef USTITCH_REC_H
#define USTITCH_REC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

struct ust_af;
struct ust_bpfu;
struct ust_bpfu_rec;
struct ust_probe_report;
struct ust_rec_source;
struct ust_tdw;

/* ---- options ----------------------------------------------------------- */

struct ust_rec_event {
	char *system, *event;	/* after ust_rec_validate(): exact names */
	char *filter;		/* ftrace filter, maybe with lock_held() terms, or NULL */
};

struct ust_rec_buffer {
	char *name;		/* NULL: the main buffer */
	struct ust_rec_event *ev;	/* patterns (globs), then expanded */
	int nr_ev;
	char **opts;		/* ftrace options to set, deferred ones removed */
	int nr_opts;
	bool deferred;		/* deferred user stacks (-O userstacktrace_delay) */
};

/* Everything malloc'ed here is owned by the options (ust_rec_opts_free()). */
struct ust_rec_opts {
	struct ust_rec_buffer *bufs;	/* [0] is the main buffer */
	int nr_bufs;
	const char *output;
	const char *clock;		/* NULL: "local" */
	bool clock_given;		/* the clock was asked for, not defaulted */
	size_t buffer_kb;		/* per CPU; 0: the kernel's default */
	pid_t *pids;			/* trace only these processes */
	int nr_pids;
	bool quiet;			/* no progress lines, no summary */
	bool verbose;			/* the summary's details, the kernel's refusals */
	FILE *out;			/* summary and progress lines; NULL: stderr */
	char **cmd;			/* NULL: until SIGINT/SIGTERM */
	struct ust_rec_source *sources;	/* extra producers (perf sampling, ...) */
	bool lockheld;			/* lock_held() filters asked for explicitly */
	struct ust_af *af;		/* --addr-filter ranges, or NULL */
	bool unwind_fp;			/* user stacks by frame pointers only */
	/*
	 * --unwind kernel: -O userstacktrace_delay records the kernel's own
	 * deferred stacks (seed 004's ftrace events), as trace-cmd would; by
	 * default the BPF walk by CFI makes them where it can, for the
	 * kernel's unwinder follows frame pointers only.
	 */
	bool unwind_kernel;
	/* --kallsyms: the file keeps the whole of /proc/kallsyms, not only
	 * the symbols of the kernel addresses it holds (none, for a
	 * recording of system calls with user stacks). */
	bool kallsyms;
};

/* No command and no pid: the whole machine is recorded. */
static inline bool ust_rec_whole_machine(const struct ust_rec_opts *o)
{
	return !o->cmd && !o->nr_pids;
}

/*
 * Add one --addr-filter SPEC (perf's language) to @o->af, checked against
 * the ranges already there.  0, or -EINVAL (-ENOMEM) with the reason in @err.
 */
int ust_rec_addrfilter_add(struct ust_rec_opts *o, const char *spec, char *err, size_t errsz);

/* Free what @o owns (buffers, pids, sources, address ranges). */
void ust_rec_opts_free(struct ust_rec_opts *o);
/* Append event SYS:EV (no filter) to @b's list: 0, or -1 without memory. */
int ust_rec_buffer_add_event(struct ust_rec_buffer *b, const char *sys, const char *ev);

/* ---- perf sampling source (rec_perf.c) ---------------------------------- */

/* How -g makes user stacks (--call-graph). */
enum ust_rec_perf_cg {
	UST_REC_PERF_CG_DEFAULT,	/* -g: the best way here (keeps one chosen) */
	UST_REC_PERF_CG_DEFER,		/* the kernel's deferred callchains */
	UST_REC_PERF_CG_BPF,		/* the BPF unwinder */
	UST_REC_PERF_CG_FP,		/* perf's immediate frame-pointer callchains */
};

/* Is @name (no "system:") a perf sampling event such as cpu-clock? */
bool ust_rec_perf_is_event(const char *name);
/* The perf sampling source of @o, added on first use.  NULL (errno
 * ENOMEM) on failure. */
struct ust_rec_source *ust_rec_perf_source(struct ust_rec_opts *o);
/* Does @o sample? */
bool ust_rec_perf_wanted(const struct ust_rec_opts *o);
/* Sample event @name too.  0, or -EINVAL (-ENOMEM) with the reason in @err. */
int ust_rec_perf_add_event(struct ust_rec_source *s, const char *name, char *err, size_t errsz);
/* Samples per second (-F), or one every @period events (-c). */
void ust_rec_perf_set_freq(struct ust_rec_source *s, uint64_t hz);
void ust_rec_perf_set_period(struct ust_rec_source *s, uint64_t period);
/* With kernel and user stacks, made the way @cg says. */
void ust_rec_perf_set_call_graph(struct ust_rec_source *s, enum ust_rec_perf_cg cg);
/* For ustitch probe, after @r's probes: how -g (and --call-graph defer)
 * make user stacks here, and why (loads the BPF unwinder for a moment). */
void ust_rec_perf_probe_default(const struct ust_probe_report *r, FILE *out);

/* ---- validation and the run (rec_validate.c, rec_run.c) ------------------ */

/*
 * Expand the event patterns and check everything against this kernel
 * without changing anything; events filtered with lock_held() (or every
 * event, with --addr-filter) move into a source recorded through perf.
 * Sets @native_deferred when the kernel makes deferred stacks itself.
 * 0, or -EINVAL (-ENOMEM) with the reason in @err.
 */
int ust_rec_validate(struct ust_rec_opts *o, bool *native_deferred, char *err, size_t errsz);

/*
 * Record until the command exits, or until SIGINT, SIGTERM or SIGHUP
 * (handlers installed for the run), then write the trace.  Everything is
 * undone on every way out; after a failure no trace is left.  Frees @o's
 * sources and address ranges.  0, or -EIO after the reasons were printed
 * (ust_rec_set_print()); @cmd_errno (may be NULL) gets execvp()'s errno
 * when the command could not be run, else 0.  The command's own exit
 * status is not the recording's.
 */
int ust_rec_run(struct ust_rec_opts *o, bool native_deferred, int *cmd_errno);

/* Where warnings during a run go (default: stderr), as libbpf_set_print(). */
enum ust_rec_print_level {
	UST_REC_WARN,
	UST_REC_INFO,
};
typedef int (*ust_rec_print_fn_t)(enum ust_rec_print_level level, const char *fmt, va_list ap);
/* Install @fn (NULL: print nothing); returns the one before. */
ust_rec_print_fn_t ust_rec_set_print(ust_rec_print_fn_t fn);

/* ---- the spool (rec_spool.c) --------------------------------------------- */

/* Records of the "ustitch" buffer kept until the end (on disk, their index
 * in sorted runs), then written per CPU in timestamp order (a task_work
 * can be preempted between taking its timestamp and reserving ring-buffer
 * space). */
struct ust_rec_spool;
struct ust_rec_spool *ust_rec_spool_new(void);
/* These return 0, or a negative errno (also left in errno). */
int ust_rec_spool_add(struct ust_rec_spool *s, unsigned int cpu, uint64_t ts,
		      const void *data, size_t len);
/* Events lost before @ts on @cpu (the writer marks the next page). */
int ust_rec_spool_add_lost(struct ust_rec_spool *s, unsigned int cpu, uint64_t ts, uint64_t count);
int ust_rec_spool_write(struct ust_rec_spool *s, struct ust_tdw *w, int buf, int nr_cpus);
unsigned long ust_rec_spool_count(const struct ust_rec_spool *s);
void ust_rec_spool_free(struct ust_rec_spool *s);

/* ---- mapping records (rec_maps.c) ----------------------------------------- */

/* Mapping records for the files in stacks, read while the process lives. */
struct ust_rec_maps;
/* @cmd_path: the traced command (its directory is searched too), or NULL. */
struct ust_rec_maps *ust_rec_maps_new(uint16_t mapping_type, const char *cmd_path);
/* A frame's file (@kdev, @ino; 0 for none): if not seen before, spool a
 * ustitch/user_mapping record (path and build-id from /proc/TGID). */
void ust_rec_maps_note_file(struct ust_rec_maps *m, struct ust_rec_spool *s, pid_t tgid,
			    unsigned int cpu, uint64_t ts, uint32_t kdev, uint64_t ino);
/*
 * A process that made an event: look at its mappings now, while it surely
 * lives (its stacks may be handled after it exited).  Once per process.
 */
void ust_rec_maps_note_task(struct ust_rec_maps *m, pid_t tgid);
/*
 * A process exec()ed the program at @path, the file (@kdev, @ino) (BPF's
 * EXEC record, ust_bpfu_on_exec()): its path and build-id known from now,
 * whether or not the process lives when its stacks are handled.
 */
void ust_rec_maps_note_exec(struct ust_rec_maps *m, const char *path, uint32_t kdev, uint64_t ino);
/* Snapshot a live process's file mappings. */
void ust_rec_maps_snapshot(struct ust_rec_maps *m, pid_t tgid);
unsigned long ust_rec_maps_count(const struct ust_rec_maps *m);
void ust_rec_maps_free(struct ust_rec_maps *m);

/* ---- unwind tables and stack flags (rec_tables.c) ------------------------- */

/* The command's file, as execvp() will find it; NULL if none. */
const char *ust_rec_tables_cmd_path(const char *cmd, char *buf, size_t len);
/* Load the tables of the command, the pids or (neither) every process,
 * before tracing starts. */
void ust_rec_tables_preload(struct ust_bpfu *u, const struct ust_rec_opts *o);

/* How the stacks were taken (UST_BPFU_STACK_* flags), for the summary. */
struct ust_rec_stack_counts {
	unsigned long stacks;
	unsigned long bottom_cfi;	/* reached the outermost frame by CFI alone */
	unsigned long bottom_fp;	/* ... with frame pointers for some frames */
	unsigned long truncated;
	unsigned long no_table, bad_cfa, fault, no_unwind, not_exec;
};

/*
 * A ustitch/stack_flags record just before @rec's stack (how the BPF side
 * took it), when it has anything to say.  0, or a negative errno.
 */
int ust_rec_tables_flags_record(struct ust_rec_spool *spool, uint16_t flags_id,
				const struct ust_bpfu_rec *rec);
void ust_rec_tables_count(struct ust_rec_stack_counts *n, unsigned int flags);
void ust_rec_tables_summary(struct ust_bpfu *u, const struct ust_rec_stack_counts *n, FILE *out);

/* CLOCK_MONOTONIC in ns: the clock of BPF, perf (use_clockid) and "mono". */
static inline uint64_t ust_rec_mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

#endif
