// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-mktrace: write trace.dat fixtures without a kernel that has the
 * deferred-unwind series (and without Python).
 *
 *   ust-mktrace SPEC OUT.dat          SPEC: a spec file, or - for stdin
 *   ust-mktrace --bench NEVENTS NSTACKS OUT.dat [--binary PATH]
 *
 * Exit status: 0 written, 1 system error, 2 bad spec or arguments.  The
 * spec language is described in mkt_spec.c.
 */
#include <stdio.h>
#include <string.h>

#include "mkt.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: ust-mktrace SPEC OUT.dat\n"
		"       ust-mktrace --bench NEVENTS NSTACKS OUT.dat [--binary PATH]\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t nr_events, nr_stacks;
	const char *binary = NULL;

	if (argc == 3 && strcmp(argv[1], "--bench"))
		return ust_mkt_run_spec(argv[1], argv[2]);
	if ((argc != 5 && argc != 7) || strcmp(argv[1], "--bench"))
		return usage();
	if (argc == 7) {
		if (strcmp(argv[5], "--binary"))
			return usage();
		binary = argv[6];
	}
	if (!ust_mkt_parse_u64(argv[2], &nr_events) || !ust_mkt_parse_u64(argv[3], &nr_stacks)) {
		fprintf(stderr, "ust-mktrace: --bench: NEVENTS and NSTACKS are numbers\n");
		return 2;
	}
	return ust_mkt_run_bench(nr_events, nr_stacks, argv[4], binary);
}
