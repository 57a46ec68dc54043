// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_dec: decoding of the deferred-unwind records.
 *
 * Field offsets always come from the file's own format texts (through
 * libtraceevent), never from compiled-in constants, so both layouts of the
 * series and any future reordering decode alike.  Every __data_loc word is
 * checked before a byte behind it is read: these records come from files
 * that may be truncated or forged, and the host tool must not crash.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "ustitch/decode.h"

#define DEV_ELEM_SIZE	4	/* dev[] is unsigned int[] */

static struct tep_format_field *field_of(struct tep_event *ev, const char *name)
{
	return ev ? tep_find_field(ev, name) : NULL;
}

static bool is_data_loc(const struct tep_format_field *f)
{
	return f && (f->flags & TEP_FIELD_IS_DYNAMIC) && f->size == 4;
}

int ust_dec_layout_init(struct ust_dec_layout *l, struct tep_handle *tep,
			char *err, size_t errlen)
{
	struct tep_event *st, *ck, *mp, *sf;
	int hp;

	memset(l, 0, sizeof(*l));
	l->tep = tep;
	l->stack_id = l->cookie_id = l->mapping_id = l->flags_id = -1;
	if (err && errlen)
		err[0] = '\0';

	/*
	 * The kernel's long size is the size of the header page's commit
	 * field (a local_t): the file's own long-size byte describes the
	 * recording tool, and libtraceevent reports 0 as the element size of
	 * unsigned long[] dynamic arrays.
	 */
	hp = tep_get_header_page_size(tep);
	l->long_size = (hp == 4 || hp == 8) ? hp : tep_get_long_size(tep);
	if (l->long_size != 4 && l->long_size != 8)
		l->long_size = 8;

	st = tep_find_event_by_name(tep, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_STACK);
	ck = tep_find_event_by_name(tep, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_COOKIE);
	mp = tep_find_event_by_name(tep, UST_ABI_SYSTEM_USTITCH, UST_ABI_EV_USER_MAPPING);
	sf = tep_find_event_by_name(tep, UST_ABI_SYSTEM_USTITCH, UST_ABI_EV_STACK_FLAGS);
	if (sf) {
		l->sf_cookie = field_of(sf, "cookie");
		l->sf_flags = field_of(sf, "flags");
		if (l->sf_cookie && l->sf_cookie->size == 8 && l->sf_flags && l->sf_flags->size == 4)
			l->flags_id = sf->id;
	}

	if (st) {
		l->st_cookie = field_of(st, "cookie");
		l->st_stack = field_of(st, "stack");
		l->st_inodes = field_of(st, "inodes");
		l->st_dev = field_of(st, "dev");
		if (!l->st_cookie || l->st_cookie->size != 8 || !is_data_loc(l->st_stack)) {
			if (err)
				snprintf(err, errlen, "format of %s/%s has no 8-byte cookie or no __data_loc stack field",
					 UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_STACK);
		} else {
			l->stack_id = st->id;
			/* Either both file arrays or neither: patch 9 added them together. */
			l->has_files = is_data_loc(l->st_inodes) && is_data_loc(l->st_dev);
		}
	}
	if (ck) {
		l->ck_cookie = field_of(ck, "cookie");
		if (l->ck_cookie && l->ck_cookie->size == 8)
			l->cookie_id = ck->id;
		else if (err)
			snprintf(err, errlen, "format of %s/%s has no 8-byte cookie field",
				 UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_COOKIE);
	}
	if (mp) {
		l->mp_ino = field_of(mp, "ino");
		l->mp_dev = field_of(mp, "dev");
		l->mp_bid_size = field_of(mp, "build_id_size");
		l->mp_bid = field_of(mp, "build_id");
		l->mp_path = field_of(mp, "path");
		if (l->mp_ino && l->mp_dev && l->mp_bid_size && l->mp_bid &&
		    is_data_loc(l->mp_path))
			l->mapping_id = mp->id;
	}
	return (l->stack_id >= 0 || l->cookie_id >= 0) ? 0 : -ENOENT;
}

static uint64_t rd(const struct ust_dec_layout *l, const void *p, int size)
{
	return tep_read_number(l->tep, p, size);
}

