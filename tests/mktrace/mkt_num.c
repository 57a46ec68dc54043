// SPDX-License-Identifier: LGPL-2.1
/*
 * Numbers in specs: decimal or 0x hex, nothing else (a leading 0 is not
 * octal: "010" is ten, as a reader of the spec would expect).
 */
#include <errno.h>
#include <stdlib.h>

#include "mkt.h"

bool ust_mkt_parse_u64(const char *s, uint64_t *v)
{
	int base = 10;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		base = 16;
		if (!*s || *s == '-' || *s == '+' || *s == ' ')
			return false;
	}
	errno = 0;
	*v = strtoull(s, &end, base);
	return !errno && !*end;
}

bool ust_mkt_parse_s64(const char *s, int64_t *v)
{
	uint64_t u;

	if (s && *s == '-') {
		if (!ust_mkt_parse_u64(s + 1, &u) || u > (uint64_t)INT64_MAX + 1)
			return false;
		*v = (int64_t)(0 - u);
		return true;
	}
	if (!ust_mkt_parse_u64(s, &u))
		return false;
	*v = (int64_t)u;
	return true;
}
