/* SPDX-License-Identifier: LGPL-2.1 */
/* ustitch record --compression: the written trace.dat, compressed (rec_compress.c). */
#ifndef USTITCH_REC_COMPRESS_H
#define USTITCH_REC_COMPRESS_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Before recording: can @name (trace-cmd's: any, none, zstd, zlib) be had?
 * 0, or 2 said.  @by_default: @name was not asked for (the default "any"),
 * and a trace-cmd without algorithms, or none at all, returns 1 unsaid:
 * the file is then written uncompressed.
 */
int rec_compress_check(const char *name, bool by_default);
/*
 * @path (trace.dat version 6) rewritten as version 7 compressed with @name,
 * said on @out (NULL: stderr) unless @quiet.  0, or 1 said.
 */
int rec_compress(const char *path, const char *name, bool quiet, FILE *out);

#endif
