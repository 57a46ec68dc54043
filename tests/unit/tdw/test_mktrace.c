// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-mktrace: every spec keyword, frame form and corrupt kind, checked
 * through the real trace-cmd and byte by byte through libtracecmd; spec
 * errors; and a small --bench run.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"
#include "tdw_testlib.h"

/* An ELF file that surely exists: the generator itself. */
static char elf_path[PATH_MAX];
static struct stat elf_st;

/* Run `ust-mktrace - OUT` on @spec; returns the exit status. */
static int mktrace(const char *spec, const char *out, char **err)
{
	const char *argv[] = { tt.mktrace, "-", out, NULL };
	char *o;
	int ret = tt_run(argv, spec, &o, err);

	free(o);
	return ret;
}

static void mktrace_ok(const char *spec, const char *out)
{
	char *err;

	if (mktrace(spec, out, &err) != 0)
		fail_msg("ust-mktrace: %s", err);
	free(err);
	assert_true(tt_dump_valid(out));
}

static void expect_report(const char *path, const char *expected)
{
	char *out = tt_report(path, NULL);

	assert_non_null(out);
	assert_string_equal(out, expected);
	free(out);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static uint32_t kdev_of(const struct stat *st)
{
	return ust_res_dev_to_kdev(st->st_dev);
}

/* ---------------------------------------------------------------- plain records */

static void test_keywords(void **state)
{
	const char *out = tt_path("kw.dat");
	const char *spec =
		"# every directive and plain record kind\n"
		"\n"
		"cmdline 100 my prog   # a comm with a space\n"
		"cpus 2\n"
		"clock mono\n"
		"buffer side\n"
		"cmdline 0x65 other\n"
		"event cpu=0 ts=1000000000 pid=100 sys=sched name=sched_switch prev_comm=\"my prog\" "
		"prev_pid=100 prev_prio=120 prev_state=0x1 next_comm=other next_pid=101 next_prio=-5\n"
		"cookie cpu=0 ts=1000000000 pid=100 cookie=0x10001\n"
		"event ts=1000002000 cpu=1 pid=101 buf=side sys=ftrace name=print ip=0x1234 field:buf=hello\n"
		"lost cpu=0 count=5\n"
		"event cpu=0 ts=1000003000 pid=101 sys=syscalls name=sys_enter_getppid __syscall_nr=110\n"
		"event cpu=0 ts=1000004000 pid=101 sys=sched name=sched_process_exit comm=other "
		"field:pid=101 prio=120 group_dead=1\n"
		"event cpu=0 ts=1000005000 pid=101 sys=raw_syscalls name=sys_enter id=-1 args=1,0x2,3\n"
		"lost cpu=1 buf=side count=0\n"
		"cookie cpu=1 ts=1000006000 pid=100 buf=side cookie=18446744073709551615\n";
	const char *argv[] = { tt.trace_cmd, "dump", "--summary", "-i", out, NULL };
	char *o, *e;

	(void)state;
	mktrace_ok(spec, out);
	expect_report(out,
		"cpus=2\n"
		"               my prog-100   [000]     1.000000: sched_switch:         prev_comm=my prog prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=other next_pid=101 next_prio=-5\n"
		"               my prog-100   [000]     1.000000: user_unwind_cookie:   cookie=65537\n"
		"side:            other-101   [001]     1.000002: print:                0x1234: hello\n"
		"      CPU:0 [5 EVENTS DROPPED]\n"
		"           other-101   [000]     1.000003: sys_enter_getppid:    \n"
		"                 other-101   [000]     1.000004: sched_process_exit:   comm=other pid=101 prio=120 group_dead=true\n"
		"                 other-101   [000]     1.000005: sys_enter:            NR -1 (1, 2, 3, 0, 0, 0)\n"
		"side: CPU:1 [EVENTS DROPPED]\n"
		"         my prog-100   [001]     1.000006: user_unwind_cookie:   cookie=-1\n");
	assert_int_equal(tt_run(argv, NULL, &o, &e), 0);
	assert_non_null(strstr(o, "local global counter uptime perf [mono] mono_raw"));
	free(o);
	free(e);
	o = tt_convert_v7_report(out);
	assert_non_null(o);
	free(o);
}

/* Generic records: byte layout from the format, unset fields zero. */
static void test_event_layout(void **state)
{
	const char *out = tt_path("ev.dat");
	struct tt_rec *r;
	int n;

	(void)state;
	mktrace_ok("event cpu=0 ts=1 pid=7 sys=ustitch name=user_mapping ino=0x1122334455667788 "
		   "dev=3 path=/x build_id=1,2,3\n"
		   "event cpu=0 ts=2 pid=7 sys=ustitch name=user_mapping common_flags=9\n"
		   "event cpu=0 ts=3 pid=7 sys=ftrace name=user_unwind_stack stack=1,2 dev=0xffffffff\n",
		   out);
	n = tt_read_records(out, 1, &r);
	assert_int_equal(n, 3);
	/* user_mapping: 48-byte struct, then "/x\0" (padded to 52 by the ring buffer) */
	assert_int_equal(r[0].size, 52);
	assert_int_equal(tt_u16(r[0].data), UST_ABI_ID_USER_MAPPING);
	assert_int_equal(r[0].data[2], 0);
	assert_int_equal(tt_u32(r[0].data + 4), 7);
	assert_int_equal(tt_u64(r[0].data + 8), 0x1122334455667788ULL);
	assert_int_equal(tt_u32(r[0].data + 16), 3);
	assert_int_equal(tt_u32(r[0].data + 20), 0);
	assert_memory_equal(r[0].data + 24, "\1\2\3\0", 4);
	assert_int_equal(tt_u32(r[0].data + 44), UST_ABI_DATA_LOC(48, 3));
	assert_memory_equal(r[0].data + 48, "/x\0", 3);
	/* unset __data_loc: length 0 at the end of the fixed part */
	assert_int_equal(r[1].size, 48);
	assert_int_equal(r[1].data[2], 9);
	assert_int_equal(tt_u32(r[1].data + 44), UST_ABI_DATA_LOC(48, 0));
	/* dynamic arrays in format order, elements of the declared type */
	assert_int_equal(r[2].size, 32 + 16 + 4);
	assert_int_equal(tt_u32(r[2].data + 16), UST_ABI_DATA_LOC(32, 16));
	assert_int_equal(tt_u32(r[2].data + 20), UST_ABI_DATA_LOC(48, 0));
	assert_int_equal(tt_u32(r[2].data + 24), UST_ABI_DATA_LOC(48, 4));
	assert_int_equal(tt_u64(r[2].data + 32), 1);
	assert_int_equal(tt_u64(r[2].data + 40), 2);
	assert_int_equal(tt_u32(r[2].data + 48), 0xffffffffU);
	tt_free_records(r, n);
}

/* ---------------------------------------------------------------- stacks */

struct stack_rec {
	uint64_t cookie;
	uint32_t stack_loc, inodes_loc, dev_loc;
};

static void get_stack_hdr(const struct tt_rec *r, struct stack_rec *s)
{
	assert_int_equal(tt_u16(r->data), UST_ABI_ID_UNWIND_STACK);
	s->cookie = tt_u64(r->data + UST_ABI_COOKIE_OFF);
	s->stack_loc = tt_u32(r->data + UST_ABI_STACK_LOC_OFF);
	s->inodes_loc = tt_u32(r->data + UST_ABI_INODES_LOC_OFF);
	s->dev_loc = tt_u32(r->data + UST_ABI_DEV_LOC_OFF);
}

static void test_stack_frames(void **state)
{
	const char *out = tt_path("stack.dat");
	struct stack_rec s;
	struct tt_rec *r;
	char *spec;
	int n;

	(void)state;
	spec = fmt("cpus 2\ncmdline 42 app\n"
		   "cookie cpu=0 ts=100 pid=42 cookie=0x1000000000003\n"
		   "stack cpu=1 ts=200 pid=42 cookie=0x1000000000003 "
		   "frames=%s@0x1234,raw:0x7fff0010,kdev:8:17:ino=99@0x42\n", elf_path);
	mktrace_ok(spec, out);
	free(spec);
	n = tt_read_records(out, 2, &r);
	assert_int_equal(n, 2);
	assert_int_equal(r[1].cpu, 1);
	assert_int_equal(tt_u32(r[1].data + 4), 42);
	get_stack_hdr(&r[1], &s);
	assert_int_equal(s.cookie, 0x1000000000003ULL);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE, 24));
	assert_int_equal(s.inodes_loc, UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE + 24, 24));
	assert_int_equal(s.dev_loc, UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE + 48, 12));
	assert_int_equal(r[1].size, UST_ABI_STACK_HDR_SIZE + 60);
	assert_int_equal(tt_u64(r[1].data + 32), 0x1234);
	assert_int_equal(tt_u64(r[1].data + 40), 0x7fff0010);
	assert_int_equal(tt_u64(r[1].data + 48), 0x42);
	assert_int_equal(tt_u64(r[1].data + 56), elf_st.st_ino);
	assert_int_equal(tt_u64(r[1].data + 64), 0);
	assert_int_equal(tt_u64(r[1].data + 72), 99);
	assert_int_equal(tt_u32(r[1].data + 80), kdev_of(&elf_st));
	assert_int_equal(tt_u32(r[1].data + 84), 0);
	assert_int_equal(tt_u32(r[1].data + 88), UST_ABI_MKKDEV(8, 17));
	tt_free_records(r, n);
}

