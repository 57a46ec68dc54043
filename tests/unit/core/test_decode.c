// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_dec: records are built here from the ABI constants and
 * parsed through libtraceevent with the kernel-bits format texts, then
 * broken in every way a hostile record can be.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "ustitch/decode.h"
#include "ustitch/kbits.h"

struct ctx {
	struct tep_handle *tep;
	struct ust_dec_layout lay;
};

static struct tep_handle *make_tep(const char *stack_key, int commit_size)
{
	struct tep_handle *tep = tep_alloc();
	const char *keys[] = { "ftrace/user_unwind_cookie", stack_key, "ustitch/user_mapping" };
	char hp[1024];
	size_t i;

	assert_non_null(tep);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, 8);
	/* The header page as a kernel with a @commit_size local_t exports it. */
	snprintf(hp, sizeof(hp),
		 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		 "\tfield: local_t commit;\toffset:8;\tsize:%d;\tsigned:1;\n"
		 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		 "\tfield: char data;\toffset:%d;\tsize:4080;\tsigned:0;\n",
		 commit_size, 8 + commit_size);
	assert_int_equal(tep_parse_header_page(tep, hp, strlen(hp), 8), 0);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *t = ust_kbits_get(keys[i]);
		const char *sys = strncmp(keys[i], "ustitch/", 8) ? "ftrace" : "ustitch";

		assert_non_null(t);
		struct tep_event *ev = NULL;

		assert_int_equal(tep_parse_format(tep, &ev, t, strlen(t), sys), 0);
	}
	return tep;
}

static int setup_full(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char err[160];

	c->tep = make_tep("ftrace/user_unwind_stack", 8);
	assert_int_equal(ust_dec_layout_init(&c->lay, c->tep, err, sizeof(err)), 0);
	*state = c;
	return 0;
}

static int setup_old(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char err[160];

	c->tep = make_tep("ftrace/user_unwind_stack.stack-only", 8);
	assert_int_equal(ust_dec_layout_init(&c->lay, c->tep, err, sizeof(err)), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	tep_free(c->tep);
	free(c);
	return 0;
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* A user_unwind_stack record exactly as the kernel (patch 9) lays it out. */
static int build_full(uint8_t *r, uint64_t cookie, const uint64_t *off,
		      const uint64_t *ino, const uint32_t *dev, unsigned int n)
{
	unsigned int o = UST_ABI_STACK_HDR_SIZE, i;

	memset(r, 0, 1024);
	put16(r, UST_ABI_ID_UNWIND_STACK);
	put32(r + 4, 4242);
	put64(r + UST_ABI_COOKIE_OFF, cookie);
	put32(r + UST_ABI_STACK_LOC_OFF, UST_ABI_DATA_LOC(o, n * 8));
	for (i = 0; i < n; i++)
		put64(r + o + i * 8, off[i]);
	o += n * 8;
	put32(r + UST_ABI_INODES_LOC_OFF, UST_ABI_DATA_LOC(o, n * 8));
	for (i = 0; i < n; i++)
		put64(r + o + i * 8, ino[i]);
	o += n * 8;
	put32(r + UST_ABI_DEV_LOC_OFF, UST_ABI_DATA_LOC(o, n * 4));
	for (i = 0; i < n; i++)
		put32(r + o + i * 4, dev[i]);
	return (int)(o + n * 4);
}

static const uint64_t OFF[3] = { 0x1001ca, 0xae27, 0x107e7 };
static const uint64_t INO[3] = { 1340007, 1308548, 1440347 };
static const uint32_t DEV[3] = { UST_ABI_MKKDEV(254, 3), UST_ABI_MKKDEV(254, 3), UST_ABI_MKKDEV(8, 1) };

static void test_full_layout(void **state)
{
	struct ctx *c = *state;
	uint8_t r[1024];
	struct ust_dec_stack s;
	struct ust_dec_frame f;
	char what[160];
	int len = build_full(r, 0x7000000000009ULL, OFF, INO, DEV, 3);

	assert_true(c->lay.has_files);
	assert_int_equal(c->lay.long_size, 8);
	assert_int_equal(ust_dec_stack(&c->lay, r, len, &s, what, sizeof(what)), 0);
	assert_int_equal(s.nr, 3);
	assert_int_equal(s.pid, 4242);
	assert_true(s.cookie == 0x7000000000009ULL);
	ust_dec_frame_at(&s, 2, &f);
	assert_true(f.off == 0x107e7 && f.ino == 1440347);
	assert_int_equal(UST_ABI_KDEV_MAJOR(f.kdev), 8);
	assert_int_equal(UST_ABI_KDEV_MINOR(f.kdev), 1);
	/* Records are 4-byte aligned in the ring buffer: decode at +4. */
	{
		uint8_t *u = malloc((size_t)len + 4);

		memcpy(u + 4, r, (size_t)len);
		assert_int_equal(ust_dec_stack(&c->lay, u + 4, len, &s, what, sizeof(what)), 0);
		ust_dec_frame_at(&s, 0, &f);
		assert_true(f.off == 0x1001ca);
		free(u);
	}
}

static void expect_bad(struct ctx *c, const uint8_t *r, int len, const char *msg)
{
	struct ust_dec_stack s;
	char what[160] = "";

	assert_int_equal(ust_dec_stack(&c->lay, r, len, &s, what, sizeof(what)), -EINVAL);
	assert_string_equal(what, msg);
}

static void test_hostile(void **state)
{
	struct ctx *c = *state;
	uint8_t r[1024];
	int len;

	len = build_full(r, 0x3, OFF, INO, DEV, 3);
	/* stack array pointing past the end */
	put32(r + UST_ABI_STACK_LOC_OFF, UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE, 800));
	expect_bad(c, r, len, "stack array ends at 832, past the 92-byte record");

	len = build_full(r, 0x3, OFF, INO, DEV, 3);
	put32(r + UST_ABI_STACK_LOC_OFF, UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE, 20));
	expect_bad(c, r, len, "stack array length 20 is not a multiple of 8");

	len = build_full(r, 0x3, OFF, INO, DEV, 3);
	put32(r + UST_ABI_INODES_LOC_OFF, UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE + 24, 16));
	expect_bad(c, r, len, "arrays differ in length (stack 3, inodes 2, dev 3 entries)");

	len = build_full(r, 0x3, OFF, INO, DEV, 3);
	put32(r + UST_ABI_DEV_LOC_OFF, UST_ABI_DATA_LOC(0xfff0, 12));
	expect_bad(c, r, len, "dev array ends at 65532, past the 92-byte record");

	len = build_full(r, 0x3, OFF, INO, DEV, 3);
	put32(r + UST_ABI_STACK_LOC_OFF, UST_ABI_DATA_LOC(4, 24));
	expect_bad(c, r, len, "stack array at offset 4 overlaps the fixed fields (end at 28)");

	expect_bad(c, r, 12, "record of 12 bytes too short for the cookie");
	expect_bad(c, r, 18, "record of 18 bytes too short for the stack field");
	expect_bad(c, r, 4, "record of 4 bytes too short");
}