static int fixed_ok(const struct tep_format_field *f, int size)
{
	return f->offset >= 0 && f->offset + f->size <= size;
}

/* Check one __data_loc array; returns the element count or -1 with @what. */
static int data_loc(const struct ust_dec_layout *l, const uint8_t *data, int size,
		    const struct tep_format_field *f, int elem, int min_off,
		    const uint8_t **arr, char *what, size_t whatlen)
{
	uint32_t v, off, len;

	if (!fixed_ok(f, size)) {
		snprintf(what, whatlen, "record of %d bytes too short for the %s field", size, f->name);
		return -1;
	}
	v = (uint32_t)rd(l, data + f->offset, 4);
	off = UST_ABI_DATA_LOC_OFF(v);
	len = UST_ABI_DATA_LOC_LEN(v);
	if (off < (uint32_t)min_off && len) {
		snprintf(what, whatlen, "%s array at offset %u overlaps the fixed fields (end at %d)",
			 f->name, off, min_off);
		return -1;
	}
	if (off + len > (uint32_t)size) {
		snprintf(what, whatlen, "%s array ends at %u, past the %d-byte record",
			 f->name, off + len, size);
		return -1;
	}
	if (len % elem) {
		snprintf(what, whatlen, "%s array length %u is not a multiple of %d",
			 f->name, len, elem);
		return -1;
	}
	*arr = data + off;
	return (int)(len / elem);
}

int ust_dec_stack(const struct ust_dec_layout *l, const void *data, int size,
		  struct ust_dec_stack *out, char *what, size_t whatlen)
{
	const uint8_t *d = data;
	int min_off, n, ni, nd;

	memset(out, 0, sizeof(*out));
	if (l->stack_id < 0 || size < 8) {
		snprintf(what, whatlen, "record of %d bytes too short", size);
		return -EINVAL;
	}
	if (!fixed_ok(l->st_cookie, size)) {
		snprintf(what, whatlen, "record of %d bytes too short for the cookie", size);
		return -EINVAL;
	}
	out->cookie = rd(l, d + l->st_cookie->offset, 8);
	out->pid = ust_dec_pid(l, data, size);
	out->long_size = l->long_size;

	min_off = l->st_stack->offset + 4;
	if (l->has_files) {
		if (l->st_inodes->offset + 4 > min_off)
			min_off = l->st_inodes->offset + 4;
		if (l->st_dev->offset + 4 > min_off)
			min_off = l->st_dev->offset + 4;
	}
	n = data_loc(l, d, size, l->st_stack, l->long_size, min_off, &out->stack, what, whatlen);
	if (n < 0)
		return -EINVAL;
	out->nr = (unsigned int)n;
	if (!l->has_files)
		return 0;

	ni = data_loc(l, d, size, l->st_inodes, l->long_size, min_off, &out->inodes, what, whatlen);
	if (ni < 0)
		return -EINVAL;
	nd = data_loc(l, d, size, l->st_dev, DEV_ELEM_SIZE, min_off, &out->dev, what, whatlen);
	if (nd < 0)
		return -EINVAL;
	if (ni != n || nd != n) {
		snprintf(what, whatlen, "arrays differ in length (stack %d, inodes %d, dev %d entries)",
			 n, ni, nd);
		return -EINVAL;
	}
	return 0;
}

void ust_dec_frame_at(const struct ust_dec_stack *s, unsigned int i,
		      struct ust_dec_frame *f)
{
	uint64_t v = 0;
	uint32_t dv = 0;

	/* Records are only 4-byte aligned: copy, never dereference. */
	memset(f, 0, sizeof(*f));
	if (s->long_size == 8) {
		memcpy(&v, s->stack + (size_t)i * 8, 8);
	} else {
		memcpy(&dv, s->stack + (size_t)i * 4, 4);
		v = dv;
	}
	f->off = v;
	if (!s->inodes)
		return;
	if (s->long_size == 8) {
		memcpy(&v, s->inodes + (size_t)i * 8, 8);
	} else {
		memcpy(&dv, s->inodes + (size_t)i * 4, 4);
		v = dv;
	}
	f->ino = v;
	memcpy(&dv, s->dev + (size_t)i * 4, 4);
	f->kdev = dv;
}