/* The file offset of function @name, computed here from the ELF file. */
static bool elf_func_off(const char *path, const char *name, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	GElf_Phdr ph;
	Elf_Data *d;
	bool found = false;
	size_t i, np;
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
			gelf_getsym(d, (int)i, &sym);
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name))
				continue;
			elf_getphdrnum(e, &np);
			for (i = 0; i < np; i++) {
				gelf_getphdr(e, (int)i, &ph);
				if (ph.p_type == PT_LOAD && sym.st_value >= ph.p_vaddr &&
				    sym.st_value < ph.p_vaddr + ph.p_filesz) {
					*off = sym.st_value - ph.p_vaddr + ph.p_offset;
					found = true;
					break;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static void test_stack_symbol(void **state)
{
	const char *out = tt_path("sym.dat");
	uint64_t main_off;
	struct tt_rec *r;
	char *spec, *err;
	int n, ret;

	(void)state;
	if (!elf_func_off(elf_path, "main", &main_off))
		skip();
	spec = fmt("stack cpu=0 ts=1 pid=1 cookie=1 frames=%s:main+0x10,%s:main\n",
		   elf_path, elf_path);
	ret = mktrace(spec, out, &err);
	free(spec);
	/* Until lib/sym/sym.c can look names up, the frame form cannot work. */
	if (ret != 0 && strstr(err, "no symbol cache")) {
		free(err);
		skip();
	}
	assert_int_equal(ret, 0);
	free(err);
	n = tt_read_records(out, 1, &r);
	assert_int_equal(n, 1);
	assert_int_equal(tt_u64(r[0].data + 32), main_off + 0x10);
	assert_int_equal(tt_u64(r[0].data + 40), main_off);
	assert_int_equal(tt_u64(r[0].data + 48), elf_st.st_ino);
	assert_int_equal(tt_u32(r[0].data + 64), kdev_of(&elf_st));
	tt_free_records(r, n);

	/* a missing symbol is an error of the spec line */
	spec = fmt("\nstack cpu=0 ts=1 pid=1 cookie=1 frames=%s:no_such_function_xyz\n", elf_path);
	assert_int_equal(mktrace(spec, out, &err), 2);
	assert_non_null(strstr(err, "<stdin>:2: "));
	assert_non_null(strstr(err, "no_such_function_xyz"));
	free(spec);
	free(err);
}

static void test_stack_only(void **state)
{
	const char *out = tt_path("old.dat");
	struct tt_rec *r;
	int n;

	(void)state;
	mktrace_ok("format ftrace/user_unwind_stack.stack-only\n"
		   "stack cpu=0 ts=5 pid=3 cookie=9 frames=raw:0x10,kdev:1:2:ino=3@0x20\n", out);
	n = tt_read_records(out, 1, &r);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].size, UST_ABI_STACK_HDR_SIZE_OLD + 16);
	assert_int_equal(tt_u64(r[0].data + UST_ABI_COOKIE_OFF), 9);
	assert_int_equal(tt_u32(r[0].data + UST_ABI_STACK_LOC_OFF),
			 UST_ABI_DATA_LOC(UST_ABI_STACK_HDR_SIZE_OLD, 16));
	assert_int_equal(tt_u64(r[0].data + 24), 0x10);
	assert_int_equal(tt_u64(r[0].data + 32), 0x20);
	tt_free_records(r, n);
	expect_report(out, "cpus=1\n"
		      "           <...>-3     [000]     0.000000: user_unwind_stack:    [FAILED TO PARSE] "
		      "cookie=9 stack=ARRAY[10, 00, 00, 00, 00, 00, 00, 00, 20, 00, 00, 00, 00, 00, 00, 00]\n");
}

