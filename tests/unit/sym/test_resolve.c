// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_res: each source on its own (trace records, /proc/self/maps, the
 * directory index), their precedence, the kernel dev_t conversion on
 * this machine's devices, the regular-file-only rule and miss caching.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/abi.h"
#include "ustitch/render.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"
#include "util.h"

static uint32_t kdev_of(const struct stat *st)
{
	return ust_res_dev_to_kdev(st->st_dev);
}

static void stat_ok(const char *path, struct stat *st)
{
	if (stat(path, st) != 0)
		fail_msg("stat %s", path);
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The root file system's device as mountinfo shows it (decimal MAJ:MIN). */
static void test_kdev_root(void **state)
{
	unsigned int maj = 0, min = 0;
	char line[4096];
	bool found = false;
	struct stat st;
	FILE *fp;

	(void)state;
	stat_ok("/", &st);
	fp = fopen("/proc/self/mountinfo", "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		char mnt[4096];

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
		    strcmp(mnt, "/") == 0)
			found = true, fclose(fp), fp = NULL;
		if (found)
			break;
	}
	if (fp)
		fclose(fp);
	assert_true(found);
	assert_int_equal(ust_res_dev_to_kdev(st.st_dev), UST_ABI_MKKDEV(maj, min));
	assert_int_equal(ust_res_kdev_to_dev(UST_ABI_MKKDEV(maj, min)), st.st_dev);
	assert_int_equal(major(st.st_dev), maj);
	assert_int_equal(minor(st.st_dev), min);

	/* Large numbers: the kernel's 12/20 split, not glibc's. */
	assert_int_equal(ust_res_dev_to_kdev(makedev(259, 0x12345)), (259U << 20) | 0x12345);
	assert_int_equal(ust_res_kdev_to_dev((8U << 20) | 1), makedev(8, 1));
}

/* libc as this process maps it: its device numbers, inode and path. */
static void mapped_libc(unsigned int *maj, unsigned int *min, unsigned long long *ino, char *path)
{
	char line[4096];
	FILE *fp;

	*ino = 0;
	fp = fopen("/proc/self/maps", "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, "/libc.so") &&
		    sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %4095s", maj, min, ino, path) == 4)
			break;
	fclose(fp);
	assert_true(*ino != 0);
}

/* A library this process has mapped, found from /proc/self/maps. */
static void test_proc_libc(void **state)
{
	struct ust_res_opts o = { .no_index = true, .no_handle = true, .no_local_dirs = true };
	unsigned int maj, min;
	unsigned long long ino = 0;
	char path[4096] = "";
	struct ust_res_hit hit;
	struct ust_res *r;

	(void)state;
	mapped_libc(&maj, &min, &ino, path);

	r = ust_res_new(&o);
	assert_non_null(r);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(maj, min), ino, &hit), 0);
	assert_string_equal(hit.source, "proc");
	assert_true(same_file(hit.path, path));
	assert_null(hit.build_id);
	/* Cached: the same strings again. */
	{
		struct ust_res_hit again;

		assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(maj, min), ino, &again), 0);
		assert_ptr_equal(again.path, hit.path);
	}
	ust_res_free(r);

	/* With /proc off (and no index) nothing finds it. */
	o.no_proc = true;
	r = ust_res_new(&o);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(maj, min), ino, &hit), -ENOENT);
	assert_null(hit.path);
	ust_res_free(r);
}

/* @f's two frames rendered by a render of its own (no kept lines) into @out. */
static void render_fresh(const struct ust_render *like, const struct ust_dec_frame *f,
			 struct ust_sb *out)
{
	struct ust_render r = { .opts = like->opts, .res = like->res, .sym = like->sym };

	ust_sb_reset(out);
	ust_render_frames(&r, f, 2, true, out);
	ust_render_fini(&r);
}

/*
 * The frame lines a render keeps (render.c) print as a render that kept
 * none: 3,000 offsets of libc, each as frame 0 and as a return address,
 * twice over (their slots shared and replaced), then with the symbols off
 * and with another symbol cache in place.
 */
