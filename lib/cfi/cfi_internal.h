/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_cfi internals shared by cfi*.c: the FDE list of one CFI section
 * (cfi_fde.c), the mapping of one libdw frame state to a row rule
 * (cfi_rule.c), opening the input as an ELF (cfi_elf.c), error lines.
 */
#ifndef USTITCH_CFI_INTERNAL_H
#define USTITCH_CFI_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustitch/cfi.h"
#include "../sym/sym_internal.h"

/* Writes one line into @err (if any) and returns @ret (a negative errno). */
int ust_cfi_fail(char *err, size_t errsz, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* --- cfi_elf.c ---------------------------------------------------------- */

/* Opens @path, /proc/self/fd/@fd or a memfd copy of an image as ust_sym does. */
int ust_cfi_elf_path(struct ust_sym_elf *e, const char *path, char *err, size_t errsz);
int ust_cfi_elf_fd(struct ust_sym_elf *e, int fd, char *err, size_t errsz);
int ust_cfi_elf_mem(struct ust_sym_elf *e, const void *image, size_t size,
		    char *err, size_t errsz);

/* --- cfi_fde.c ---------------------------------------------------------- */

struct ust_cfi_fde {
	uint64_t start, end;	/* vaddrs, [start, end) */
	uint64_t sec_off;	/* the FDE's offset in its section (messages) */
};

/*
 * Every FDE of @scn (.eh_frame when @eh, else .debug_frame) with its
 * initial location decoded through its CIE's pointer encoding, sorted by
 * start (then end).  FDEs of zero length are left out.  Returns the count
 * or -EBADMSG (message names the section and offset) / -ENOMEM.
 */
int ust_cfi_fde_list(Elf *elf, Elf_Scn *scn, bool eh, struct ust_cfi_fde **out,
		     char *err, size_t errsz);

/* --- cfi_rule.c --------------------------------------------------------- */

/* A row without its offset. */
struct ust_cfi_rule {
	int32_t cfa_off;
	int16_t rbp_off;
	int16_t rbx_off;
	uint8_t cfa_type;
	uint8_t rbp_type;
	uint8_t rbx_type;	/* UST_CFI_RBP_*, for rbx */
	bool overflow;		/* an offset did not fit: marked unsupported */
};

/* The rule of one frame state (@signal: the FDE's CIE has 'S'). */
void ust_cfi_rule_of(Dwarf_Frame *frame, bool signal, struct ust_cfi_rule *r);

static inline bool ust_cfi_rule_eq(const struct ust_cfi_rule *a, const struct ust_cfi_rule *b)
{
	return a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off &&
	       a->rbx_off == b->rbx_off && a->cfa_type == b->cfa_type &&
	       a->rbp_type == b->rbp_type && a->rbx_type == b->rbx_type;
}

/*
 * The row layout the BPF array map (lib/record/bpfu_cfi.c), the disk
 * cache and the walkers share: 16 bytes, no hole the compiler could fill
 * with garbage (pad is written 0).
 */
_Static_assert(sizeof(struct ust_cfi_row) == 16, "struct ust_cfi_row is 16 bytes");
_Static_assert(offsetof(struct ust_cfi_row, rbx_off) == 10 &&
	       offsetof(struct ust_cfi_row, cfa_type) == 12 &&
	       offsetof(struct ust_cfi_row, pad) == 15, "struct ust_cfi_row layout");

/* --- cfi_build.c -------------------------------------------------------- */

/* Builds from an opened ELF; @path (may be NULL) for the debuglink lookup. */
int ust_cfi_build_elf(const struct ust_sym_elf *e, const char *path,
		      const struct ust_cfi_opts *opts, struct ust_cfi_table **out,
		      char *err, size_t errsz);

#endif