/*
 * Each corrupt kind, on a 2-frame stack of the full layout: normally
 * 32 + 16 (stack) + 16 (inodes) + 8 (dev) = 72 bytes.
 */
static void test_corrupt(void **state)
{
	const char *out = tt_path("corrupt.dat");
	const char *spec =
		"stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:0xa,raw:0xb\n"
		"stack cpu=0 ts=2 pid=1 cookie=3 frames=raw:0xa,raw:0xb corrupt=stack_oob\n"
		"stack cpu=0 ts=3 pid=1 cookie=5 frames=raw:0xa,raw:0xb corrupt=stack_misaligned\n"
		"stack cpu=0 ts=4 pid=1 cookie=7 frames=kdev:1:1:ino=5@0xa,raw:0xb corrupt=inodes_short\n"
		"stack cpu=0 ts=5 pid=1 cookie=9 frames=raw:0xa,raw:0xb corrupt=dev_oob\n"
		"stack cpu=0 ts=6 pid=1 cookie=11 frames=raw:0xa,raw:0xb corrupt=truncate:40\n"
		"stack cpu=0 ts=7 pid=1 cookie=13 frames=raw:0xa,raw:0xb corrupt=truncate:37\n"
		"stack cpu=0 ts=8 pid=1 cookie=15 corrupt=zero_frames\n"
		"stack cpu=0 ts=9 pid=1 cookie=17 frames=raw:0xa corrupt=zero_frames\n";
	struct stack_rec s;
	struct tt_rec *r;
	int n;

	(void)state;
	mktrace_ok(spec, out);
	n = tt_read_records(out, 1, &r);
	assert_int_equal(n, 9);

	get_stack_hdr(&r[0], &s);	/* the reference */
	assert_int_equal(r[0].size, 72);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(32, 16));
	assert_int_equal(s.inodes_loc, UST_ABI_DATA_LOC(48, 16));
	assert_int_equal(s.dev_loc, UST_ABI_DATA_LOC(64, 8));

	/* stack_oob: same bytes, the stack's window moved to end 8 bytes past the record */
	get_stack_hdr(&r[1], &s);
	assert_int_equal(r[1].size, 72);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(72 + 8 - 16, 16));
	assert_memory_equal(r[1].data + 20, r[0].data + 20, 72 - 20);
	assert_memory_equal(r[1].data + 32, r[0].data + 32, 40);

	/* stack_misaligned: length 12, not a multiple of 8 */
	get_stack_hdr(&r[2], &s);
	assert_int_equal(r[2].size, 72);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(32, 12));
	assert_memory_equal(r[2].data + 20, r[0].data + 20, 72 - 20);

	/* inodes_short: one inode for two frames, dev right after it */
	get_stack_hdr(&r[3], &s);
	assert_int_equal(r[3].size, 64);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(32, 16));
	assert_int_equal(s.inodes_loc, UST_ABI_DATA_LOC(48, 8));
	assert_int_equal(s.dev_loc, UST_ABI_DATA_LOC(56, 8));
	assert_int_equal(tt_u64(r[3].data + 48), 5);
	assert_int_equal(tt_u32(r[3].data + 56), UST_ABI_MKKDEV(1, 1));
	assert_int_equal(tt_u32(r[3].data + 60), 0);

	/* dev_oob */
	get_stack_hdr(&r[4], &s);
	assert_int_equal(r[4].size, 72);
	assert_int_equal(s.dev_loc, UST_ABI_DATA_LOC(72 + 8 - 8, 8));
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(32, 16));

	/* truncate:40 keeps the header and one frame, __data_loc words unchanged */
	get_stack_hdr(&r[5], &s);
	assert_int_equal(r[5].size, 40);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(32, 16));
	assert_int_equal(s.dev_loc, UST_ABI_DATA_LOC(64, 8));
	assert_int_equal(tt_u64(r[5].data + 32), 0xa);
	/* truncate:37: the ring buffer rounds records up to 4 bytes, zero-filled */
	assert_int_equal(r[6].size, 40);
	assert_memory_equal(r[6].data + 32, "\x0a\0\0\0\0\0\0\0", 8);

	/* zero_frames: the header alone, all three arrays empty */
	get_stack_hdr(&r[7], &s);
	assert_int_equal(r[7].size, 32);
	assert_int_equal(s.stack_loc, UST_ABI_DATA_LOC(32, 0));
	assert_int_equal(s.inodes_loc, UST_ABI_DATA_LOC(32, 0));
	assert_int_equal(s.dev_loc, UST_ABI_DATA_LOC(32, 0));
	assert_int_equal(r[8].size, 32);
	tt_free_records(r, n);
}

