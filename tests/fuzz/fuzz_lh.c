// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the lock_held() filter grammar.  It accepts, or rejects with
 * "column N: ..."; an accepted filter must give its leaves back as text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "ustitch/lh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ust_lh_expr e;
	char err[512];
	char *s;
	int r;

	if (size > 4096)
		return 0;
	s = fuzz_str(data, size);
	(void)ust_lh_mentions(s);
	err[0] = '\0';
	r = ust_lh_parse(s, &e, err, sizeof(err));
	if (r == 0) {
		for (int i = 0; i < e.nr_specs; i++)
			free(ust_lh_leaf_text(&e, i));
	} else if (r == -EINVAL) {
		fuzz_check_column("lock_held", s, err);
	}
	ust_lh_expr_free(&e);
	free(s);
	return 0;
}
