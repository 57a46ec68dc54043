/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_enc: build records of ustitch's own events and give kernel-bits
 * format texts the event ids of the file they go into.
 */
#ifndef USTITCH_ENCODE_H
#define USTITCH_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* The 8-byte common header of every ftrace record: type, flags 0,
 * preempt count 0, pid. */
void ust_enc_common(void *buf, uint16_t type, int pid);

/* An ftrace/user_unwind_cookie record (16 bytes); returns its size or -ENOSPC. */
int ust_enc_unwind_cookie(void *buf, size_t bufsize, uint16_t type, int pid, uint64_t cookie);

/* Where the arrays of a user_unwind_stack record start, for the caller to
 * fill: offs and inodes hold 8-byte values, devs 4-byte ones, all only
 * 4-byte aligned (copy into them, never store through a cast). */
struct ust_enc_stack_arrays {
	uint8_t *offs, *inodes, *devs;
};

/*
 * The fixed part of an ftrace/user_unwind_stack record for @nr frames, in
 * the layout of trace_user_unwind_callback() (seed 004, patch 9): header,
 * cookie, the three __data_loc words.  Returns the record's total size and
 * sets @a, or -ENOSPC when @bufsize is too small.
 */
int ust_enc_unwind_stack(void *buf, size_t bufsize, uint16_t type, int pid, uint64_t cookie,
			 unsigned int nr, struct ust_enc_stack_arrays *a);

/*
 * A ustitch/user_mapping record (layout: kernel-bits/events/ustitch/
 * user_mapping/format) into @buf.  Returns its size, or -ENOSPC if @bufsize is
 * too small or the path longer than a record may be.
 */
int ust_enc_mapping(void *buf, size_t bufsize, uint16_t type, int pid,
		    uint32_t kdev, uint64_t ino, const uint8_t *build_id,
		    size_t build_id_len, const char *path);

/* A ustitch/stack_flags record (24 bytes) into @buf; returns its size. */
int ust_enc_stack_flags(void *buf, size_t bufsize, uint16_t type, int pid,
			uint64_t cookie, uint32_t flags);

/* The kernel-bits format @key with its "ID:" line set to @id (malloc'ed). */
char *ust_enc_format_with_id(const char *key, int id);

#endif