/* ---------------------------------------------------------------- mapping */

static void test_mapping(void **state)
{
	const char *out = tt_path("map.dat");
	uint8_t bid[20];
	size_t blen = ust_sym_read_build_id(elf_path, bid, sizeof(bid));
	struct tt_rec *r;
	char *spec, *expected;
	size_t plen = strlen(elf_path) + 1;
	int n;

	(void)state;
	spec = fmt("mapping cpu=0 ts=10 pid=5 path=%s\n"
		   "mapping cpu=0 ts=11 pid=5 path=%s as=/opt/stored/path buildid=none\n",
		   elf_path, elf_path);
	mktrace_ok(spec, out);
	free(spec);
	n = tt_read_records(out, 1, &r);
	assert_int_equal(n, 2);
	assert_int_equal(tt_u16(r[0].data), UST_ABI_ID_USER_MAPPING);
	assert_int_equal(tt_u32(r[0].data + 4), 5);
	assert_int_equal(tt_u64(r[0].data + 8), elf_st.st_ino);
	assert_int_equal(tt_u32(r[0].data + 16), kdev_of(&elf_st));
	if (blen) {	/* cross-checked with lib/sym/sym.c's own note reader */
		assert_int_equal(tt_u32(r[0].data + 20), blen);
		assert_memory_equal(r[0].data + 24, bid, blen);
	}
	assert_int_equal(tt_u32(r[0].data + 44), UST_ABI_DATA_LOC(48, plen));
	assert_string_equal((char *)r[0].data + 48, elf_path);

	assert_int_equal(tt_u32(r[1].data + 20), 0);
	assert_memory_equal(r[1].data + 24, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20);
	assert_int_equal(tt_u32(r[1].data + 44), UST_ABI_DATA_LOC(48, 17));
	assert_string_equal((char *)r[1].data + 48, "/opt/stored/path");
	assert_int_equal(r[1].size, 48 + 20);
	tt_free_records(r, n);

	expected = fmt("cpus=1\n"
		       "           <...>-5     [000]     0.000000: user_mapping:         dev=%u:%u ino=%llu path=%s\n"
		       "           <...>-5     [000]     0.000000: user_mapping:         dev=%u:%u ino=%llu path=/opt/stored/path\n",
		       UST_ABI_KDEV_MAJOR(kdev_of(&elf_st)), UST_ABI_KDEV_MINOR(kdev_of(&elf_st)),
		       (unsigned long long)elf_st.st_ino, elf_path,
		       UST_ABI_KDEV_MAJOR(kdev_of(&elf_st)), UST_ABI_KDEV_MINOR(kdev_of(&elf_st)),
		       (unsigned long long)elf_st.st_ino);
	expect_report(out, expected);
	free(expected);
}

