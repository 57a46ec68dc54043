// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_rec_filter_fields: the field names of an ftrace filter (-f) checked
 * against the event's format before the kernel sees it.  The kernel only
 * says EINVAL; a misspelled field is the usual cause, and the fields the
 * event has are the useful answer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/addrfilter.h"
#include "ustitch/capture.h"
#include "ustitch/lh.h"
#include "rec_priv.h"

/* Fields every event has in a filter without being in its format
 * (kernel/trace/trace_events.c, the generic fields). */
static const char *const generic[] = {
	"CPU", "cpu", "common_cpu", "COMM", "comm", "common_comm",
	"STACKTRACE", "stacktrace", "common_stacktrace", NULL,
};

static bool is_generic(const char *name)
{
	int i;

	for (i = 0; generic[i]; i++)
		if (!strcmp(generic[i], name))
			return true;
	return false;
}

/* The event's own fields, for the message: "a, b, c". */
static void list_fields(const struct ust_lh_format *f, char *buf, size_t size)
{
	size_t len = 0;
	int i, w;

	buf[0] = '\0';
	for (i = 0; i < f->nr_fields && len < size; i++) {
		if (!strncmp(f->fields[i].name, "common_", 7))
			continue;
		w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", f->fields[i].name);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

int ust_rec_filter_fields(const char *sys, const char *ev, const char *filter, char *err,
			  size_t errsz)
{
	struct ust_lh_format fmt;
	struct ust_lh_expr e;
	char *text, fields[1024], why[8];
	int i, ret = 0;

	/* The one filter parser (lock_held() terms are its own nodes): what
	 * it cannot parse, the kernel judges. */
	if (ust_lh_parse(filter, &e, why, sizeof(why))) {
		ust_lh_expr_free(&e);
		return 0;
	}
	text = ust_cap_read_format(sys, ev);
	if (!text || ust_lh_format_parse(text, &fmt)) {
		free(text);
		ust_lh_expr_free(&e);
		return 0;
	}
	free(text);
	for (i = 0; i < e.nr_nodes; i++) {
		const char *name = e.nodes[i].field;

		if (e.nodes[i].kind != UST_LH_N_TERM || ust_lh_format_field(&fmt, name) ||
		    is_generic(name))
			continue;
		list_fields(&fmt, fields, sizeof(fields));
		snprintf(err, errsz, "-f '%s' on %s:%s: no field '%s' (fields: %s)", filter,
			 sys, ev, name, fields[0] ? fields : "only the common_ ones");
		ret = -EINVAL;
		break;
	}
	ust_lh_format_free(&fmt);
	ust_lh_expr_free(&e);
	return ret;
}

/*
 * After the summary: an ftrace buffer whose every event has a -f and that
 * holds nothing; a lock_held() -f that kept none of what it saw.  An
 * empty trace whose filters are to blame says so.
 */
void ust_rec_filter_hint(const struct ust_rec_opts *o, const unsigned long *events, FILE *out)
{
	struct ust_rec_counts n = { 0 };
	const struct ust_rec_source *src;
	int b, i;

	for (b = 0; events && b < o->nr_bufs; b++) {
		const struct ust_rec_buffer *buf = &o->bufs[b];

		if (events[b] || !buf->nr_ev)
			continue;
		for (i = 0; i < buf->nr_ev && buf->ev[i].filter; i++)
			;
		if (i < buf->nr_ev)
			continue;	/* an event without -f: not the filters' doing */
		fprintf(out, UST_REC_PFX "-f kept nothing: no event of the %s%s passed its filter (-f '%s' on %s:%s%s)\n",
			buf->name ? "buffer " : "main buffer", buf->name ? buf->name : "",
			buf->ev[0].filter, buf->ev[0].system, buf->ev[0].event,
			buf->nr_ev > 1 ? ", ..." : "");
	}
	if (o->af && o->af->nr)
		return;		/* --addr-filter's hint, if any */
	for (src = o->sources; src; src = src->next)
		if (src->ops->counts)
			src->ops->counts((struct ust_rec_source *)src, &n);
	if (n.filtered && !n.kept)
		fprintf(out, UST_REC_PFX "-f kept nothing: none of the %lu events its BPF filter saw passed it\n",
			n.filtered);
}
