/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The tests' sparse PARK records (UST_BPFU_PARK_SPARSE, bpf/ust_bpfu_abi.h),
 * made from whole ones as bpf/bpfu_walk.bpf.h's ust_bpfu_park_sparse() makes
 * them in the kernel: the unit test of lib/record/bpfu_park.c and the fuzzer's
 * seeds.
 */
#ifndef UST_TEST_PARK_SPARSE_H
#define UST_TEST_PARK_SPARSE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ust_bpfu_abi.h"

/* The address space UST_BPFU_PARK_WORD_KEEP() judges a word by. */
struct park_layout {
	uint64_t start_code, end_code, brk, task_size;
};

/* Whole PARK record @p made sparse under @l: free() it; *@size its bytes. */
static inline struct ust_bpfu_rec_park *park_sparse(const struct ust_bpfu_rec_park *p,
						    const struct park_layout *l, size_t *size)
{
	size_t words = p->len / 8, nb = UST_BPFU_PARK_MAP_BYTES((size_t)p->len), i, k = 0;
	struct ust_bpfu_rec_park *s = calloc(1, sizeof(*p) + words * 8 + 2 * nb);
	uint8_t *kept = calloc(1, nb + 1), *junk = calloc(1, nb + 1);
	uint64_t v;

	if (!s || !kept || !junk) {
		free(s);
		s = NULL;
		goto out;
	}
	memcpy(s, p, sizeof(*p));
	for (i = 0; i < words; i++) {
		memcpy(&v, p->bytes + 8 * i, sizeof(v));
		if (UST_BPFU_PARK_WORD_KEEP(v, l->start_code, l->end_code, l->brk, l->task_size)) {
			memcpy(s->bytes + 8 * k++, &v, sizeof(v));
			kept[i / 8] |= (uint8_t)(1U << (i % 8));
		} else if (v) {
			junk[i / 8] |= (uint8_t)(1U << (i % 8));
		}
	}
	memcpy(s->bytes + 8 * k, kept, nb);
	memcpy(s->bytes + 8 * k + nb, junk, nb);
	s->regs |= UST_BPFU_PARK_SPARSE;
	s->len = (uint32_t)(words * 8);
	s->kept = (uint32_t)k;
	*size = sizeof(*p) + 8 * k + 2 * nb;
out:
	free(kept);
	free(junk);
	return s;
}

#endif
