// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_enc.  The recorder writes ftrace events that this kernel does not
 * have (the series' user_unwind_* ones, and ustitch's user_mapping), so it
 * must give them ids no event of this kernel uses: ids are per kernel build
 * (user_unwind_stack would be 15, which is bputs on this machine's 6.18).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/abi.h"
#include "ustitch/encode.h"
#include "ustitch/kbits.h"

#define MAP_INO_OFF	8
#define MAP_DEV_OFF	16
#define MAP_BID_SIZE_OFF 20
#define MAP_BID_OFF	24
#define MAP_PATH_LOC_OFF 44
#define MAP_FIXED_SIZE	48

void ust_enc_common(void *buf, uint16_t type, int pid)
{
	uint8_t *b = buf;
	int32_t p32 = pid;

	memcpy(b, &type, 2);
	b[2] = 0;
	b[3] = 0;
	memcpy(b + 4, &p32, 4);
}

int ust_enc_unwind_cookie(void *buf, size_t bufsize, uint16_t type, int pid, uint64_t cookie)
{
	uint8_t *b = buf;

	if (bufsize < UST_ABI_COOKIE_OFF + 8)
		return -ENOSPC;
	ust_enc_common(b, type, pid);
	memcpy(b + UST_ABI_COOKIE_OFF, &cookie, 8);
	return UST_ABI_COOKIE_OFF + 8;
}

static void put_loc(uint8_t *b, size_t at, uint32_t off, uint32_t len)
{
	uint32_t loc = UST_ABI_DATA_LOC(off, len);

	memcpy(b + at, &loc, 4);
}

int ust_enc_unwind_stack(void *buf, size_t bufsize, uint16_t type, int pid, uint64_t cookie,
			 unsigned int nr, struct ust_enc_stack_arrays *a)
{
	size_t total = UST_ABI_STACK_HDR_SIZE + (size_t)nr * (8 + 8 + 4);
	uint32_t off = UST_ABI_STACK_HDR_SIZE;
	uint8_t *b = buf;

	/* A __data_loc holds 16-bit offsets and lengths. */
	if (total > bufsize || total > 0xffff)
		return -ENOSPC;
	memset(b, 0, UST_ABI_STACK_HDR_SIZE);	/* with the 4 bytes of padding */
	ust_enc_common(b, type, pid);
	memcpy(b + UST_ABI_COOKIE_OFF, &cookie, 8);
	put_loc(b, UST_ABI_STACK_LOC_OFF, off, nr * 8);
	a->offs = b + off;
	off += nr * 8;
	put_loc(b, UST_ABI_INODES_LOC_OFF, off, nr * 8);
	a->inodes = b + off;
	off += nr * 8;
	put_loc(b, UST_ABI_DEV_LOC_OFF, off, nr * 4);
	a->devs = b + off;
	return (int)total;
}

int ust_enc_mapping(void *buf, size_t bufsize, uint16_t type, int pid,
		    uint32_t kdev, uint64_t ino, const uint8_t *build_id,
		    size_t build_id_len, const char *path)
{
	size_t plen = strlen(path) + 1, total = MAP_FIXED_SIZE + plen;
	uint8_t *r = buf;
	uint32_t v32;

	if (build_id_len > UST_ABI_BUILD_ID_MAX)
		build_id_len = 0;
	if (total > bufsize || plen > 0xffff)
		return -ENOSPC;
	memset(r, 0, MAP_FIXED_SIZE);
	ust_enc_common(r, type, pid);
	memcpy(r + MAP_INO_OFF, &ino, 8);
	memcpy(r + MAP_DEV_OFF, &kdev, 4);
	v32 = (uint32_t)build_id_len;
	memcpy(r + MAP_BID_SIZE_OFF, &v32, 4);
	if (build_id_len)
		memcpy(r + MAP_BID_OFF, build_id, build_id_len);
	v32 = UST_ABI_DATA_LOC(MAP_FIXED_SIZE, plen);
	memcpy(r + MAP_PATH_LOC_OFF, &v32, 4);
	memcpy(r + MAP_FIXED_SIZE, path, plen);
	return (int)total;
}

int ust_enc_stack_flags(void *buf, size_t bufsize, uint16_t type, int pid,
			uint64_t cookie, uint32_t flags)
{
	uint8_t *r = buf;

	if (bufsize < 24)
		return -ENOSPC;
	memset(r, 0, 24);	/* 20 bytes of fields, padded as the kernel pads */
	ust_enc_common(r, type, pid);
	memcpy(r + 8, &cookie, 8);
	memcpy(r + 16, &flags, 4);
	return 24;
}

char *ust_enc_format_with_id(const char *key, int id)
{
	const char *text = ust_kbits_get(key), *idl, *eol;
	size_t len;
	char *out;

	if (!text || !(idl = strstr(text, "\nID: ")) || !(eol = strchr(idl + 1, '\n')))
		return NULL;
	len = strlen(text) + 32;
	out = malloc(len);
	if (!out)
		return NULL;
	snprintf(out, len, "%.*s\nID: %d%s", (int)(idl - text), text, id, eol);
	return out;
}
