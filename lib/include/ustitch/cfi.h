/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_cfi: per-file unwind tables for the BPF unwinder and the LTTng
 * provider, built from an ELF file's .eh_frame (and .debug_frame where
 * .eh_frame has no FDE) in the row format of bpf/ust_cfi_abi.h.
 *
 * A table is the rows of one file sorted by FILE OFFSET (the FDEs' vaddrs
 * mapped through the PT_LOAD segments).  A row holds until the next row;
 * each run of covered code ends with a UST_CFI_CFA_NONE row, so "the last
 * row whose off <= pc" is always pc's own rule, NONE outside any FDE.
 * Only code inside executable PT_LOAD segments gets rows.
 *
 * Errors: functions return 0 (or a count) on success and a negative errno
 * on failure, with one line in @err (may be NULL/0): -ENOENT, -EACCES (the
 * file), -ENOEXEC (not ELF, truncated or corrupt ELF), -EBADMSG (corrupt
 * .eh_frame/.debug_frame), -ENOMEM, -EINVAL (arguments), -ERANGE (offsets
 * beyond 4 GiB).  A file without any CFI is not an error: its table is
 * empty (frame pointers everywhere).
 */
#ifndef USTITCH_CFI_H
#define USTITCH_CFI_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ust_cfi_abi.h"

#define UST_CFI_BUILD_ID_MAX	64
#define UST_CFI_NR_CFA_TYPES	9	/* UST_CFI_CFA_NONE .. RBX */
#define UST_CFI_NR_RBP_TYPES	4	/* UST_CFI_RBP_*: rbp_type and rbx_type */

struct ust_cfi_opts {
	/* Extra roots for separate debug files, tried before /usr/lib/debug
	 * (the same lookup as ust_sym: build-id, then .gnu_debuglink). */
	const char *const *debug_dirs;
	int nr_debug_dirs;
	bool no_debug_frame;	/* .eh_frame only: no .debug_frame, no debug file */
	/*
	 * Build the table a second time with libdw's CFI interpreter (the
	 * reference, row by row and far slower) and fail with -EPROTO on
	 * the first row that differs: the tests' check of the builder's own.
	 */
	bool check;
};

struct ust_cfi_stats {
	uint32_t fdes;			/* FDEs that gave rows (both sections) */
	uint32_t fdes_debug_frame;	/* of which from .debug_frame */
	uint32_t fdes_outside;		/* FDEs outside executable segments (ignored) */
	uint32_t fdes_overlapping;	/* FDEs starting inside an earlier one */
	uint32_t rows;			/* == nr_rows */
	uint32_t rows_cfa[UST_CFI_NR_CFA_TYPES];	/* rows per cfa_type */
	uint32_t rows_rbp[UST_CFI_NR_RBP_TYPES];	/* rows per rbp_type */
	uint32_t rows_rbx[UST_CFI_NR_RBP_TYPES];	/* rows per rbx_type */
	uint32_t rows_overflow;		/* offsets that did not fit a row field */
	uint64_t text_bytes;		/* file bytes of the executable PT_LOADs */
	uint64_t covered_bytes;		/* bytes under a row other than NONE */
	uint64_t bytes_cfa[UST_CFI_NR_CFA_TYPES];	/* bytes per cfa_type */
	double build_ms;		/* wall time of the build (0 when loaded) */
};

struct ust_cfi_table {
	struct ust_cfi_row *rows;	/* sorted by off */
	uint32_t nr_rows;
	uint8_t build_id[UST_CFI_BUILD_ID_MAX];
	size_t build_id_len;		/* 0: the file has no GNU build-id */
	bool debug_file;		/* a separate debug file lent .debug_frame */
	struct ust_cfi_stats stats;
};

/* --- building (cfi_build.c) --------------------------------------------- */

/* The file at @path.  @opts may be NULL.  *@out is freed with ust_cfi_table_free. */
int ust_cfi_build_path(const char *path, const struct ust_cfi_opts *opts,
		       struct ust_cfi_table **out, char *err, size_t errsz);
/* An open file (not consumed; its position is not used). */
int ust_cfi_build_fd(int fd, const struct ust_cfi_opts *opts,
		     struct ust_cfi_table **out, char *err, size_t errsz);
/*
 * An ELF image in memory laid out as the file is (the vDSO: its whole
 * image is mapped).  Offsets are file offsets of that image, i.e. what a
 * VMA-relative offset is.  The image is copied; no debug file is looked
 * up for it.
 */
