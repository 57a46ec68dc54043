// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the CFI unwind-table builder, ELF bytes (.eh_frame,
 * .eh_frame_hdr, .debug_frame) -> rows with ust_cfi_build_mem(); then
 * lookups and the text form of the rows found.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "ustitch/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ust_cfi_table *t = NULL;
	char err[512], buf[256], hex[2 * UST_CFI_BUILD_ID_MAX + 1];
	void *img;

	if (size > (2u << 20))
		return 0;
	img = malloc(size ? size : 1);
	if (!img)
		abort();
	memcpy(img, data, size);
	for (int nodbg = 0; nodbg < 2; nodbg++) {
		struct ust_cfi_opts opts = { .no_debug_frame = nodbg };

		t = NULL;
		if (ust_cfi_build_mem(img, size, &opts, &t, err, sizeof(err)) == 0) {
			if (!t)
				abort();
			for (uint32_t i = 1; i < t->nr_rows; i++)
				if (t->rows[i - 1].off > t->rows[i].off)
					abort();	/* rows must be sorted */
			for (unsigned int i = 0; i < 8; i++) {
				const struct ust_cfi_row *r =
					ust_cfi_lookup(t, t->nr_rows ? t->rows[0].off + i * 7 : i);

				if (r)
					(void)ust_cfi_row_format(r, buf, sizeof(buf));
			}
			ust_cfi_build_id_hex(t, hex, sizeof(hex));
			ust_cfi_table_free(t);
		}
	}
	free(img);
	return 0;
}
