// SPDX-License-Identifier: LGPL-2.1
/*
 * Event lines in the style of babeltrace2's sink.text.pretty (2.0, no
 * colours, default options): "[time] (+delta) host name: { packet
 * context }, { common context }, { specific context }, { payload }",
 * structures as "{ a = 1 }", arrays as "[ [0] = 1 ]", variants as
 * "{ value }", enumerations as "( "label" : container = N )", hex
 * integers in upper case.  Our own contexts are printed by the plugin
 * through the member hook.
 *
 * Numbers and names are written directly, not through printf: a text
 * sink spends most of its time formatting, and vfprintf was half of it.
 */
#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ust_bt2.h"

void ust_bt2_put_u64(struct ust_sb *out, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf) - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ust_sb_puts(out, p);
}

static void put_i64(struct ust_sb *out, int64_t v)
{
	if (v < 0) {
		ust_sb_puts(out, "-");
		ust_bt2_put_u64(out, (uint64_t)0 - (uint64_t)v);
		return;
	}
	ust_bt2_put_u64(out, (uint64_t)v);
}

static void put_hex(struct ust_sb *out, uint64_t v, bool upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char buf[24], *p = buf + sizeof(buf) - 1;

	*p = '\0';
	do {
		*--p = dig[v & 0xf];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	ust_sb_puts(out, p);
}

void ust_bt2_put_hex(struct ust_sb *out, uint64_t v)
{
	put_hex(out, v, false);
}

/* @width digits, zero-padded. */
static void put_padded(struct ust_sb *out, uint64_t v, int width)
{
	char buf[24];
	int i;

	if (width > 20)
		width = 20;
	buf[width] = '\0';
	for (i = width; i-- > 0; v /= 10)
		buf[i] = (char)('0' + v % 10);
	ust_sb_puts(out, buf);
}

static void put_string(const char *s, struct ust_sb *out)
{
	const char *run = s;

	ust_sb_puts(out, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *esc = NULL;
		char hex[8];

		switch (c) {
		case '\n': esc = "\\n"; break;
		case '\t': esc = "\\t"; break;
		case '\r': esc = "\\r"; break;
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		default:
			if (c < 0x20) {
				snprintf(hex, sizeof(hex), "\\x%02x", c);
				esc = hex;
			}
		}
		if (!esc)
			continue;
		ust_sb_printf(out, "%.*s%s", (int)(s - run), run, esc);
		run = s + 1;
	}
	ust_sb_printf(out, "%s\"", run);
}

static void put_uint(const bt_field_class *fc, uint64_t v, struct ust_sb *out)
{
	uint64_t bits = bt_field_class_integer_get_field_value_range(fc);
	int i;

	switch (bt_field_class_integer_get_preferred_display_base(fc)) {
	case BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL:
		put_hex(out, v, true);
		break;
	case BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_OCTAL:
		ust_sb_printf(out, "0%" PRIo64, v);
		break;
	case BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_BINARY:
		ust_sb_puts(out, "0b");
		for (i = (int)(bits ? bits : 64) - 1; i >= 0; i--)
			ust_sb_puts(out, (v >> i) & 1 ? "1" : "0");
		break;
	default:
		ust_bt2_put_u64(out, v);
	}
}

static void put_sint(const bt_field_class *fc, int64_t v, struct ust_sb *out)
{
	uint64_t bits = bt_field_class_integer_get_field_value_range(fc);
	uint64_t u = (uint64_t)v;

	if (bt_field_class_integer_get_preferred_display_base(fc) ==
	    BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_DECIMAL) {
		put_i64(out, v);
		return;
	}
	if (bits && bits < 64)
		u &= ((uint64_t)1 << bits) - 1;
	put_uint(fc, u, out);
}

static void put_enum(const bt_field *f, bool is_signed, struct ust_sb *out)
{
	bt_field_class_enumeration_mapping_label_array labels;
	uint64_t n = 0, i;

	if (is_signed)
		bt_field_enumeration_signed_get_mapping_labels(f, &labels, &n);
	else
		bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n);
	ust_sb_puts(out, "( ");
	if (!n)
		ust_sb_puts(out, "<unknown>");
	else if (n > 1)
		ust_sb_puts(out, "{ ");
	for (i = 0; i < n; i++) {
		if (i)
			ust_sb_puts(out, ", ");
		ust_sb_printf(out, "\"%s\"", labels[i]);
	}
	if (n > 1)
		ust_sb_puts(out, " }");
	ust_sb_puts(out, " : container = ");
	if (is_signed)
		put_sint(bt_field_borrow_class_const(f), bt_field_integer_signed_get_value(f), out);
	else
		put_uint(bt_field_borrow_class_const(f), bt_field_integer_unsigned_get_value(f), out);
	ust_sb_puts(out, " )");
}

