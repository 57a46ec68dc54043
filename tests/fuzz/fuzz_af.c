// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the --addr-filter grammar.  Kernel symbols come from a small
 * kallsyms file written here; file ranges name real files.  It accepts, or
 * rejects with "column N: ..." (syntax, and names that do not exist).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "ustitch/addrfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char kallsyms[128];
	struct ust_af_opts opts;
	struct ust_af af;
	char err[512], buf[512];
	char *s;
	int r;

	if (!kallsyms[0]) {
		FILE *f;

		snprintf(kallsyms, sizeof(kallsyms), "/tmp/ust-fuzz-kallsyms.%d", (int)getpid());
		f = fopen(kallsyms, "w");
		if (!f)
			abort();
		fputs("ffffffff81000000 T _stext\n"
		      "ffffffff81000100 T fake_lock_fn\n"
		      "ffffffff81000180 t fake_static_fn\n"
		      "ffffffff81000200 T fake_end\n", f);
		fclose(f);
	}
	if (size > 4096)
		return 0;
	opts.kallsyms = kallsyms;
	s = fuzz_str(data, size);
	err[0] = '\0';
	r = ust_af_parse(s, &opts, &af, err, sizeof(err));
	if (r == 0) {
		for (int i = 0; i < af.nr; i++) {
			ust_af_format(&af, i, buf, sizeof(buf));
			(void)ust_af_match_kernel(&af, -1, 0xffffffff81000100ULL);
			(void)ust_af_match_file(&af, -1, 0, 0, 0);
		}
		ust_af_free(&af);
	} else if (r == -EINVAL || r == -ENOENT) {
		fuzz_check_column("addr-filter", s, err);
	}
	free(s);
	return 0;
}
