// SPDX-License-Identifier: LGPL-2.1
/*
 * cfi-tables: what ust_cfi costs and gives, per library.
 *
 *   bench_cfi [LIBRARY...]   (default: libc.so.6 and libLLVM-14.so)
 *
 * For each library: the table's build time (best of 3, a fresh build
 * each time, .eh_frame only and with the .debug_frame lookup), per MB of
 * text; the table's bytes (16-byte rows) and rows per MB of text; the
 * share of rows and of bytes of each rule type (how much the walkers
 * cannot follow: UNSUPPORTED); the rbp and rbx rules, and what tracking
 * rbx costs (its own rows, 16- rather than 12-byte rows); then the disk cache: load time of the saved table
 * against the build (a temporary cache directory, best of 3).  Nothing
 * is asserted: these are figures for bench/README.md.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ustitch/cfi.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void rmtree_flat(const char *dir, const struct ust_cfi_table *t)
{
	char hex[2 * UST_CFI_BUILD_ID_MAX + 1], path[PATH_MAX];

	ust_cfi_build_id_hex(t, hex, sizeof(hex));
	snprintf(path, sizeof(path), "%s/%s.cfi", dir, hex);
	unlink(path);
	rmdir(dir);
}

static int bench(const char *path)
{
	struct ust_cfi_opts eh_only = { .no_debug_frame = true };
	struct ust_cfi_table *t = NULL, *l;
	double best_eh = 1e30, best_all = 1e30, best_load = 1e30, mb;
	char err[512] = "", dir[] = "/tmp/ust-bench-cfi-XXXXXX";
	const struct ust_cfi_stats *s;
	unsigned int i, rbx_rows = 0;
	int k;

	for (k = 0; k < 3; k++) {
		double t0 = now_ms();

		if (ust_cfi_build_path(path, &eh_only, &l, err, sizeof(err))) {
			printf("%s: %s\n", path, err);
			return 1;
		}
		best_eh = now_ms() - t0 < best_eh ? now_ms() - t0 : best_eh;
		ust_cfi_table_free(l);
		t0 = now_ms();
		if (ust_cfi_build_path(path, NULL, &l, err, sizeof(err))) {
			printf("%s: %s\n", path, err);
			return 1;
		}
		best_all = now_ms() - t0 < best_all ? now_ms() - t0 : best_all;
		ust_cfi_table_free(t);
		t = l;
	}
	s = &t->stats;
	mb = (double)s->text_bytes / 1e6;
	printf("%s\n", path);
	printf("  text %.2f MB, %u FDEs, %u rows (%u from .debug_frame FDEs), covered %.2f %% of text\n",
	       mb, s->fdes, s->rows, s->fdes_debug_frame,
	       100.0 * (double)s->covered_bytes / (double)s->text_bytes);
	printf("  build: %.1f ms (.eh_frame only %.1f ms) = %.1f ms per MB of text\n",
	       best_all, best_eh, best_all / mb);
	printf("  table: %zu bytes = %.0f bytes per MB of text (%.2f %% of the text), %.0f rows per MB\n",
	       (size_t)s->rows * sizeof(struct ust_cfi_row),
	       (double)s->rows * sizeof(struct ust_cfi_row) / mb,
	       100.0 * (double)s->rows * sizeof(struct ust_cfi_row) / (double)s->text_bytes,
	       (double)s->rows / mb);
	for (i = 0; i < UST_CFI_NR_CFA_TYPES; i++)
		if (s->rows_cfa[i])
			printf("  %-12s %6.2f %% of rows  %6.2f %% of covered bytes\n",
			       ust_cfi_cfa_name(i), 100.0 * s->rows_cfa[i] / s->rows,
			       i == UST_CFI_CFA_NONE ? 0.0 :
			       100.0 * (double)s->bytes_cfa[i] / (double)s->covered_bytes);
	printf("  rbp rules: same %u, cfa %u, deref-rbp %u, unsupported %u; offsets too large %u\n",
	       s->rows_rbp[0], s->rows_rbp[1], s->rows_rbp[2], s->rows_rbp[3], s->rows_overflow);
	printf("  rbx rules: same %u, cfa %u, deref-rbp %u, unsupported %u\n",
	       s->rows_rbx[UST_CFI_RBP_SAME], s->rows_rbx[UST_CFI_RBP_CFA],
	       s->rows_rbx[UST_CFI_RBP_DEREF_RBP], s->rows_rbx[UST_CFI_RBP_UNSUPPORTED]);
	/* What tracking rbx costs: its rows and 16- instead of 12-byte rows. */
	for (i = 1; i < t->nr_rows; i++) {
		const struct ust_cfi_row *a = &t->rows[i - 1], *b = &t->rows[i];

		if (a->cfa_type == b->cfa_type && a->cfa_off == b->cfa_off &&
		    a->rbp_type == b->rbp_type && a->rbp_off == b->rbp_off)
			rbx_rows++;
	}
	printf("  rbx cost: %u rows (%.2f %%) only for the rbx rule; without rbx: %u rows of "
	       "12 bytes = %.0f bytes per MB of text\n",
	       rbx_rows, 100.0 * rbx_rows / (s->rows ? s->rows : 1), s->rows - rbx_rows,
	       (double)(s->rows - rbx_rows) * 12 / mb);

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (t->build_id_len && ust_cfi_disk_save(dir, t, err, sizeof(err)) == 0) {
		for (k = 0; k < 3; k++) {
			double t0 = now_ms(), d;

			if (ust_cfi_disk_load(dir, t->build_id, t->build_id_len, &l, err,
					      sizeof(err))) {
				printf("  load: %s\n", err);
				break;
			}
			d = now_ms() - t0;
			best_load = d < best_load ? d : best_load;
			ust_cfi_table_free(l);
		}
		printf("  cached load: %.2f ms, build/load = %.0fx\n", best_load,
		       best_all / best_load);
	} else {
		printf("  cached load: not measured (%s)\n", t->build_id_len ? err : "no build-id");
	}
	rmtree_flat(dir, t);
	ust_cfi_table_free(t);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const def[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/llvm-14/lib/libLLVM-14.so",
	};
	int i, ret = 0;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			ret |= bench(argv[i]);
	} else {
		for (i = 0; i < 2; i++)
			if (access(def[i], R_OK) == 0)
				ret |= bench(def[i]);
			else
				printf("%s: not installed, skipped\n", def[i]);
	}
	return ret;
}
