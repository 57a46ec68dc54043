/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Helpers of the ust_cfi tests: an ELF reader independent of the code
 * under test (load segments, sections, entry point), plus the shared
 * helpers of tests/unit/sym (util.h: environment, scratch files, PRNG).
 */
#ifndef UST_TEST_CFI_UTIL_H
#define UST_TEST_CFI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct ct_seg {
	uint64_t vaddr, filesz, off;
	bool exec;
};

struct ct_segs {
	struct ct_seg *s;
	int nr;
};

/* The PT_LOAD segments of @path with a file image. */
int ct_load_segs(const char *path, struct ct_segs *out);
void ct_free_segs(struct ct_segs *s);
/* vaddr -> file offset; -1 when in no segment's file image. */
int ct_seg_off(const struct ct_segs *s, uint64_t vaddr, uint64_t *off);
/* Is @vaddr inside an executable segment's file image? */
bool ct_seg_exec(const struct ct_segs *s, uint64_t vaddr);

/* The section @name: its address and size / its file offset. */
int ct_section(const char *path, const char *name, uint64_t *addr, uint64_t *size);
int ct_section_off(const char *path, const char *name, uint64_t *off);
/* The .symtab symbol @name: its address and size. */
int ct_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size);
/* e_entry. */
uint64_t ct_entry(const char *path);

#endif
