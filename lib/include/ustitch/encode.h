/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_enc: build records of ustitch's own events and give kernel-bits
 * format texts the event ids of the file they go into.
 */
#ifndef USTITCH_ENCODE_H
#define USTITCH_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A ustitch/user_mapping record (layout: kernel-bits/events/ustitch/
 * user_mapping/format) into @buf.  Returns its size, or -1 if @bufsize is
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