static void test_zero_frames(void **state)
{
	struct ctx *c = *state;
	uint8_t r[1024];
	struct ust_dec_stack s;
	char what[160];
	int len = build_full(r, 0x5, OFF, INO, DEV, 0);

	assert_int_equal(ust_dec_stack(&c->lay, r, len, &s, what, sizeof(what)), 0);
	assert_int_equal(s.nr, 0);
}

static void test_old_layout(void **state)
{
	struct ctx *c = *state;
	uint8_t r[256];
	struct ust_dec_stack s;
	struct ust_dec_frame f;
	char what[160];
	unsigned int o = UST_ABI_STACK_HDR_SIZE_OLD;

	assert_false(c->lay.has_files);
	memset(r, 0, sizeof(r));
	put16(r, UST_ABI_ID_UNWIND_STACK);
	put64(r + UST_ABI_COOKIE_OFF, 0x1000000000003ULL);
	put32(r + UST_ABI_STACK_LOC_OFF, UST_ABI_DATA_LOC(o, 16));
	put64(r + o, 0x7fdbd0d421caULL);
	put64(r + o + 8, 0x5635ece557e7ULL);
	assert_int_equal(ust_dec_stack(&c->lay, r, (int)o + 16, &s, what, sizeof(what)), 0);
	assert_int_equal(s.nr, 2);
	assert_null(s.inodes);
	ust_dec_frame_at(&s, 1, &f);
	assert_true(f.off == 0x5635ece557e7ULL && f.ino == 0 && f.kdev == 0);
}