static void test_render_lines(void **state)
{
	struct ust_res_opts o = { .no_index = true, .no_handle = true, .no_local_dirs = true };
	struct ust_render r = { .opts = { .symbols = true } };
	struct ust_sym_cache *sym2;
	struct ust_dec_frame f[2];
	unsigned int maj, min, pass, i, named = 0, hex = 0;
	uint64_t named_off = 0;
	unsigned long long ino = 0;
	char path[4096] = "";
	struct ust_sb a, b;
	struct stat st;

	(void)state;
	mapped_libc(&maj, &min, &ino, path);
	stat_ok(path, &st);
	r.res = ust_res_new(&o);
	r.sym = ust_sym_cache_new(NULL);
	assert_non_null(r.res);
	assert_non_null(r.sym);
	ust_sb_init(&a);
	ust_sb_init(&b);
	memset(f, 0, sizeof(f));
	f[0].kdev = f[1].kdev = UST_ABI_MKKDEV(maj, min);
	f[0].ino = f[1].ino = ino;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < 3000; i++) {
			f[0].off = f[1].off = (uint64_t)i * ((uint64_t)st.st_size / 3000) + 1;
			ust_sb_reset(&a);
			ust_render_frames(&r, f, 2, true, &a);
			render_fresh(&r, f, &b);
			assert_string_equal(ust_sb_str(&a), ust_sb_str(&b));
			if (pass == 0 && strstr(ust_sb_str(&a), "\n=> 0x"))
				hex++;
			else if (pass == 0 && !named++)
				named_off = f[0].off;
		}
	}
	/* Both kinds of line were kept: functions, and offsets of no symbol. */
	assert_true(named > 100);
	assert_true(hex > 0);
	/* No symbols now: the lines kept with names are not printed. */
	f[0].off = f[1].off = named_off;
	ust_sb_reset(&a);
	ust_render_frames(&r, f, 2, true, &a);
	assert_null(strstr(ust_sb_str(&a), "\n=> 0x"));
	r.opts.symbols = false;
	ust_sb_reset(&a);
	ust_render_frames(&r, f, 2, true, &a);
	render_fresh(&r, f, &b);
	assert_string_equal(ust_sb_str(&a), ust_sb_str(&b));
	assert_non_null(strstr(ust_sb_str(&a), "\n=> 0x"));
	/* Another cache in place (the plugin's, once it knows the trace). */
	r.opts.symbols = true;
	sym2 = ust_sym_cache_new(NULL);
	assert_non_null(sym2);
	ust_sym_cache_free(r.sym);
	r.sym = sym2;
	for (i = 0; i < 3000; i += 7) {
		f[0].off = f[1].off = (uint64_t)i * ((uint64_t)st.st_size / 3000) + 1;
		ust_sb_reset(&a);
		ust_render_frames(&r, f, 2, true, &a);
		render_fresh(&r, f, &b);
		assert_string_equal(ust_sb_str(&a), ust_sb_str(&b));
	}
	ust_render_fini(&r);
	ust_sb_fini(&a);
	ust_sb_fini(&b);
	ust_sym_cache_free(r.sym);
	ust_res_free(r.res);
}

struct tree {
	char *dir;
	char lib[4096], link[4096], fifo[4096], sub[4096];
};

static void make_tree(struct tree *t)
{
	char loop[4096];

	t->dir = tu_mkdtemp();
	assert_non_null(t->dir);
	snprintf(t->sub, sizeof(t->sub), "%s/sub", t->dir);
	assert_int_equal(mkdir(t->sub, 0755), 0);
	snprintf(t->lib, sizeof(t->lib), "%s/sub/libfoo.so.1", t->dir);
	assert_int_equal(tu_write(t->lib, "not really a library", 20), 0);
	/* The symlink sorts first in most directories: the real name must win. */
	snprintf(t->link, sizeof(t->link), "%s/a-link-to-libfoo.so", t->dir);
	assert_int_equal(symlink(t->lib, t->link), 0);
	snprintf(t->fifo, sizeof(t->fifo), "%s/sub/fifo", t->dir);
	assert_int_equal(mkfifo(t->fifo, 0600), 0);
	snprintf(loop, sizeof(loop), "%s/sub/loop", t->dir);
	assert_int_equal(symlink("..", loop), 0);
	snprintf(loop, sizeof(loop), "%s/self", t->dir);
	assert_int_equal(symlink(".", loop), 0);
}

