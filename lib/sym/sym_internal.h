/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_sym internals shared by sym*.c.  One struct per concept: an opened
 * ELF image (sym_elf.c), the load segments that map file offsets to
 * addresses (sym_elf.c), the sorted function symbols (sym_symtab.c), the
 * separate debug file (sym_debug.c) and the lazy DWARF index
 * (sym_dwarf.c), and the names demangled (sym_demangle.c).  sym.c ties
 * them into the cached ust_sym_file.
 */
#ifndef USTITCH_SYM_INTERNAL_H
#define USTITCH_SYM_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ustitch/hmap.h"
#include "ustitch/sym.h"

/* GNU build-ids are 20 bytes (sha1); leave room for other hash sizes. */
#define UST_SYM_BUILD_ID_MAX	64

/* --- sym_elf.c ---------------------------------------------------------- */

/* One opened ELF file, mapped read-only, its descriptor already closed. */
struct ust_sym_elf {
	Elf *elf;
	char *path;
	uint64_t size;		/* file size: every offset is checked against it */
	dev_t dev;
	ino_t ino;
};

/* Opens and validates @path; on failure returns -1 with @err filled. */
int ust_sym_elf_open(struct ust_sym_elf *e, const char *path, char *err, size_t errlen);
void ust_sym_elf_close(struct ust_sym_elf *e);

/* Build-id note of an opened ELF: its length, 0 if none. */
size_t ust_sym_elf_build_id(Elf *elf, uint8_t *out, size_t max);

/* The section named @name, or NULL; @shdr filled when found. */
Elf_Scn *ust_sym_elf_section(Elf *elf, const char *name, GElf_Shdr *shdr);

/* True when the section exists with contents in the file (not NOBITS). */
bool ust_sym_elf_has_data(Elf *elf, const char *name);

/* A PT_LOAD segment's file image: [off, off + filesz) <-> [vaddr, ...). */
struct ust_sym_seg {
	uint64_t off;
	uint64_t filesz;
	uint64_t vaddr;
	bool exec;		/* PF_X: preferred when images overlap */
};

/*
 * The PT_LOAD segments of @elf, in file order.  A separate debug file
 * keeps the program headers but zeroes p_filesz and rewrites p_offset;
 * *@guessed tells that the layout had to be reconstructed (see
 * sym_elf.c), which is only exact for the usual linker layouts.
 */
int ust_sym_elf_segments(Elf *elf, struct ust_sym_seg **segs, int *nr, bool *guessed);

/* --- sym_symtab.c ------------------------------------------------------- */

struct ust_sym_ent {
	uint64_t addr;
	uint64_t size;		/* st_size, or up to the next symbol when 0 */
	const char *name;	/* into the mapped string table, or owned */
	uint8_t rank;		/* alias preference, lower is better */
	bool sized;
	bool old_version;	/* was "name@VER": not the default version */
};

struct ust_sym_tab {
	struct ust_sym_ent *ents;	/* by address, best alias first */
	size_t nr;
	uint32_t *prim;			/* first entry of each address */
	size_t nr_prim;
	uint32_t *by_name;		/* lazy, for ust_sym_tab_find_name() */
	char **owned;			/* names cut at their "@VERSION" */
	size_t nr_owned, cap_owned;
	const char *origin;		/* ".symtab" or ".dynsym" */
};

/* Loads the function symbols of section type @type (SHT_SYMTAB/DYNSYM);
 * 0 with an empty table when there are none, -1 on allocation failure. */
int ust_sym_tab_load(struct ust_sym_tab *t, Elf *elf, GElf_Word type);
void ust_sym_tab_free(struct ust_sym_tab *t);
const struct ust_sym_ent *ust_sym_tab_lookup(const struct ust_sym_tab *t, uint64_t addr);
const struct ust_sym_ent *ust_sym_tab_find_name(struct ust_sym_tab *t, const char *name);

/* --- sym_debug.c -------------------------------------------------------- */

/* Opens @path as the debug file of build-id @id: its own build-id must
 * match (and it must not be @main itself).  0 and @out filled, or -1. */
int ust_sym_debug_open_id(const char *path, const uint8_t *id, size_t id_len,
			  const struct ust_sym_elf *main, struct ust_sym_elf *out);
/*
 * Finds the separate debug file of an object: by build-id under each
 * of @roots then /usr/lib/debug, then by @main's .gnu_debuglink (CRC
 * checked).  @main and @path may be NULL when only the build-id is known.
 * Returns 0 and fills @out, or -1.
 */
int ust_sym_debug_find(const char *const *roots, int nr_roots,
		       const struct ust_sym_elf *main, const char *path,
		       const uint8_t *id, size_t id_len, struct ust_sym_elf *out);

/* CRC-32 as .gnu_debuglink uses it (the zlib/IEEE polynomial). */
uint32_t ust_sym_crc32(uint32_t crc, const void *buf, size_t len);

/* --- sym_dwarf.c -------------------------------------------------------- */

struct ust_sym_dwarf;

/* NULL when @elf carries no usable DWARF. */
struct ust_sym_dwarf *ust_sym_dwarf_open(Elf *elf);
void ust_sym_dwarf_close(struct ust_sym_dwarf *d);

/*
 * Frames at @pc, innermost inlined first, the containing subprogram last,
 * at most @max.  Each gets func/src_file/line/inlined (func_off left 0).
 * *@entry receives the subprogram's entry address when one is found.
 * Returns the count, 0 when no unit covers @pc.
 */
int ust_sym_dwarf_frames(struct ust_sym_dwarf *d, uint64_t pc,
			 struct ust_sym_frame *out, int max, uint64_t *entry);

/* --- sym_demangle.c ----------------------------------------------------- */

/* What a file's names became: name address -> demangled copy (0: as is). */
struct ust_sym_dm {
	struct ust_hmap names;
};

void ust_sym_dm_init(struct ust_sym_dm *d);
void ust_sym_dm_fini(struct ust_sym_dm *d);
/* @name demangled, or @name itself when it is not mangled.  @name must
 * live as long as @d (the cache is keyed by its address). */
const char *ust_sym_dm_name(struct ust_sym_dm *d, const char *name);

#endif