static void test_cookie(void **state)
{
	struct ctx *c = *state;
	uint8_t r[16];
	uint64_t cookie = 0;
	char what[160];

	memset(r, 0, sizeof(r));
	put16(r, UST_ABI_ID_UNWIND_COOKIE);
	put64(r + UST_ABI_COOKIE_OFF, ust_abi_cookie(7, 4));
	assert_int_equal(ust_dec_cookie(&c->lay, r, 16, &cookie, what, sizeof(what)), 0);
	assert_true(cookie == 0x7000000000009ULL);
	assert_int_equal(ust_abi_cookie_cpu(cookie), 7);
	assert_int_equal(ust_dec_cookie(&c->lay, r, 12, &cookie, what, sizeof(what)), -EINVAL);
	assert_string_equal(what, "record of 12 bytes too short for the cookie");
}

static void test_mapping(void **state)
{
	struct ctx *c = *state;
	uint8_t r[128];
	struct ust_dec_mapping m;
	char what[160];
	const char *path = "/usr/bin/true";

	memset(r, 0, sizeof(r));
	put16(r, UST_ABI_ID_USER_MAPPING);
	put64(r + 8, 99);
	put32(r + 16, UST_ABI_MKKDEV(254, 1));
	put32(r + 20, 4);
	memcpy(r + 24, "\xde\xad\xbe\xef", 4);
	put32(r + 44, UST_ABI_DATA_LOC(48, strlen(path) + 1));
	memcpy(r + 48, path, strlen(path) + 1);
	assert_int_equal(ust_dec_mapping(&c->lay, r, 48 + (int)strlen(path) + 1, &m, what, sizeof(what)), 0);
	assert_string_equal(m.path, "/usr/bin/true");
	assert_true(m.ino == 99 && m.build_id_len == 4 && m.build_id[3] == 0xef);
	put32(r + 20, 21);
	assert_int_equal(ust_dec_mapping(&c->lay, r, 64, &m, what, sizeof(what)), -EINVAL);
	assert_string_equal(what, "build-id size 21 larger than its 20-byte field");
}

static void test_long_size_from_header_page(void **state)
{
	struct tep_handle *tep = make_tep("ftrace/user_unwind_stack", 4);
	struct ust_dec_layout lay;
	char err[160];

	(void)state;
	assert_int_equal(ust_dec_layout_init(&lay, tep, err, sizeof(err)), 0);
	assert_int_equal(lay.long_size, 4);
	tep_free(tep);
}

/*
 * A record's length comes from its header, which libtracecmd does not check
 * against the page: a record must end inside its page, counting its header
 * (8 bytes for a type_len-0 record, which the first guard of the fuzz_scan
 * finding forgot).
 */
static void test_rec_in_page(void **state)
{
	struct tep_record r;
	char what[160];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.offset = 3 * 4096 + 4000;	/* the header's place: 4000 */
	r.size = 88;
	r.record_size = 96;		/* 8-byte header: ends at 4096 */
	assert_int_equal(ust_dec_rec_size(&r, 4096, what, sizeof(what)), 88);
	r.size = 92;
	r.record_size = 100;		/* 4 bytes past the page */
	assert_int_equal(ust_dec_rec_size(&r, 4096, what, sizeof(what)), -EINVAL);
	assert_string_equal(what, "record of 92 bytes at 4000 in its page runs past the page's 4096 bytes");
	r.record_size = 0;		/* no record_size: a 4-byte header at least */
	assert_int_equal(ust_dec_rec_size(&r, 4096, what, sizeof(what)), 92);
	r.size = 93;
	assert_int_equal(ust_dec_rec_size(&r, 4096, what, sizeof(what)), -EINVAL);
	r.size = 0x7ffffff0;		/* a type_len-0 length word near INT_MAX */
	r.record_size = 0x7ffffff8;
	assert_int_equal(ust_dec_rec_size(&r, 4096, what, sizeof(what)), -EINVAL);
	assert_int_equal(ust_dec_rec_size(&r, 0, what, sizeof(what)), 0x7ffffff0);	/* unknown page size */
	r.size = -8;			/* a length word below 4 */
	assert_int_equal(ust_dec_rec_size(&r, 0, what, sizeof(what)), -EINVAL);
	assert_int_equal(ust_dec_rec_size(&r, 4096, what, sizeof(what)), -EINVAL);
}

static void test_no_events(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct ust_dec_layout lay;
	char err[160];

	(void)state;
	assert_int_equal(ust_dec_layout_init(&lay, tep, err, sizeof(err)), -ENOENT);
	assert_int_equal(lay.stack_id, -1);
	tep_free(tep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_layout, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_zero_frames, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_cookie, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_mapping, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_old_layout, setup_old, teardown),
		cmocka_unit_test(test_long_size_from_header_page),
		cmocka_unit_test(test_no_events),
		cmocka_unit_test(test_rec_in_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
