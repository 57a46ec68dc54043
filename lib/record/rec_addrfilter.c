// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_rec_addrfilter: --addr-filter SPEC, perf's address filters
 * (filter|start|stop file:...@PATH | kernel:...) applied by BPF to every
 * event of the run.  Parsed and checked as the options are filled, so
 * that a bad spec leaves no trace; rec_lockheld.c then records every event
 * through perf + BPF, with the address tests in front of each graph.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "ustitch/rec.h"
#include "rec_priv.h"

/* Column (from 1) of token @k of @spec, split as the parser splits. */
static int token_col(const char *spec, int k, int *len)
{
	const char *p = spec;

	for (;;) {
		p += strspn(p, " ,\n");
		*len = (int)strcspn(p, " ,\n");
		if (!*p || !k--)
			return (int)(p - spec) + 1;
		p += *len;
	}
}

int ust_rec_addrfilter_add(struct ust_rec_opts *o, const char *spec, char *err, size_t errsz)
{
	struct ust_af one = { 0 };
	int before, bad, col, alen, slen;
	char why[1024];
	void *n;

	if (ust_af_parse(spec, NULL, &one, err, errsz)) {
		ust_af_free(&one);
		return -EINVAL;
	}
	if (!o->af && !(o->af = calloc(1, sizeof(*o->af))))
		goto oom;
	n = realloc(o->af->r, (size_t)(o->af->nr + one.nr) * sizeof(*one.r));
	if (!n)
		goto oom;
	o->af->r = n;
	before = o->af->nr;
	/* The ranges move over, with their strings. */
	memcpy(o->af->r + o->af->nr, one.r, (size_t)one.nr * sizeof(*one.r));
	o->af->nr += one.nr;
	free(one.r);
	if (ust_af_bpf_check(o->af, &bad, why, sizeof(why))) {
		if (bad < before) {
			snprintf(err, errsz, "%s", why);
			return -EINVAL;
		}
		/* Range j is tokens 2j (action) and 2j + 1 (source). */
		col = token_col(spec, 2 * (bad - before), &alen);
		token_col(spec, 2 * (bad - before) + 1, &slen);
		snprintf(err, errsz, "column %d: '%.*s %.*s': %s", col, alen, spec + col - 1,
			 slen, spec + token_col(spec, 2 * (bad - before) + 1, &slen) - 1, why);
		return -EINVAL;
	}
	return 0;
oom:
	ust_af_free(&one);
	snprintf(err, errsz, "out of memory");
	return -ENOMEM;
}

/*
 * After the summary: --addr-filter with 'filter' ranges kept nothing.
 * The usual cause: the range was meant as "while inside this function",
 * but a 'filter' range tests the record's own IP (a sample's leaf, the
 * user IP at kernel entry), which is rarely in a function that calls
 * others; 'start'/'stop' ranges say "from a call on".
 */
void ust_rec_addrfilter_hint(const struct ust_rec_opts *o, FILE *out)
{
	struct ust_rec_counts n = { 0 };
	const struct ust_rec_source *src;
	bool filter = false;
	int i;

	for (i = 0; o->af && i < o->af->nr; i++)
		filter |= o->af->r[i].action == UST_AF_FILTER;
	if (!filter)
		return;
	for (src = o->sources; src; src = src->next)
		if (src->ops->counts)
			src->ops->counts((struct ust_rec_source *)src, &n);
	if (n.kept || n.samples)
		return;
	fprintf(out, UST_REC_PFX "--addr-filter kept nothing: a 'filter' range keeps a sample or event only when its own IP (a sample's leaf, the user IP at kernel entry) is in it, not when the range is on the stack; to keep what runs from a call of a function on, use 'start' and 'stop' ranges\n");
}