/* ---------------------------------------------------------------- errors */

static void test_spec_errors(void **state)
{
	static const struct { const char *spec; const char *msg; } cases[] = {
		{ "bogus 1\n", "<stdin>:1: unknown keyword \"bogus\"" },
		{ "# c\n\ncpus 0\n", "<stdin>:3: cpus 0: expected 1..4096" },
		{ "cpus x\n", "<stdin>:1: cpus x: expected" },
		{ "cookie cpu=0 ts=1 pid=1 cookie=1\ncpus 2\n", "<stdin>:2: cpus must come before records" },
		{ "cookie cpu=0 ts=1 pid=1 cookie=1\nclock mono\n", "<stdin>:2: clock must come before records" },
		{ "cookie cpu=0 ts=1 pid=1\n", "<stdin>:1: cookie: cookie= is required" },
		{ "cookie cpu=0 pid=1 cookie=1\n", "<stdin>:1: cookie: ts= is required" },
		{ "cookie cpu=0 ts=1 pid=1 cookie=1 extra=2\n", "<stdin>:1: cookie: unknown key extra=" },
		{ "cookie cpu=0 ts=1 ts=2 pid=1 cookie=1\n", "<stdin>:1: ts= given twice" },
		{ "cookie cpu=0 ts=1 pid=1 cookie=0x\n", "<stdin>:1: cookie=0x: not a number" },
		{ "cookie cpu=0 ts=1 pid=1 cookie=-1\n", "<stdin>:1: cookie=-1: not a number" },
		{ "cookie cpu=0 ts=1 pid=1 cookie\n", "<stdin>:1: expected KEY=VALUE, got \"cookie\"" },
		{ "cookie cpu=1 ts=1 pid=1 cookie=1\n", "<stdin>:1: no CPU 1 (the trace has 1)" },
		{ "cookie cpu=0 ts=1 pid=1 buf=nope cookie=1\n", "<stdin>:1: buf=nope: no such buffer" },
		{ "cookie cpu=0 ts=5 pid=1 cookie=1\ncookie cpu=0 ts=4 pid=1 cookie=1\n",
		  "<stdin>:2: buffer top cpu 0: timestamp 4 is before the previous record's 5" },
		{ "buffer b\nbuffer b\n", "<stdin>:2: buffer \"b\" declared twice" },
		{ "format nope/nope\n", "<stdin>:1: unknown format \"nope/nope\"" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1\nformat ftrace/user_unwind_stack.stack-only\n",
		  "<stdin>:1: stack: frames= is required" },
		{ "format ftrace/user_unwind_stack\nformat ftrace/user_unwind_stack.stack-only\n",
		  "<stdin>:2: format \"ftrace/user_unwind_stack.stack-only\" clashes" },
		{ "cmdline x y\n", "<stdin>:1: cmdline PID COMM" },
		{ "event cpu=0 ts=1 pid=1 sys=sched\n", "<stdin>:1: event: sys= and name= are required" },
		{ "event cpu=0 ts=1 pid=1 sys=no name=such\n", "<stdin>:1: no format for no/such" },
		{ "event cpu=0 ts=1 pid=1 sys=sched name=sched_switch bogus=1\n",
		  "<stdin>:1: sched/sched_switch has no field \"bogus\"" },
		{ "event cpu=0 ts=1 pid=1 sys=sched name=sched_switch prev_comm=01234567890123456\n",
		  "<stdin>:1: prev_comm: longer than 16 bytes" },
		{ "event cpu=0 ts=1 pid=1 sys=sched name=sched_switch prev_pid=abc\n",
		  "<stdin>:1: prev_pid=abc: not a number" },
		{ "event cpu=0 ts=1 pid=1 sys=raw_syscalls name=sys_enter args=1,2,3,4,5,6,7\n",
		  "<stdin>:1: args: more than 6 elements" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:zz\n", "<stdin>:1: bad frame \"raw:zz\"" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=kdev:1:2:3@0x1\n", "<stdin>:1: bad frame" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=/no/such/file@0x10\n",
		  "<stdin>:1: /no/such/file: No such file or directory" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=nocolon\n", "<stdin>:1: bad frame \"nocolon\"" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:1 corrupt=weird\n",
		  "<stdin>:1: corrupt=weird: unknown" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:1 corrupt=truncate:0\n",
		  "<stdin>:1: corrupt=truncate:0: truncate:N needs N >= 1" },
		{ "stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:1 corrupt=truncate:100\n",
		  "<stdin>:1: corrupt=truncate:100: the record has only 52 bytes" },
		{ "format ftrace/user_unwind_stack.stack-only\n"
		  "stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:1 corrupt=dev_oob\n",
		  "<stdin>:2: corrupt=dev_oob needs the layout with inodes and dev" },
		{ "mapping cpu=0 ts=1 pid=1\n", "<stdin>:1: mapping: path= is required" },
		{ "mapping cpu=0 ts=1 pid=1 path=/no/such buildid=none\n", "<stdin>:1: /no/such: No such file" },
		{ "mapping cpu=0 ts=1 pid=1 path=/ buildid=yes\n", "<stdin>:1: buildid=yes: only buildid=none" },
		{ "lost cpu=0\n", "<stdin>:1: lost: count= is required" },
		{ "lost cpu=0 count=1 ts=5\n", "<stdin>:1: lost: unknown key ts=" },
		{ "cookie cpu=0 ts=1 pid=1 cookie=\"1\n", "<stdin>:1: unterminated quote" },
	};
	const char *out = tt_path("err.dat");
	size_t i;
	char *err;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unlink(out);
		if (mktrace(cases[i].spec, out, &err) != 2 || !strstr(err, cases[i].msg))
			fail_msg("case %zu: wanted \"%s\", got \"%s\"", i, cases[i].msg, err);
		/* one line, and no half-written trace left behind */
		assert_non_null(strchr(err, '\n'));
		assert_ptr_equal(strchr(err, '\n') + 1, err + strlen(err));
		assert_int_equal(access(out, F_OK), -1);
		free(err);
	}

	/* a stack too large for a page: 32 + 250 * 20 bytes */
	{
		char *spec = malloc(64 + 250 * 6), *p;

		p = spec + sprintf(spec, "stack cpu=0 ts=1 pid=1 cookie=1 frames=raw:1");
		for (i = 1; i < 250; i++)
			p += sprintf(p, ",raw:1");
		strcpy(p, "\n");
		assert_int_equal(mktrace(spec, out, &err), 2);
		assert_non_null(strstr(err, "<stdin>:1: buffer top cpu 0: a record of 5032 bytes "
					    "does not fit a page (1..4072)"));
		free(err);
		free(spec);
	}
}

