// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the recorder's end of a parked walk (lib/record/bpfu_park.c).
 * The input is a table of up to 8 rows (12 bytes each, after a count
 * byte), then a PARK record as the ring would carry it: registers, VMAs,
 * len and the stack copy.  Every address lies in one file whose table is
 * those rows; the walk must read only inside the copy (ASan) and end.
 *
 * UST_FUZZ_PARK_MKSEEDS=DIR: write the seeds (walks of 1 to 5 frames
 * through functions with CFA = rsp + 8/16/24, one frame in a file whose
 * table is pending, one copy cut short, one sparse as BPF sends it:
 * tests/unit/record/park_sparse.h) into DIR and exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "fuzz.h"
#include "ustitch/cfi.h"
#include "bpfu_park.h"
#include "park_sparse.h"

static struct ust_cfi_table table;

static int fz_table(void *ctx, uint32_t dev, uint64_t ino, const struct ust_cfi_table **t)
{
	(void)ctx;
	*t = NULL;
	if (ino == 2)
		return UST_BPFU_CFI_PENDING;
	if (ino != 1 || dev != 1)
		return UST_BPFU_CFI_NONE;
	*t = &table;
	return UST_BPFU_CFI_READY;
}

static bool fz_place(void *ctx, uint32_t tgid, uint64_t addr, uint64_t *off, uint64_t *ino,
		     uint32_t *dev)
{
	(void)ctx;
	(void)tgid;
	if (addr & (1ULL << 47))
		return false;	/* half the space maps nothing */
	*off = addr & 0xffff;
	*ino = (addr >> 16) & 1 ? 2 : 1;
	*dev = 1;
	return true;
}

static int cmp_row(const void *a, const void *b)
{
	const struct ust_cfi_row *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* One seed: rows of three functions at 0x100/0x200/0x300 (CFA = rsp + 8,
 * 16, 24), a stack of @depth frames returning into them; @pending: the
 * last return address is in the pending file; @cut: bytes short;
 * @sparse: the copy as a sparse one. */
static void make_seed(const char *dir, int depth, int pending, int cut, int sparse)
{
	struct ust_cfi_row rows[4] = { 0 };
	struct ust_bpfu_rec_park *whole = calloc(1, sizeof(*whole) + 256), *sp_rec = NULL;
	uint8_t *stack = whole ? whole->bytes : NULL;
	struct ust_bpfu_rec_park p = { 0 };
	uint32_t sp = 0, len;
	size_t sparse_size = 0;
	char path[4096];
	uint8_t n = 4;
	FILE *f;
	int i;

	for (i = 0; i < 3; i++) {
		rows[i].off = 0x100u * (unsigned int)(i + 1);
		rows[i].cfa_type = UST_CFI_CFA_RSP;
		rows[i].cfa_off = 8 * (i + 1);
	}
	rows[3].off = 0x400;	/* UST_CFI_CFA_NONE after the last function */
	p.h.kind = UST_BPFU_REC_PARK;
	p.seq = 1;
	p.ip = 0x1000100;
	p.sp = 0x7000;
	if (!whole)
		exit(1);
	p.stack_end = p.sp + 256;
	for (i = 0; i < depth; i++) {
		int fn = i % 3;		/* the frame's function: its CFA is rsp + 8 * (fn + 1) */
		uint64_t ra = 0x1000000 + 0x100u * (unsigned int)((i + 1) % 3 + 1) + 0x10;

		if (pending && i == depth - 1)
			ra |= 1ULL << 16;
		sp += 8u * (unsigned int)(fn + 1);
		if (sp > 256)
			break;
		memcpy(stack + sp - 8, &ra, 8);
	}
	len = sp + 16 > 256 ? 256 : sp + 16;
	p.len = len > (uint32_t)cut ? len - (uint32_t)cut : 0;
	if (sparse) {
		const struct park_layout l = { .start_code = 0x1000000, .end_code = 0x1020000,
					       .brk = 0x2000000, .task_size = 1ULL << 47 };

		memcpy(whole, &p, sizeof(p));
		sp_rec = park_sparse(whole, &l, &sparse_size);
		if (!sp_rec)
			exit(1);
	}
	snprintf(path, sizeof(path), "%s/d%d-p%d-c%d%s", dir, depth, pending, cut, sparse ? "-s" : "");
	f = fopen(path, "wb");
	if (!f)
		exit(1);
	fwrite(&n, 1, 1, f);
	fwrite(rows, sizeof(rows[0]), n, f);
	if (sp_rec) {
		fwrite(sp_rec, 1, sparse_size, f);
	} else {
		fwrite(&p, sizeof(p), 1, f);
		fwrite(stack, 1, p.len, f);
	}
	fclose(f);
	free(sp_rec);
	free(whole);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *mk = getenv("UST_FUZZ_PARK_MKSEEDS");

	(void)argc;
	(void)argv;
	if (mk) {
		for (int d = 1; d <= 5; d++) {
			make_seed(mk, d, 0, 0, 0);
			make_seed(mk, d, 1, 0, 0);
		}
		make_seed(mk, 5, 0, 12, 0);
		make_seed(mk, 5, 0, 0, 1);
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ust_bpfu_park_env env = { .table = fz_table, .place = fz_place };
	struct ust_bpfu_frame frames[UST_BPFU_MAX_FRAMES];
	struct ust_cfi_row rows[8];
	struct ust_bpfu_rec_park *p;
	uint32_t nr, flags;
	size_t n;

	if (size < 1 || size > (1u << 20))
		return 0;
	n = data[0] % 9;
	if (size < 1 + n * sizeof(rows[0]))
		return 0;
	memcpy(rows, data + 1, n * sizeof(rows[0]));
	qsort(rows, n, sizeof(rows[0]), cmp_row);
	table.rows = rows;
	table.nr_rows = (uint32_t)n;
	data += 1 + n * sizeof(rows[0]);
	size -= 1 + n * sizeof(rows[0]);
	/* Its own allocation, as long as the record: ASan sees a read past it. */
	p = malloc(size ? size : 1);
	if (!p)
		abort();
	memcpy(p, data, size);
	if (ust_bpfu_park_fits(p, size)) {
		/* As the recorder keeps it: a sparse copy put back. */
		struct ust_bpfu_rec_park *c = ust_bpfu_park_copy(p);

		for (int give_up = 0; c && give_up < 2; give_up++) {
			nr = c->nr % 4;
			flags = UST_BPFU_F_PARKED;
			memset(frames, 0, sizeof(frames));
			if (ust_bpfu_park_walk(c, &env, give_up, frames, &nr, &flags, NULL) == 0 &&
			    nr > UST_BPFU_MAX_FRAMES)
				abort();
		}
		free(c);
	}
	free(p);
	return 0;
}