int ust_dec_cookie(const struct ust_dec_layout *l, const void *data, int size,
		   uint64_t *cookie, char *what, size_t whatlen)
{
	if (l->cookie_id < 0 || !fixed_ok(l->ck_cookie, size)) {
		snprintf(what, whatlen, "record of %d bytes too short for the cookie", size);
		return -EINVAL;
	}
	*cookie = rd(l, (const uint8_t *)data + l->ck_cookie->offset, 8);
	return 0;
}

int ust_dec_mapping(const struct ust_dec_layout *l, const void *data, int size,
		    struct ust_dec_mapping *out, char *what, size_t whatlen)
{
	const uint8_t *d = data, *path;
	uint64_t bsz;
	int n;

	memset(out, 0, sizeof(*out));
	if (l->mapping_id < 0 || !fixed_ok(l->mp_ino, size) || !fixed_ok(l->mp_dev, size) ||
	    !fixed_ok(l->mp_bid_size, size) || !fixed_ok(l->mp_bid, size)) {
		snprintf(what, whatlen, "record of %d bytes too short", size);
		return -EINVAL;
	}
	out->ino = rd(l, d + l->mp_ino->offset, l->mp_ino->size);
	out->kdev = (uint32_t)rd(l, d + l->mp_dev->offset, l->mp_dev->size);
	bsz = rd(l, d + l->mp_bid_size->offset, l->mp_bid_size->size);
	if (bsz > (uint64_t)l->mp_bid->size) {
		snprintf(what, whatlen, "build-id size %llu larger than its %d-byte field",
			 (unsigned long long)bsz, l->mp_bid->size);
		return -EINVAL;
	}
	out->build_id = bsz ? d + l->mp_bid->offset : NULL;
	out->build_id_len = (size_t)bsz;
	n = data_loc(l, d, size, l->mp_path, 1, l->mp_path->offset + 4, &path, what, whatlen);
	if (n < 0)
		return -EINVAL;
	if (n == 0 || (size_t)n >= sizeof(out->path)) {
		snprintf(what, whatlen, "path of %d bytes", n);
		return -EINVAL;
	}
	memcpy(out->path, path, (size_t)n);
	out->path[n] = '\0';	/* the kernel's strings end in NUL; do not trust it */
	return 0;
}

int ust_dec_stack_flags(const struct ust_dec_layout *l, const void *data, int size,
			uint64_t *cookie, uint32_t *flags)
{
	const uint8_t *d = data;

	if (l->flags_id < 0 || !fixed_ok(l->sf_cookie, size) || !fixed_ok(l->sf_flags, size))
		return -EINVAL;
	*cookie = rd(l, d + l->sf_cookie->offset, 8);
	*flags = (uint32_t)rd(l, d + l->sf_flags->offset, 4);
	return 0;
}

int ust_dec_rec_size(const struct tep_record *rec, int page_size, char *what, size_t whatlen)
{
	/* Every ring-buffer event has a header of 4 bytes at least: when
	 * record_size does not say more, the data starts that far in. */
	uint64_t need = (uint64_t)rec->size + 4, at;

	if (rec->size < 0) {
		snprintf(what, whatlen, "record of %d bytes", rec->size);
		return -EINVAL;
	}
	if (page_size <= 0)
		return rec->size;
	if (rec->record_size > 0 && (uint64_t)rec->record_size > need)
		need = (uint64_t)rec->record_size;
	/* Pages sit at multiples of their size in the file (libtracecmd
	 * refuses others): the offset's remainder is the header's place. */
	at = rec->offset % (unsigned int)page_size;
	if (at + need > (uint64_t)page_size) {
		snprintf(what, whatlen, "record of %d bytes at %llu in its page runs past the page's %d bytes",
			 rec->size, (unsigned long long)at, page_size);
		return -EINVAL;
	}
	return rec->size;
}

int ust_dec_pid(const struct ust_dec_layout *l, const void *data, int size)
{
	if (size < 8)
		return -EINVAL;
	return (int)(int32_t)rd(l, (const uint8_t *)data + 4, 4);
}