static void test_files_and_usage(void **state)
{
	const char *spec = tt_path("in.spec"), *out = tt_path("file.dat");
	const char *argv_file[] = { tt.mktrace, spec, out, NULL };
	const char *argv_nospec[] = { tt.mktrace, tt_path("missing.spec"), out, NULL };
	const char *argv_usage[] = { tt.mktrace, NULL };
	const char *argv_badout[] = { tt.mktrace, spec, "/no/such/dir/x.dat", NULL };
	char *o, *e;

	(void)state;
	tt_write_file(spec, "cookie cpu=0 ts=1 pid=1 cookie=1\n");
	assert_int_equal(tt_run(argv_file, NULL, &o, &e), 0);
	free(o);
	free(e);
	assert_true(tt_dump_valid(out));
	assert_int_equal(tt_run(argv_nospec, NULL, &o, &e), 2);
	assert_non_null(strstr(e, "missing.spec"));
	free(o);
	free(e);
	assert_int_equal(tt_run(argv_usage, NULL, &o, &e), 2);
	assert_non_null(strstr(e, "usage:"));
	free(o);
	free(e);
	assert_int_equal(tt_run(argv_badout, NULL, &o, &e), 1);
	assert_non_null(strstr(e, "/no/such/dir/x.dat"));
	free(o);
	free(e);
	/* an empty spec is an empty, valid trace */
	mktrace_ok("# nothing\n", out);
	expect_report(out, "cpus=1\n");
}

