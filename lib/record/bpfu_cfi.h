/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The unwind tables of the BPF walk (bpf/bpfu_walk.bpf.h), loaded by
 * user space: lib/record/bpfu.c owns one ust_bpfu_cfi and feeds it the
 * walk's NEED_CFI records and the recorder's preloads.
 */
#ifndef USTITCH_RECORD_BPFU_CFI_H
#define USTITCH_RECORD_BPFU_CFI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include "ust_bpfu_abi.h"

struct ust_bpfu_cfi;
struct ust_bpfu_cfi_stats;

/*
 * Over the maps ust_bpfu_cfi_rows (an mmap()able array of @cap rows) and
 * ust_bpfu_cfi_files.  NULL with @err set on failure.
 */
struct ust_bpfu_cfi *ust_bpfu_cfi_new(int rows_fd, int files_fd, uint32_t cap,
				      char *err, size_t errsz);
void ust_bpfu_cfi_free(struct ust_bpfu_cfi *c);

/*
 * Tables are loaded by worker threads: the calls below that add one only
 * open the file and queue it; ust_bpfu_cfi_wait() waits for them.
 */
/* A file the walk met without a table (or mapped executable): load it, or mark it NONE. */
void ust_bpfu_cfi_need(struct ust_bpfu_cfi *c, const struct ust_bpfu_rec_need *n);
/* A followed process exec()ed @path: it and the libraries ld.so will map. */
void ust_bpfu_cfi_exec(struct ust_bpfu_cfi *c, const char *path);
/* The table of the file at @path, keyed by its (dev, inode).  0 or -errno. */
int ust_bpfu_cfi_add_path(struct ust_bpfu_cfi *c, const char *path);
/* Every executable file mapping of a live process (/proc/PID/maps). */
int ust_bpfu_cfi_add_pid(struct ust_bpfu_cfi *c, pid_t pid);
/* A program and the libraries the dynamic loader will map for it. */
int ust_bpfu_cfi_add_program(struct ust_bpfu_cfi *c, const char *path);
/* Until every table queued is placed, at most @timeout_ms (negative: no limit).  true: all were. */
bool ust_bpfu_cfi_wait(struct ust_bpfu_cfi *c, int timeout_ms);
/* Tables queued or loading. */
unsigned int ust_bpfu_cfi_busy(struct ust_bpfu_cfi *c);
/* The vDSO of this kernel (read from our own process): once, at start, placed before it returns. */
int ust_bpfu_cfi_add_vdso(struct ust_bpfu_cfi *c);

struct ust_cfi_table;
/*
 * The table of the file (@dev, @ino) (the vDSO: UST_BPFU_CFI_VDSO_INO, 0)
 * for a walk finished in user space: UST_BPFU_CFI_READY with *@t (also a
 * table the map had no room for), _NONE (no table can be had), _PENDING
 * (asked for, not built yet), or -ENOENT: nobody asked for it.
 */
int ust_bpfu_cfi_table_of(struct ust_bpfu_cfi *c, uint32_t dev, uint64_t ino,
			  const struct ust_cfi_table **t);

void ust_bpfu_cfi_get_stats(struct ust_bpfu_cfi *c, struct ust_bpfu_cfi_stats *st);

#endif
