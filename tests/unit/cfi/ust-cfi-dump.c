// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-cfi-dump: the unwind table ust_cfi builds for a file, as text.
 *
 *   ust-cfi-dump [-s] [-e] [-c] FILE rows of FILE (-s: stats only;
 *                                   -e: .eh_frame only; -c: checked
 *                                   against libdw's, ust_cfi_opts.check)
 *   ust-cfi-dump [-s] --vdso        rows of this process's vDSO
 *
 * One row a line: "OFFSET cfa=RULE [rbp=RULE [rbx=RULE]]", offsets in
 * the file (rbx only where it is not the caller's: see ust_cfi_row_format);
 * then the stats.  Exit status 1 with the error on stderr when the
 * table cannot be built.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <elf.h>

#include "ustitch/cfi.h"

/* The vDSO's image: up to the end of its section headers. */
static size_t vdso_size(const Elf64_Ehdr *eh)
{
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end;
}

static void print_stats(const struct ust_cfi_table *t)
{
	const struct ust_cfi_stats *s = &t->stats;
	char hex[2 * UST_CFI_BUILD_ID_MAX + 1];
	unsigned int i;

	ust_cfi_build_id_hex(t, hex, sizeof(hex));
	printf("build-id: %s\n", hex[0] ? hex : "(none)");
	printf("fdes: %u (.debug_frame %u%s, outside text %u, overlapping %u)\n", s->fdes,
	       s->fdes_debug_frame, t->debug_file ? " from the debug file" : "",
	       s->fdes_outside, s->fdes_overlapping);
	printf("rows: %u (%zu bytes), offsets too large: %u\n", s->rows,
	       (size_t)s->rows * sizeof(struct ust_cfi_row), s->rows_overflow);
	printf("text: %" PRIu64 " bytes, covered %" PRIu64 " (%.2f%%)\n", s->text_bytes,
	       s->covered_bytes, s->text_bytes ? 100.0 * (double)s->covered_bytes /
	       (double)s->text_bytes : 0.0);
	for (i = 0; i < UST_CFI_NR_CFA_TYPES; i++)
		printf("  cfa %-12s rows %8u  bytes %10" PRIu64 "\n", ust_cfi_cfa_name(i),
		       s->rows_cfa[i], s->bytes_cfa[i]);
	for (i = 0; i < UST_CFI_NR_RBP_TYPES; i++)
		printf("  rbp %-12s rows %8u\n", ust_cfi_rbp_name(i), s->rows_rbp[i]);
	for (i = 0; i < UST_CFI_NR_RBP_TYPES; i++)
		printf("  rbx %-12s rows %8u\n", ust_cfi_rbp_name(i), s->rows_rbx[i]);
	printf("build: %.3f ms\n", s->build_ms);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "vdso", no_argument, NULL, 'v' },
		{ "stats", no_argument, NULL, 's' },
		{ "eh-frame-only", no_argument, NULL, 'e' },
		{ "check", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct ust_cfi_opts opts = { 0 };
	struct ust_cfi_table *t;
	bool vdso = false, stats_only = false;
	char err[512] = "";
	uint32_t i;
	int c, ret;

	while ((c = getopt_long(argc, argv, "sec", lopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			vdso = true;
			break;
		case 's':
			stats_only = true;
			break;
		case 'e':
			opts.no_debug_frame = true;
			break;
		case 'c':
			opts.check = true;
			break;
		default:
			goto usage;
		}
	}
	if (vdso == (optind < argc) || argc - optind > 1)
		goto usage;

	if (vdso) {
		const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);

		if (!eh) {
			fprintf(stderr, "ust-cfi-dump: no vDSO\n");
			return 1;
		}
		ret = ust_cfi_build_mem(eh, vdso_size(eh), &opts, &t, err, sizeof(err));
	} else {
		ret = ust_cfi_build_path(argv[optind], &opts, &t, err, sizeof(err));
	}
	if (ret < 0) {
		fprintf(stderr, "ust-cfi-dump: %s\n", err);
		return 1;
	}
	if (!stats_only) {
		for (i = 0; i < t->nr_rows; i++) {
			char buf[128];

			ust_cfi_row_format(&t->rows[i], buf, sizeof(buf));
			puts(buf);
		}
	}
	print_stats(t);
	ust_cfi_table_free(t);
	return 0;

usage:
	fprintf(stderr, "usage: ust-cfi-dump [-s] [-e] [-c] FILE | ust-cfi-dump [-s] --vdso\n");
	return 2;
}