/* A file in an extra directory, found by the index; non-files never. */
static void test_index_extra_dir(void **state)
{
	struct tree t;
	const char *dirs[2];
	struct ust_res_opts o = { .no_proc = true, .extra_dirs = dirs, .nr_extra_dirs = 2,
				  .no_handle = true, .no_local_dirs = true };
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat st;

	(void)state;
	make_tree(&t);
	dirs[0] = t.dir;
	dirs[1] = t.dir;	/* listed twice: walked once */
	r = ust_res_new(&o);
	stat_ok(t.lib, &st);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "index");
	assert_string_equal(hit.path, t.lib);

	/* A FIFO and a directory have inodes too: never returned. */
	stat_ok(t.fifo, &st);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);
	assert_null(hit.path);
	stat_ok(t.sub, &st);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);

	/* A system library through the default directories. */
	stat_ok("/bin/sh", &st);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "index");
	assert_true(same_file(hit.path, "/bin/sh"));
	ust_res_free(r);
	tu_rmtree(t.dir);
	free(t.dir);
}

/* max_files bounds the index. */
static void test_index_bound(void **state)
{
	char *dir = tu_mkdtemp(), path[4096];
	const char *dirs[] = { dir };
	struct ust_res_opts o = { .no_proc = true, .extra_dirs = dirs, .nr_extra_dirs = 1,
				  .max_files = 3, .no_handle = true, .no_local_dirs = true };
	struct ust_res_hit hit;
	struct ust_res *r;
	int found = 0;

	(void)state;
	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		assert_int_equal(tu_write(path, "x", 1), 0);
	}
	r = ust_res_new(&o);
	for (int i = 0; i < 10; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		stat_ok(path, &st);
		if (ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit) == 0)
			found++;
	}
	assert_int_equal(found, 3);
	ust_res_free(r);
	tu_rmtree(dir);
	free(dir);
}

/* Trace records come first, even when the index would also know the file. */
static void test_record_precedence(void **state)
{
	struct tree t;
	const char *dirs[1];
	struct ust_res_opts o = { .no_proc = true, .extra_dirs = dirs, .nr_extra_dirs = 1,
				  .no_handle = true, .no_local_dirs = true };
	const uint8_t bid[] = { 1, 2, 3, 4 };
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat st;

	(void)state;
	make_tree(&t);
	dirs[0] = t.dir;
	r = ust_res_new(&o);
	stat_ok(t.lib, &st);
	assert_int_equal(ust_res_add_mapping(r, kdev_of(&st), st.st_ino, t.link, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "trace");
	assert_string_equal(hit.path, t.link);
	assert_string_equal(hit.name, t.link);

	/* A build-id in the record that the file does not have: never that file. */
	assert_int_equal(ust_res_add_mapping(r, kdev_of(&st), st.st_ino, t.link, bid,
					     sizeof(bid)), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);
	assert_string_equal(hit.note, "not the traced file: it has no build-id");
	assert_int_equal(hit.build_id_len, sizeof(bid));
	assert_memory_equal(hit.build_id, bid, sizeof(bid));

	/* A record naming a FIFO for that inode: not a regular file, not used. */
	assert_int_equal(ust_res_add_mapping(r, kdev_of(&st), st.st_ino, t.fifo, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "index");
	assert_string_equal(hit.path, t.lib);
	assert_int_equal(ust_res_add_mapping(NULL, 1, 1, "x", NULL, 0), -EINVAL);
	assert_int_equal(ust_res_add_mapping(r, 1, 1, NULL, NULL, 0), -EINVAL);
	ust_res_free(r);
	tu_rmtree(t.dir);
	free(t.dir);
}

/* A recorded file that is gone is still named, with its build-id. */
static void test_record_gone(void **state)
{
	struct ust_res_opts o = { .no_proc = true, .no_index = true, .no_handle = true };
	const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct ust_res_hit hit;
	struct ust_res *r = ust_res_new(&o);

	(void)state;
	assert_int_equal(ust_res_add_mapping(r, UST_ABI_MKKDEV(254, 7), 4242,
					     "/nonexistent/usr/lib/libgone.so.1", bid,
					     sizeof(bid)), 0);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(254, 7), 4242, &hit), 0);
	assert_string_equal(hit.path, "/nonexistent/usr/lib/libgone.so.1");
	assert_string_equal(hit.source, "trace");
	assert_int_equal(hit.build_id_len, sizeof(bid));
	assert_memory_equal(hit.build_id, bid, sizeof(bid));
	ust_res_free(r);
}

