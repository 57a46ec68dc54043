/* SPDX-License-Identifier: LGPL-2.1 */
/* Helpers shared by the libFuzzer targets (tests/fuzz/). */
#ifndef UST_FUZZ_H
#define UST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write @data to a per-process temporary file (reused: the path stays the
 * same, so caches keyed by path must be dropped after each input).  Returns
 * the path, or NULL. */
static inline const char *fuzz_tmpfile(const uint8_t *data, size_t size, const char *tag)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/ust-fuzz-%s.%d", tag, (int)getpid());
	f = fopen(path, "wb");
	if (!f)
		return NULL;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	return path;
}

/* A NUL-terminated copy of the input (for the text grammars). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The error of a rejected text must say where: "column N: ...". */
static inline void fuzz_check_column(const char *what, const char *src, const char *err)
{
	if (strncmp(err, "column ", 7) || err[7] < '1' || err[7] > '9') {
		fprintf(stderr, "%s: rejected without a column: \"%s\" for \"%s\"\n", what, err, src);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
