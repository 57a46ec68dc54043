// SPDX-License-Identifier: LGPL-2.1
/* ust_kbits: look up the compiled-in kernel-bits texts. */
#include <string.h>

#include "ustitch/kbits.h"

const char *ust_kbits_get(const char *key)
{
	const struct ust_kbits_entry *e;

	for (e = ust_kbits_table; e->key; e++)
		if (!strcmp(e->key, key))
			return e->text;
	return NULL;
}
