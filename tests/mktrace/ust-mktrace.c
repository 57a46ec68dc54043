// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-mktrace: write trace.dat fixtures without a kernel that has the
 * deferred-unwind series (and without Python).
 *
 *   ust-mktrace SPEC OUT.dat          SPEC: a spec file, or - for stdin
 *   ust-mktrace --bench NEVENTS NSTACKS OUT.dat [--binary PATH] [--ordinary N]
 *               [--distinct N] [--ustitch-buffer]
 *   ust-mktrace --torture SEED SPEC TRUTH   a random spec with lost events (mkt_torture.c)
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
		"       ust-mktrace --bench NEVENTS NSTACKS OUT.dat [--binary PATH] [--ordinary N]\n"
		"                   [--distinct N] [--ustitch-buffer]\n"
		"       ust-mktrace --torture SEED SPEC TRUTH\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct ust_mkt_bench_opts o = { 0 };
	uint64_t nr_events, nr_stacks;
	const char *binary = NULL;
	int i;

	if (argc == 3 && strcmp(argv[1], "--bench"))
		return ust_mkt_run_spec(argv[1], argv[2]);
	if (argc == 5 && !strcmp(argv[1], "--torture")) {
		uint64_t seed;

		if (!ust_mkt_parse_u64(argv[2], &seed))
			return usage();
		return ust_mkt_run_torture(seed, argv[3], argv[4]);
	}
	if (argc < 5 || strcmp(argv[1], "--bench"))
		return usage();
	for (i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "--ustitch-buffer"))
			o.ustitch_buffer = true;
		else if (i + 1 >= argc)
			return usage();
		else if (!strcmp(argv[i], "--binary"))
			binary = argv[++i];
		else if (!strcmp(argv[i], "--ordinary") && ust_mkt_parse_u64(argv[i + 1], &o.ordinary))
			i++;
		else if (!strcmp(argv[i], "--distinct") && ust_mkt_parse_u64(argv[i + 1], &o.distinct))
			i++;
		else
			return usage();
	}
	if (!ust_mkt_parse_u64(argv[2], &nr_events) || !ust_mkt_parse_u64(argv[3], &nr_stacks)) {
		fprintf(stderr, "ust-mktrace: --bench: NEVENTS and NSTACKS are numbers\n");
		return 2;
	}
	return ust_mkt_run_bench(nr_events, nr_stacks, argv[4], binary, &o);
}
