// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch record --addr-filter SPEC: perf's address filters
 * (filter|start|stop file:...@PATH | kernel:...) applied by BPF to every
 * event of the run.  Parsed and checked here, on the command line, so that
 * a bad spec leaves no trace; rec_lockheld.c then records every event
 * through perf + BPF, with the address tests in front of each graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "rec.h"
#include "rec_addrfilter.h"

#define PFX "ustitch record: --addr-filter: "

void rec_af_usage(FILE *out)
{
	fputs("  --addr-filter SPEC  keep only the events and samples of code in an address\n"
	      "                   range, in perf's language (repeatable; ranges add up):\n"
	      "                     filter file:SYMBOL@PATH     the user IP (at kernel entry, or\n"
	      "                       sampled) is in SYMBOL of PATH: any process, any address\n"
	      "                     filter file:OFF[/SIZE]@PATH  the same by file offset\n"
	      "                     filter kernel:SYMBOL|ADDR[/SIZE]  a sample's kernel IP is there\n"
	      "                     start file:SYM@PATH / stop file:SYM@PATH  a task's events\n"
	      "                       are kept from its call of a start until a stop (uprobes;\n"
	      "                       kernel: ranges by kprobes, where the kernel has them)\n"
	      "                   e.g. --addr-filter 'filter file:malloc@/lib/x86_64-linux-gnu/libc.so.6'\n"
	      "                   Filter ranges are ORed; the result is ANDed with each -f.\n"
	      "                   Tracepoint events are recorded through perf + BPF (\"ustitch\"\n"
	      "                   buffer); samples are filtered by BPF on the sampling event.\n",
	      out);
}

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

int rec_af_option(struct rec_opts *o, const char *spec)
{
	struct ust_af one = { 0 };
	int before, bad, col, alen, slen;
	char err[1024];
	void *n;

	if (ust_af_parse(spec, NULL, &one, err, sizeof(err))) {
		fprintf(stderr, PFX "%s\n", err);
		ust_af_free(&one);
		return 2;
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
	if (ust_af_bpf_check(o->af, &bad, err, sizeof(err))) {
		if (bad < before) {
			fprintf(stderr, PFX "%s\n", err);
			return 2;
		}
		/* Range j is tokens 2j (action) and 2j + 1 (source). */
		col = token_col(spec, 2 * (bad - before), &alen);
		token_col(spec, 2 * (bad - before) + 1, &slen);
		fprintf(stderr, PFX "column %d: '%.*s %.*s': %s\n", col, alen, spec + col - 1,
			slen, spec + token_col(spec, 2 * (bad - before) + 1, &slen) - 1, err);
		return 2;
	}
	return 0;
oom:
	ust_af_free(&one);
	fprintf(stderr, PFX "out of memory\n");
	return 2;
}
