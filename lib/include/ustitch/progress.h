/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_progress: a progress line on stderr for long work (the report's
 * first pass over a large trace, ustitch archive, an unwind table build),
 * as trace-cmd and perf show theirs: only when stderr is a terminal,
 * never into a pipe or a file; only once the work has taken @delay_s;
 * redrawn at most 10 times a second; erased at the end, so that what
 * follows prints as if it had never been there.
 *
 * USTITCH_PROGRESS_DELAY=SECONDS overrides every delay (tests: show it
 * at once); =-1 turns progress lines off.
 */
#ifndef USTITCH_PROGRESS_H
#define USTITCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct ust_progress {
	bool on;		/* stderr is a terminal */
	bool shown;		/* a line is on the screen */
	char what[128];
	uint64_t total;		/* 0: unknown (counts, no percentage) */
	double show_at, next;	/* monotonic seconds */
	int width;		/* of the line on the screen */
};

/* Start: "@what: N %" (or "@what: N" without @total) after @delay_s seconds. */
void ust_progress_start(struct ust_progress *p, const char *what, uint64_t total, double delay_s);
/* Work done so far, of the total; cheap when nothing is to be drawn. */
void ust_progress_update(struct ust_progress *p, uint64_t done);
void ust_progress_set_total(struct ust_progress *p, uint64_t total);
/* Erase the line before other output to the terminal; the next update draws it again. */
void ust_progress_hide(struct ust_progress *p);
/* Erase the line, if one was drawn.  @p may be started again. */
void ust_progress_end(struct ust_progress *p);

#endif
