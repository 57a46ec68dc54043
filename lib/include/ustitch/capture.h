/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_cap: record ftrace events from a private tracefs instance into a
 * trace.dat (ust_tdw), copying the kernel's ring-buffer pages unchanged.
 *
 * The instance is this process's own ("ustitch-<pid>"): nothing of the top
 * instance or of other users' instances is touched, and every option the
 * capture depends on is set explicitly, because a new instance inherits the
 * top instance's trace options.
 */
#ifndef USTITCH_CAPTURE_H
#define USTITCH_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ust_cap;

struct ust_cap_event {
	const char *system;	/* may be a regex, as tracefs_event_enable() takes */
	const char *event;
	const char *filter;	/* ftrace filter or NULL */
};

struct ust_cap_opts {
	const struct ust_cap_event *events;
	int nr_events;
	const char *const *options;	/* ftrace options to turn on ("stacktrace") */
	int nr_options;
	const char *clock;		/* NULL: "local" */
	size_t buffer_kb;		/* per CPU; 0: kernel default */
	pid_t *pids;			/* set_event_pid (with event-fork); NULL: all */
	int nr_pids;
};

/* Create the instance and start tracing.  NULL with @err on failure, and
 * then nothing is left behind. */
struct ust_cap *ust_cap_start(const char *out_path, const struct ust_cap_opts *opts,
			      char *err, size_t errlen);
/* Move what the kernel has buffered into the output (non-blocking). */
int ust_cap_drain(struct ust_cap *c);
/* Stop, flush, write the trace.dat, remove the instance. 0 or -1 (@err). */
int ust_cap_finish(struct ust_cap *c, char *err, size_t errlen);
/* Remove the instance without writing (error paths, signals). */
void ust_cap_abort(struct ust_cap *c);
const char *ust_cap_instance_name(const struct ust_cap *c);
unsigned long ust_cap_pages(const struct ust_cap *c);

#endif
