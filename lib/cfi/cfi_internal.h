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

/* A CIE: what its FDEs' programs start from. */
struct ust_cfi_cie {
	uint64_t off;			/* in its section */
	const uint8_t *insns, *insns_end;	/* its initial instructions */
	uint64_t code_align;
	int64_t data_align;
	uint8_t enc;			/* FDE pointer encoding (DW_EH_PE_*) */
	bool ok;			/* an augmentation this reader knows */
	bool zaug;			/* 'z': FDEs carry augmentation data */
	bool signal;			/* 'S': its FDEs are signal frames */
};

struct ust_cfi_fde {
	uint64_t start, end;		/* vaddrs, [start, end) */
	uint64_t sec_off;		/* the FDE's offset in its section (messages) */
	const uint8_t *insns, *insns_end;	/* its instructions */
	const struct ust_cfi_cie *cie;
};

/* The FDEs of one section, sorted by start (then end), and their CIEs. */
struct ust_cfi_fdes {
	struct ust_cfi_fde *fdes;
	int nr;
	struct ust_cfi_cie *cies;
	uint64_t sec_vaddr;		/* the section's address (pcrel pointers) */
	const uint8_t *sec_base;	/* and its bytes */
	bool eh;			/* .eh_frame, else .debug_frame */
	const char *name;		/* ".eh_frame" or ".debug_frame" (messages) */
};

/*
 * Every FDE of @scn (.eh_frame when @eh, else .debug_frame) with its
 * initial location decoded through its CIE's pointer encoding.  FDEs of
 * zero length are left out.  Returns the count or -EBADMSG (message names
 * the section and offset) / -ENOMEM; free with ust_cfi_fdes_free.
 */
int ust_cfi_fde_list(Elf *elf, Elf_Scn *scn, bool eh, struct ust_cfi_fdes *out,
		     char *err, size_t errsz);
void ust_cfi_fdes_free(struct ust_cfi_fdes *l);

/* LEB128 and DW_EH_PE_* fields: 0, or -1 past @end or for an unknown encoding. */
int ust_cfi_read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *v);
int ust_cfi_read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *v);
/* One encoded field; @field_vaddr is its own address (pcrel), applied when @apply. */
int ust_cfi_read_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc,
			 uint64_t field_vaddr, bool apply, uint64_t *v);

/* --- cfi_exec.c --------------------------------------------------------- */

struct ust_cfi_rule;

/* One row of an FDE's program: [lo, hi) under rule @r. */
typedef int (*ust_cfi_row_fn)(void *ctx, uint64_t lo, uint64_t hi, const struct ust_cfi_rule *r);

/*
 * Runs @f's program (its CIE's initial instructions, then its own) once,
 * calling @fn for each row's part inside [@lo, @hi).  0, @fn's non-zero
 * return, or -EBADMSG for an instruction it cannot run (message in @err).
 */
int ust_cfi_exec(const struct ust_cfi_fdes *l, const struct ust_cfi_fde *f, uint64_t lo,
		 uint64_t hi, ust_cfi_row_fn fn, void *ctx, char *err, size_t errsz);

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

/*
 * After the CFA's rule: true when the row is complete without the rbp
 * and rbx rules (a CFA the walkers cannot follow: offsets cleared; the
 * PLT, which touches neither register).  Both rule mappings end so.
 */
static inline bool ust_cfi_rule_cfa_only(struct ust_cfi_rule *r)
{
	if (r->cfa_type == UST_CFI_CFA_UNSUPPORTED) {
		r->cfa_off = 0;
		r->rbp_off = 0;
		return true;
	}
	if (r->cfa_type == UST_CFI_CFA_PLT) {
		/* rbp_off holds K. */
		r->rbp_type = UST_CFI_RBP_SAME;
		r->rbx_type = UST_CFI_RBP_SAME;
		return true;
	}
	return false;
}

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
