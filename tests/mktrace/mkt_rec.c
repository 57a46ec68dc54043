// SPDX-License-Identifier: LGPL-2.1
/*
 * Records laid out from format texts: every offset and size comes from the
 * parsed format, so a fixture follows whatever the kernel-bits texts say.
 * The fixed part is the kernel's struct (trace_event_raw_*), dynamic data
 * follows it unaligned, in the order it is appended, as the kernel's
 * __dynamic_array() does.
 */
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "mkt.h"

static bool has_word(const char *type, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = type; (p = strstr(p, word)); p += n) {
		bool start = p == type || p[-1] == ' ' || p[-1] == '\t';
		char e = p[n];

		if (start && (e == '\0' || e == ' ' || e == '[' || e == '\t'))
			return true;
	}
	return false;
}

unsigned int ust_mkt_elem_size(const struct tep_format_field *f)
{
	const char *t = f->type;

	if (f->elementsize && !(f->flags & TEP_FIELD_IS_DYNAMIC))
		return f->elementsize;
	if (strchr(t, '*'))
		return sizeof(void *);
	if (has_word(t, "u64") || has_word(t, "s64") || strstr(t, "long long"))
		return 8;
	if (has_word(t, "long"))
		return sizeof(long);
	if (has_word(t, "u32") || has_word(t, "s32") || has_word(t, "int") ||
	    has_word(t, "pid_t"))
		return 4;
	if (has_word(t, "u16") || has_word(t, "s16") || has_word(t, "short"))
		return 2;
	if (has_word(t, "u8") || has_word(t, "s8") || has_word(t, "char") ||
	    has_word(t, "bool"))
		return 1;
	return 0;
}

/* Natural alignment of a field, as the C struct behind the format has it. */
static unsigned int field_align(const struct tep_format_field *f)
{
	unsigned int a;

	if (f->flags & TEP_FIELD_IS_DYNAMIC)
		return 4;	/* the __data_loc word */
	a = (f->flags & TEP_FIELD_IS_ARRAY) ? ust_mkt_elem_size(f) : (unsigned int)f->size;
	if (a == 0 || a > 8 || (a & (a - 1)))
		return 1;
	return a;
}

size_t ust_mkt_fixed_size(struct tep_event *ev)
{
	struct tep_format_field *lists[2] = { ev->format.common_fields, ev->format.fields };
	struct tep_format_field *f;
	size_t end = 0, align = 1;
	int i;

	for (i = 0; i < 2; i++) {
		for (f = lists[i]; f; f = f->next) {
			if ((size_t)(f->offset + f->size) > end)
				end = f->offset + f->size;
			if (field_align(f) > align)
				align = field_align(f);
		}
	}
	return (end + align - 1) / align * align;
}

static int reserve(struct ust_mkt_rec *r, size_t more)
{
	size_t cap = r->cap ? r->cap : 256;
	unsigned char *p;

	if (r->len + more <= r->cap)
		return 0;
	while (cap < r->len + more)
		cap *= 2;
	p = realloc(r->buf, cap);
	if (!p)
		return -1;
	memset(p + r->cap, 0, cap - r->cap);
	r->buf = p;
	r->cap = cap;
	return 0;
}

int ust_mkt_rec_init(struct ust_mkt_rec *r, struct tep_event *ev, int pid)
{
	memset(r, 0, sizeof(*r));
	r->ev = ev;
	r->fixed = ust_mkt_fixed_size(ev);
	if (reserve(r, r->fixed) < 0)
		return -1;
	r->len = r->fixed;
	ust_mkt_rec_put(r, tep_find_common_field(ev, "common_type"), (uint64_t)ev->id);
	ust_mkt_rec_put(r, tep_find_common_field(ev, "common_pid"), (uint64_t)(int64_t)pid);
	return 0;
}

void ust_mkt_rec_fini(struct ust_mkt_rec *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

void ust_mkt_store(void *dst, uint64_t v, unsigned int size)
{
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	/* by value, not by bytes: right on either endianness */
	switch (size) {
	case 1: memcpy(dst, &v8, 1); break;
	case 2: memcpy(dst, &v16, 2); break;
	case 4: memcpy(dst, &v32, 4); break;
	case 8: memcpy(dst, &v, 8); break;
	default: break;
	}
}

void ust_mkt_rec_put(struct ust_mkt_rec *r, const struct tep_format_field *f, uint64_t v)
{
	if (!f || f->offset + f->size > (int)r->fixed)
		return;
	ust_mkt_store(r->buf + f->offset, v, f->size);
}

void ust_mkt_rec_put_bytes(struct ust_mkt_rec *r, const struct tep_format_field *f,
			   const void *data, size_t len)
{
	if (!f || f->offset + len > r->fixed)
		return;
	memcpy(r->buf + f->offset, data, len);
}

void ust_mkt_rec_set_loc(struct ust_mkt_rec *r, const struct tep_format_field *f,
			 uint32_t off, uint32_t len)
{
	/* __rel_loc counts from the end of its own word. */
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off -= f->offset + f->size;
	ust_mkt_rec_put(r, f, UST_ABI_DATA_LOC(off & 0xffff, len & 0xffff));
}

int ust_mkt_rec_grow(struct ust_mkt_rec *r, const void *data, size_t len)
{
	if (reserve(r, len) < 0)
		return -1;
	if (len)
		memcpy(r->buf + r->len, data, len);
	r->len += len;
	return 0;
}

int ust_mkt_rec_append(struct ust_mkt_rec *r, const struct tep_format_field *f,
		       const void *data, size_t len)
{
	size_t off = r->len;

	if (off > 0xffff || len > 0xffff || ust_mkt_rec_grow(r, data, len) < 0)
		return -1;
	ust_mkt_rec_set_loc(r, f, (uint32_t)off, (uint32_t)len);
	return 0;
}
