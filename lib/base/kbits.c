// SPDX-License-Identifier: LGPL-2.1
/* ust_kbits: look up the compiled-in kernel-bits texts. */
#include <errno.h>
#include <stdlib.h>
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

int ust_kbits_syscall_nr(const char *name)
{
	const char *p = ust_kbits_get("syscalls/x86_64");
	size_t len = strlen(name);

	/* Lines "NUMBER NAME"; comments start with '#'. */
	while (p && *p) {
		const char *eol = strchr(p, '\n'), *sp = strchr(p, ' ');

		if (!eol)
			eol = p + strlen(p);
		if (*p != '#' && sp && sp < eol && (size_t)(eol - sp - 1) == len &&
		    !memcmp(sp + 1, name, len))
			return (int)strtol(p, NULL, 10);
		p = *eol ? eol + 1 : eol;
	}
	return -ENOENT;
}