void ust_bt2_pretty_struct(const bt_field *f, uint64_t skip, ust_bt2_member_hook hook,
			   void *data, struct ust_sb *out)
{
	const bt_field_class *fc = bt_field_borrow_class_const(f);
	uint64_t n = bt_field_class_structure_get_member_count(fc), i;
	struct ust_sb tmp;
	bool first = true;

	ust_sb_init(&tmp);
	ust_sb_puts(out, "{");
	for (i = 0; i < n; i++) {
		const bt_field_class_structure_member *m =
			bt_field_class_structure_borrow_member_by_index_const(fc, i);
		const char *name = bt_field_class_structure_member_get_name(m);
		const bt_field *mf = bt_field_structure_borrow_member_field_by_index_const(f, i);
		enum ust_bt2_hook_ret r = UST_BT2_MEMBER_DEFAULT;

		if (i < 64 && (skip >> i & 1))
			continue;
		if (hook) {
			ust_sb_reset(&tmp);
			r = hook(data, name, mf, &tmp);
		}
		if (r == UST_BT2_MEMBER_SKIP)
			continue;
		ust_sb_puts(out, first ? " " : ", ");
		first = false;
		if (r == UST_BT2_MEMBER_DONE) {
			ust_sb_puts(out, ust_sb_str(&tmp));
			continue;
		}
		ust_sb_puts(out, name);
		ust_sb_puts(out, " = ");
		ust_bt2_pretty_field(mf, out);
	}
	ust_sb_puts(out, " }");
	ust_sb_fini(&tmp);
}

void ust_bt2_pretty_field(const bt_field *f, struct ust_sb *out)
{
	const bt_field_class *fc = bt_field_borrow_class_const(f);
	bt_field_class_type t = bt_field_get_class_type(f);

	if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		ust_sb_puts(out, bt_field_bool_get_value(f) ? "true" : "false");
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		ust_sb_printf(out, "0x%" PRIX64, bt_field_bit_array_get_value_as_integer(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION)) {
		put_enum(f, bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER), out);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		put_sint(fc, bt_field_integer_signed_get_value(f), out);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		put_uint(fc, bt_field_integer_unsigned_get_value(f), out);
	} else if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL) {
		ust_sb_printf(out, "%g", (double)bt_field_real_single_precision_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL) {
		ust_sb_printf(out, "%g", bt_field_real_double_precision_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		put_string(bt_field_string_get_value(f), out);
	} else if (t == BT_FIELD_CLASS_TYPE_STRUCTURE) {
		ust_bt2_pretty_struct(f, 0, NULL, NULL, out);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
		uint64_t n = bt_field_array_get_length(f), i;

		ust_sb_puts(out, "[");
		for (i = 0; i < n; i++) {
			ust_sb_puts(out, i ? ", [" : " [");
			ust_bt2_put_u64(out, i);
			ust_sb_puts(out, "] = ");
			ust_bt2_pretty_field(bt_field_array_borrow_element_field_by_index_const(f, i), out);
		}
		ust_sb_puts(out, " ]");
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_OPTION)) {
		const bt_field *o = bt_field_option_borrow_field_const(f);

		if (o)
			ust_bt2_pretty_field(o, out);
		else
			ust_sb_puts(out, "<none>");
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT)) {
		ust_sb_puts(out, "{ ");
		ust_bt2_pretty_field(bt_field_variant_borrow_selected_option_field_const(f), out);
		ust_sb_puts(out, " }");
	} else {
		ust_sb_puts(out, "<unsupported>");
	}
}

void ust_bt2_pretty_time(struct ust_bt2_clock *c, const bt_clock_snapshot *cs,
			 struct ust_sb *out)
{
	int64_t ns;
	time_t secs;
	struct tm tm;
	int64_t sub;

	if (!cs || bt_clock_snapshot_get_ns_from_origin(cs, &ns) !=
			   BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
		ust_sb_puts(out, "[??:??:??.?????????] (+?.????????" "?) ");
		c->have_last = false;
		return;
	}
	secs = (time_t)(ns / 1000000000);
	sub = ns % 1000000000;
	if (sub < 0) {
		secs--;
		sub += 1000000000;
	}
	if (c->gmt)
		gmtime_r(&secs, &tm);
	else
		localtime_r(&secs, &tm);
	ust_sb_puts(out, "[");
	put_padded(out, (uint64_t)tm.tm_hour, 2);
	ust_sb_puts(out, ":");
	put_padded(out, (uint64_t)tm.tm_min, 2);
	ust_sb_puts(out, ":");
	put_padded(out, (uint64_t)tm.tm_sec, 2);
	ust_sb_puts(out, ".");
	put_padded(out, (uint64_t)sub, 9);
	ust_sb_puts(out, "] ");
	if (c->have_last && ns >= c->last_ns) {
		int64_t d = ns - c->last_ns;

		ust_sb_puts(out, "(+");
		ust_bt2_put_u64(out, (uint64_t)(d / 1000000000));
		ust_sb_puts(out, ".");
		put_padded(out, (uint64_t)(d % 1000000000), 9);
		ust_sb_puts(out, ") ");
	} else {
		ust_sb_puts(out, "(+?.????????" "?) ");
	}
	c->have_last = true;
	c->last_ns = ns;
}
