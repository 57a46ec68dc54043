/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_cap: record ftrace events from private tracefs instances into a
 * trace.dat (ust_tdw), copying the kernel's ring-buffer pages unchanged.
 *
 * The instances are this process's own ("ustitch-<pid>" for the main
 * buffer, "ustitch-<pid>-<name>" for each extra buffer): nothing of the top
 * instance or of other users' instances is touched, and every option the
 * capture depends on is set explicitly, because a new instance inherits the
 * top instance's trace options.  Removing an instance undoes everything.
 */
#ifndef USTITCH_CAPTURE_H
#define USTITCH_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ust_cap;
struct ust_tdw;

struct ust_cap_event {
	const char *system;	/* exact names (expand globs first) */
	const char *event;
	const char *filter;	/* ftrace filter or NULL */
};

struct ust_cap_buffer {
	const char *name;	/* NULL: the main buffer (the file's top buffer) */
	const struct ust_cap_event *events;
	int nr_events;
	const char *const *options;	/* ftrace options ("stacktrace", "nouserstacktrace") */
	int nr_options;
};

struct ust_cap_opts {
	const struct ust_cap_buffer *buffers;
	int nr_buffers;			/* [0] must be the main buffer */
	const char *clock;		/* NULL: "local" */
	size_t buffer_kb;		/* per CPU; 0: kernel default */
	const pid_t *pids;		/* set_event_pid (with event-fork); NULL: all */
	int nr_pids;
	pid_t notrace_pid;		/* set_event_notrace_pid, without event-fork; 0: none */
};

struct ust_cap_lost {
	unsigned long long overrun;	/* overwritten before we read them */
	unsigned long long dropped;	/* refused: buffer full */
};

/* Create the instances; tracing stays off until ust_cap_on().  NULL with
 * errno (and @err) on failure, and then nothing is left behind.  The other
 * functions return 0 (or a count) or a negative errno, the message in @err. */
struct ust_cap *ust_cap_start(const char *out_path, const struct ust_cap_opts *opts,
			      char *err, size_t errsz);
void ust_cap_on(struct ust_cap *c);
void ust_cap_off(struct ust_cap *c);
/* Follow one more pid (e.g. a command forked after start). */
int ust_cap_follow(struct ust_cap *c, pid_t pid, char *err, size_t errsz);
/* Move what the kernel has buffered into the output (non-blocking).
 * Returns the number of pages moved. */
long ust_cap_drain(struct ust_cap *c, char *err, size_t errsz);
/* The writer: add buffers, formats, records before ust_cap_finish(). */
struct ust_tdw *ust_cap_writer(struct ust_cap *c);
/* Lost-event counters of buffer @buf's CPU @cpu (read from tracefs). */
int ust_cap_lost(struct ust_cap *c, int buf, int cpu, struct ust_cap_lost *l,
		 char *err, size_t errsz);
int ust_cap_nr_cpus(const struct ust_cap *c);
/*
 * Stop, and move the last pages into the writer: after it the counts
 * (ust_cap_pages(), ust_cap_events()) are final.  ust_cap_finish() does it
 * when not done; after a failure only ust_cap_abort() is left.
 */
int ust_cap_flush(struct ust_cap *c, char *err, size_t errsz);
/* The events recorded into buffer @buf (as ust_cap_opts.buffers) so far. */
unsigned long ust_cap_events(const struct ust_cap *c, int buf);
/*
 * The file's kernel addresses are @addrs (malloc'ed, taken: freed with @c)
 * and no others: its kallsyms keeps only the lines that name them
 * (ust_tdw_kallsyms_cut()).  @sources_only: its sources write all of it (no
 * ftrace event): no printk formats, and task names are the sources' own,
 * not the kernel's saved_cmdlines.  Not called: kallsyms whole, both
 * written.
 */
void ust_cap_take_kernel_addrs(struct ust_cap *c, uint64_t *addrs, size_t nr, bool sources_only);
/* Stop, flush, write the trace.dat, remove the instances, free @c (also on
 * failure, which leaves no trace.dat). */
int ust_cap_finish(struct ust_cap *c, char *err, size_t errsz);
/* Remove the instances without writing (error paths). */
void ust_cap_abort(struct ust_cap *c);
unsigned long ust_cap_pages(const struct ust_cap *c);
const char *ust_cap_instance_name(const struct ust_cap *c);

/*
 * Remove "ustitch-<pid>[-name]" instances whose owner <pid> no longer runs
 * (left by a recorder that was killed).  Returns how many were removed.
 */
int ust_cap_remove_stale(void);

/* Format text of system/event as this kernel exports it (malloc'ed). */
char *ust_cap_read_format(const char *system, const char *event);

#endif