/*
 * A record whose path now holds another inode: used only when that file
 * has the recorded build-id; otherwise a miss that still carries the id.
 */
static void test_record_other_inode(void **state)
{
	struct ust_res_opts o = { .no_proc = true, .no_index = true, .no_handle = true };
	const char *lib = tu_env("UST_LIBUSTTEST");
	uint8_t bid[64];
	size_t len = ust_sym_read_build_id(lib, bid, sizeof(bid));
	struct ust_res_hit hit;
	struct ust_res *r = ust_res_new(&o);

	(void)state;
	assert_true(len > 0);
	assert_int_equal(ust_res_add_mapping(r, UST_ABI_MKKDEV(254, 9), 1, lib, bid, len), 0);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(254, 9), 1, &hit), 0);
	assert_string_equal(hit.path, lib);
	assert_string_equal(hit.source, "trace");

	bid[0] ^= 0xff;
	assert_int_equal(ust_res_add_mapping(r, UST_ABI_MKKDEV(254, 9), 2, lib, bid, len), 0);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(254, 9), 2, &hit), -ENOENT);
	assert_null(hit.path);
	assert_null(hit.source);
	assert_int_equal(hit.build_id_len, len);

	assert_int_equal(ust_res_add_mapping(r, UST_ABI_MKKDEV(254, 9), 3, lib, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(254, 9), 3, &hit), -ENOENT);
	ust_res_free(r);
}

/*
 * Misses are cached: a file mapped after the first lookup is not seen by
 * that ust_res (a fresh one sees it), until a record for it arrives.
 */
static void test_miss_cached(void **state)
{
	struct ust_res_opts o = { .no_index = true, .no_handle = true, .no_local_dirs = true };
	char *dir = tu_mkdtemp(), path[4096];
	struct ust_res_hit hit, again;
	struct ust_res *r, *r2;
	struct stat st;
	void *map;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/mapped-later", dir);
	assert_int_equal(tu_write(path, "0123456789", 10), 0);
	stat_ok(path, &st);

	r = ust_res_new(&o);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	map = mmap(NULL, 10, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);

	r2 = ust_res_new(&o);
	assert_int_equal(ust_res_lookup(r2, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "proc");
	assert_string_equal(hit.path, path);
	ust_res_free(r2);

	/* A record replaces the cached miss; earlier answers stay readable. */
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &again), -ENOENT);
	assert_int_equal(ust_res_add_mapping(r, kdev_of(&st), st.st_ino, path, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "trace");
	assert_null(again.path);
	ust_res_free(r);

	munmap(map, 10);
	close(fd);
	tu_rmtree(dir);
	free(dir);
}

static void test_defaults(void **state)
{
	struct ust_res *r = ust_res_new(NULL);
	struct ust_res_hit hit;

	(void)state;
	assert_non_null(r);
	/* Inode 0 is never a file. */
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(8, 1), 0, &hit), -ENOENT);
	assert_int_equal(ust_res_lookup(r, UST_ABI_MKKDEV(8, 1), 0, NULL), -ENOENT);
	assert_int_equal(ust_res_lookup(NULL, 1, 1, &hit), -ENOENT);
	ust_res_free(r);
	ust_res_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kdev_root),
		cmocka_unit_test(test_proc_libc),
		cmocka_unit_test(test_render_lines),
		cmocka_unit_test(test_index_extra_dir),
		cmocka_unit_test(test_index_bound),
		cmocka_unit_test(test_record_precedence),
		cmocka_unit_test(test_record_gone),
		cmocka_unit_test(test_record_other_inode),
		cmocka_unit_test(test_miss_cached),
		cmocka_unit_test(test_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