int ust_cfi_build_mem(const void *image, size_t size, const struct ust_cfi_opts *opts,
		      struct ust_cfi_table **out, char *err, size_t errsz);

void ust_cfi_table_free(struct ust_cfi_table *t);

/* --- reading a table (cfi_table.c) -------------------------------------- */

/* The row in force at file offset @off (the last with row->off <= @off), NULL before the first. */
const struct ust_cfi_row *ust_cfi_lookup(const struct ust_cfi_table *t, uint64_t off);

/* The caller's registers at this call, for a walk of its own stack:
 * regs[0] the return address (ip after the call, not exact), regs[1] rsp
 * after the return, regs[2] rbp, regs[3] rbx.  x86-64 only. */
void ust_cfi_regs_here(uintptr_t regs[4]);
/* "none", "rsp", "rbp", "plt", "deref-rbp", "signal", "end", "unsupported", "rbx"; "?" otherwise. */
const char *ust_cfi_cfa_name(unsigned int cfa_type);
/* "same", "cfa", "deref-rbp", "unsupported" (rbp_type and rbx_type). */
const char *ust_cfi_rbp_name(unsigned int rbp_type);
/*
 * One row as text: "0x1040 cfa=rsp+8 rbp=same", then " rbx=RULE" unless
 * rbx keeps its value ("0x12294 cfa=rbx+32 rbp=same rbx=c-32"); rows that
 * end or leave the walk print their CFA only.  Returns snprintf's count.
 */
int ust_cfi_row_format(const struct ust_cfi_row *r, char *buf, size_t len);
/* The build-id as lowercase hex into @buf (>= 2 * UST_CFI_BUILD_ID_MAX + 1). */
void ust_cfi_build_id_hex(const struct ust_cfi_table *t, char *buf, size_t len);

/* --- disk cache (cfi_disk.c) -------------------------------------------- */

/*
 * The cache directory: $USTITCH_CACHE_DIR (set but empty: disabled), else
 * $XDG_CACHE_HOME/ustitch/cfi, else ~/.cache/ustitch/cfi.  Returns 0, or
 * -ENOENT when disabled / no home is known, -ENAMETOOLONG.
 */
int ust_cfi_disk_dir(char *buf, size_t len);
/*
 * One file per build-id, DIR/<hex>.cfi: a versioned header (with a CRC of
 * the rows), then the rows.  Save writes a temporary file and renames it
 * over the old one; the directory is created.  -EINVAL for a table
 * without build-id.
 */
int ust_cfi_disk_save(const char *dir, const struct ust_cfi_table *t,
		      char *err, size_t errsz);
/* -ENOENT when absent, -EBADMSG when corrupt, of another version or another build-id. */
int ust_cfi_disk_load(const char *dir, const uint8_t *build_id, size_t build_id_len,
		      struct ust_cfi_table **out, char *err, size_t errsz);

/* --- the registry (cfi_cache.c) ----------------------------------------- */

/*
 * Tables by build-id: the same library seen through two paths or inodes
 * is built once, and loaded from the disk cache when it was built before.
 * Files without build-id are built on every get and owned by the cache
 * too.  Thread-safe.  Returned tables belong to the cache.
 */
struct ust_cfi_cache;

struct ust_cfi_cache_stats {
	uint32_t hits;		/* found in memory */
	uint32_t disk_loads;	/* loaded from the disk cache */
	uint32_t builds;	/* built from the ELF file */
	uint32_t disk_rejects;	/* disk cache files ignored (corrupt, other version) */
	uint32_t disk_saves;
};

/* @opts may be NULL.  @disk_dir: NULL = ust_cfi_disk_dir(), "" = no disk cache. */
struct ust_cfi_cache *ust_cfi_cache_new(const struct ust_cfi_opts *opts, const char *disk_dir);
void ust_cfi_cache_free(struct ust_cfi_cache *c);
int ust_cfi_cache_get_path(struct ust_cfi_cache *c, const char *path,
			   const struct ust_cfi_table **out, char *err, size_t errsz);
int ust_cfi_cache_get_mem(struct ust_cfi_cache *c, const void *image, size_t size,
			  const struct ust_cfi_table **out, char *err, size_t errsz);
void ust_cfi_cache_stats(struct ust_cfi_cache *c, struct ust_cfi_cache_stats *out);

#endif
