/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_bpfu_raw: frames the BPF walk left as addresses, resolved by the
 * recorder from /proc/TGID/maps while the process lives (bpfu_raw.c).
 * Private to lib/record.
 */
#ifndef UST_BPFU_RAW_H
#define UST_BPFU_RAW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ust_bpfu_raw;

struct ust_bpfu_raw *ust_bpfu_raw_new(void);
void ust_bpfu_raw_free(struct ust_bpfu_raw *r);
/* @tgid ran exec(): the addresses of its old maps mean nothing now. */
void ust_bpfu_raw_exec(struct ust_bpfu_raw *r, pid_t tgid);
/*
 * The @nr frames (file offset, inode, kernel dev_t each) of a stack of
 * @tgid: those the walk left raw (@raw[i] set: its VMA lookup was refused,
 * the offset is the address) that lie in an executable file mapping get
 * that file and their offset in it.  The frames to keep: all, or those
 * before the first raw one that no such mapping holds (an address nothing
 * checked is no caller: the stack ends there).
 */
unsigned int ust_bpfu_raw_resolve(struct ust_bpfu_raw *r, pid_t tgid, const uint32_t *raw,
				  uint64_t *offs, uint64_t *inodes, uint32_t *devs, unsigned int nr);
/* @tgid's maps read now, unless read since its exec: its frames are placed later. */
void ust_bpfu_raw_note(struct ust_bpfu_raw *r, pid_t tgid);
/* @tgid's maps read again now: it mapped a file since (a dlopen). */
void ust_bpfu_raw_reread(struct ust_bpfu_raw *r, pid_t tgid);
/*
 * @addr of @tgid in an executable file mapping: true with its file offset,
 * inode and kernel dev_t (the maps read again once if it is in none).
 */
bool ust_bpfu_raw_place(struct ust_bpfu_raw *r, pid_t tgid, uint64_t addr, uint64_t *off,
			uint64_t *ino, uint32_t *dev);
/*
 * What the BPF side saw @tgid map executable (an exec's code, a library's
 * mmap; @pgoff in pages): known whether or not its maps can be read
 * later, as a short-lived process's cannot.
 */
void ust_bpfu_raw_map(struct ust_bpfu_raw *r, pid_t tgid, uint64_t start, uint64_t end,
		      uint64_t pgoff, uint64_t ino, uint32_t dev);
/* Frames resolved so far. */
uint64_t ust_bpfu_raw_count(const struct ust_bpfu_raw *r);

#endif
