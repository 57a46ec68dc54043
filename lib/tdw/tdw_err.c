// SPDX-License-Identifier: LGPL-2.1
/*
 * The writer's error text, in a file of its own: tdw.c, tdw_page.c and
 * tdw_file.c all set it, and none of them needs another for that.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tdw_priv.h"

/*
 * ust_tdw_open() has no object to carry its error text, and a failed
 * ust_tdw_close() has just freed its own: keep the text per thread and hand
 * it out through ust_tdw_error(NULL).
 */
static __thread char open_err[512];

int tdw_set_error(struct ust_tdw *w, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w ? w->err : open_err, w ? sizeof(w->err) : sizeof(open_err), fmt, ap);
	va_end(ap);
	return ret;
}

const char *ust_tdw_error(const struct ust_tdw *w)
{
	return w ? w->err : open_err;
}
