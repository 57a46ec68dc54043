// SPDX-License-Identifier: LGPL-2.1
/*
 * The writer's error messages, in a file of their own: tdw.c, tdw_page.c
 * and tdw_file.c all format them, into the caller's buffer.  No state.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tdw_priv.h"

int ust_tdw_err(char *err, size_t errsz, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsz)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return ret;
}
