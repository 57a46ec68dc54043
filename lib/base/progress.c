// SPDX-License-Identifier: LGPL-2.1
/* ust_progress: see ustitch/progress.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ustitch/progress.h"

#define REDRAW_S	0.1	/* 10 Hz */

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void ust_progress_start(struct ust_progress *p, const char *what, uint64_t total, double delay_s)
{
	const char *env = getenv("USTITCH_PROGRESS_DELAY");

	memset(p, 0, sizeof(*p));
	if (env && env[0])
		delay_s = strtod(env, NULL);
	p->on = delay_s >= 0 && isatty(STDERR_FILENO);
	snprintf(p->what, sizeof(p->what), "%s", what);
	p->total = total;
	if (p->on)
		p->show_at = p->next = mono_s() + delay_s;
}

void ust_progress_set_total(struct ust_progress *p, uint64_t total)
{
	p->total = total;
}

void ust_progress_update(struct ust_progress *p, uint64_t done)
{
	double t;
	int n;

	if (!p->on)
		return;
	t = mono_s();
	if (t < p->next)
		return;
	p->next = t + REDRAW_S;
	if (p->total)
		n = fprintf(stderr, "\r%s: %3u %%", p->what,
			    (unsigned int)(done >= p->total ? 100 : done * 100 / p->total));
	else
		n = fprintf(stderr, "\r%s: %llu", p->what, (unsigned long long)done);
	/* A shorter line than the last leaves its end: blank it. */
	if (n - 1 < p->width)
		fprintf(stderr, "%*s", p->width - (n - 1), "");
	if (n - 1 > p->width)
		p->width = n - 1;
	fflush(stderr);
	p->shown = true;
}

void ust_progress_hide(struct ust_progress *p)
{
	if (!p->shown)
		return;
	fprintf(stderr, "\r%*s\r", p->width, "");
	fflush(stderr);
	p->shown = false;
	p->width = 0;
	p->next = 0;
}

void ust_progress_end(struct ust_progress *p)
{
	ust_progress_hide(p);
	p->on = false;
}