/* ---------------------------------------------------------------- bench */

static void test_bench(void **state)
{
	const char *out = tt_path("bench.dat");
	const char *argv[] = { tt.mktrace, "--bench", "3000", "400", out, NULL };
	const char *argv_bad[] = { tt.mktrace, "--bench", "10", "11", out, NULL };
	const char *argv_bin[] = { tt.mktrace, "--bench", "10", "2", out, "--binary",
				   "/no/such", NULL };
	int n, i, k, nr_ev = 0, nr_ck = 0, nr_st = 0, nr_map = 0, moved = 0;
	uint64_t cookies[4000];
	struct tt_rec *r;
	char *o, *e;

	(void)state;
	assert_int_equal(tt_run(argv, NULL, &o, &e), 0);
	free(o);
	free(e);
	assert_true(tt_dump_valid(out));
	n = tt_read_records(out, 2, &r);
	for (i = 0; i < n; i++) {
		uint16_t id = tt_u16(r[i].data);
		struct stack_rec s;

		if (id == UST_ABI_ID_UNWIND_COOKIE) {
			assert_true(nr_ck < 4000);
			cookies[nr_ck++] = tt_u64(r[i].data + UST_ABI_COOKIE_OFF);
		} else if (id == UST_ABI_ID_UNWIND_STACK) {
			unsigned int len;

			nr_st++;
			get_stack_hdr(&r[i], &s);
			len = UST_ABI_DATA_LOC_LEN(s.stack_loc) / 8;
			assert_true(len >= 8 && len <= 24);
			assert_int_equal(UST_ABI_DATA_LOC_LEN(s.inodes_loc), len * 8);
			assert_int_equal(UST_ABI_DATA_LOC_LEN(s.dev_loc), len * 4);
			for (k = 0; k < (int)len; k++)
				assert_true(tt_u64(r[i].data + UST_ABI_DATA_LOC_OFF(s.inodes_loc) +
						   k * 8) != 0);
			moved += ust_abi_cookie_cpu(s.cookie) != (unsigned int)r[i].cpu;
		} else if (id == UST_ABI_ID_USER_MAPPING) {
			nr_map++;
		} else {
			nr_ev++;
		}
	}
	assert_int_equal(nr_ev, 3000);
	assert_int_equal(nr_ck, 3000);
	assert_int_equal(nr_st, 400);
	assert_int_equal(nr_map, 2);
	assert_true(moved > 0);		/* some stacks arrive on the other CPU */
	/* every stack's cookie was handed out before */
	for (i = 0; i < n; i++) {
		struct stack_rec s;

		if (tt_u16(r[i].data) != UST_ABI_ID_UNWIND_STACK)
			continue;
		get_stack_hdr(&r[i], &s);
		for (k = 0; k < nr_ck && cookies[k] != s.cookie; k++)
			;
		assert_true(k < nr_ck);
		assert_true(ust_abi_cookie_valid(s.cookie));
	}
	tt_free_records(r, n);

	assert_int_equal(tt_run(argv_bad, NULL, &o, &e), 2);
	assert_non_null(strstr(e, "NSTACKS"));
	free(o);
	free(e);
	assert_int_equal(tt_run(argv_bin, NULL, &o, &e), 2);
	assert_non_null(strstr(e, "/no/such"));
	free(o);
	free(e);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keywords),
		cmocka_unit_test(test_event_layout),
		cmocka_unit_test(test_stack_frames),
		cmocka_unit_test(test_stack_symbol),
		cmocka_unit_test(test_stack_only),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_mapping),
		cmocka_unit_test(test_spec_errors),
		cmocka_unit_test(test_files_and_usage),
		cmocka_unit_test(test_bench),
	};
	int ret = tt_init(argc, argv, true);

	if (ret)
		return ret;
	if (!realpath(tt.mktrace, elf_path) || stat(elf_path, &elf_st) < 0) {
		perror(tt.mktrace);
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	tt_fini();
	return ret;
}
