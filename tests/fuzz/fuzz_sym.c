// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the ELF/DWARF symbolizer.  The input is an ELF file (seeds:
 * programs and libraries the compiler builds at seed time, with and without
 * -g, stripped, with a debug link); it is written to a file, opened with a
 * fresh cache, and looked up at offsets spread over the file and at its
 * symbols, with and without lines.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "ustitch/sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const dirs[] = { "/nonexistent-ust-fuzz" };
	struct ust_sym_opts opts = { .debug_dirs = dirs, .nr_debug_dirs = 1 };
	struct ust_sym_frame fr[8];
	struct ust_sym_cache *c;
	struct ust_sym_file *f;
	const uint8_t *bid;
	const char *path;
	char err[512];
	uint8_t idbuf[64];

	if (size > (2u << 20))
		return 0;
	path = fuzz_tmpfile(data, size, "sym");
	if (!path)
		return 0;
	(void)ust_sym_read_build_id(path, idbuf, sizeof(idbuf));
	c = ust_sym_cache_new(&opts);
	if (!c)
		abort();
	f = ust_sym_cache_get(c, path, NULL, 0, err, sizeof(err));
	if (f) {
		uint64_t off, fsz;

		(void)ust_sym_file_build_id(f, &bid);
		(void)ust_sym_file_basename(f);
		for (unsigned int i = 0; i < 16; i++) {
			off = size ? (uint64_t)size * i / 16 : i;
			(void)ust_sym_lookup(f, off, i & 1, true, fr, 8);
			(void)ust_sym_lookup(f, off + 1, false, false, fr, 1);
		}
		(void)ust_sym_lookup(f, UINT64_MAX, true, true, fr, 8);
		if (ust_sym_find_function(f, "main", &off, &fsz) == 0) {
			(void)ust_sym_lookup(f, off, false, true, fr, 8);
			(void)ust_sym_lookup(f, off + fsz / 2, true, true, fr, 8);
		}
	}
	ust_sym_cache_free(c);
	unlink(path);
	return 0;
}
