/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf_maps: which file each user address of a process belonged to,
 * replayed from PERF_RECORD_MMAP2 (and FORK, COMM with exec) in time order,
 * so that a perf user callchain (addresses) becomes the frames of a
 * user_unwind_stack record (file offset, inode, device), as the kernel's
 * deferred unwinder makes them (seed 004, patch 9).
 */
#ifndef USTITCH_PERF_MAPS_H
#define USTITCH_PERF_MAPS_H

#include <stdint.h>

#include "ustitch/decode.h"
#include "ustitch/perf.h"

struct ust_perf_maps;

struct ust_perf_maps *ust_perf_maps_new(void);
void ust_perf_maps_free(struct ust_perf_maps *m);

/* One mapping of process @pid; replaces what it overlaps, as mmap() does.
 * 0 or -ENOMEM. */
int ust_perf_maps_add(struct ust_perf_maps *m, uint32_t pid, uint64_t start, uint64_t len,
		      uint64_t pgoff, uint32_t kdev, uint64_t ino);
/* MMAP2 adds, FORK of a new process copies the parent's, COMM with exec
 * forgets the old image; other records are ignored.  0 or -ENOMEM. */
int ust_perf_maps_apply(struct ust_perf_maps *m, const struct ust_perf_event *ev);
/* @pid's mappings are no more (its exec): none until added or read again. */
void ust_perf_maps_forget(struct ust_perf_maps *m, uint32_t pid);
/* The executable file mappings of a running process, from /proc/PID/maps
 * (processes that were running before the events were enabled, and any
 * whose MMAP2 records were lost), read at @now (the records' clock): an
 * exec or fork replayed from before @now leaves them be.  0, or -errno of
 * opening it (-ENOENT: no such process), or -ENOMEM. */
int ust_perf_maps_proc(struct ust_perf_maps *m, uint32_t pid, uint64_t now);

/* @addr of @pid as a frame: file offset, inode and kernel dev_t; the
 * address itself with ino 0 when no file mapping holds it.  Returns
 * whether a file mapping was found. */
bool ust_perf_maps_resolve(const struct ust_perf_maps *m, uint32_t pid, uint64_t addr,
			   struct ust_dec_frame *f);

#endif
