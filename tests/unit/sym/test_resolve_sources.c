// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_res, the sources of issue 16: files opened by handle (found, moved,
 * deleted, linked into a build-id cache, on tmpfs, without
 * CAP_DAC_READ_SEARCH), /proc/PID/map_files,
 * the trace's own directory, the identity checks against the trace's time
 * (a file modified after it is uncertain, one created after it is not the
 * traced file) and the archive, hostile manifests included.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Scratch paths under $TMPDIR are short; gcc cannot know that. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"
#include "util.h"

static const struct ust_res_opts handle_only = { .no_proc = true, .no_index = true,
						  .no_local_dirs = true };

static void stat_ok(const char *path, struct stat *st)
{
	if (stat(path, st) != 0)
		fail_msg("stat %s", path);
}

static uint32_t kdev_of(const struct stat *st)
{
	return ust_res_dev_to_kdev(st->st_dev);
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

static char *summary(struct ust_res *r)
{
	struct ust_sb sb;
	char *s;

	ust_sb_init(&sb);
	ust_res_summary(r, &sb);
	s = strdup(ust_sb_str(&sb));
	ust_sb_fini(&sb);
	return s;
}

/* Found by its inode alone, named by the kernel; then moved; then deleted. */
static void test_handle_found_moved_deleted(void **state)
{
	char *dir = tu_mkdtemp(), path[4096], moved[4096];
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/libcopy.so", dir);
	snprintf(moved, sizeof(moved), "%s/sub-moved.so", dir);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), path), 0);
	stat_ok(path, &st);

	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "handle");
	assert_string_equal(hit.name, path);
	assert_false(hit.uncertain);
	assert_null(hit.note);
	ust_res_free(r);

	assert_int_equal(rename(path, moved), 0);
	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "handle");
	assert_string_equal(hit.name, moved);
	ust_res_free(r);

	/* Recorded under its old path: the record names it, the handle opens it. */
	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_add_mapping(r, kdev_of(&st), st.st_ino, path, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "handle");
	assert_string_equal(hit.name, path);
	ust_res_free(r);

	assert_int_equal(unlink(moved), 0);
	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);
	assert_null(hit.path);
	assert_string_equal(hit.note, "no longer exists");
	ust_res_free(r);
	tu_rmtree(dir);
	free(dir);
}

/* mkdir -p of @path's directory. */
static void mkdirs_of(const char *path)
{
	char d[4096], *p;

	snprintf(d, sizeof(d), "%s", path);
	for (p = strchr(d + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(d, 0755) && errno != EEXIST)
			fail_msg("mkdir %s", d);
		*p = '/';
	}
}

/*
 * A file hard-linked into a build-id cache (perf's ~/.debug keeps links to
 * the files it saw), the cache's link made last: the kernel names the
 * handle's fd by it.  perf's layout gives the path it came from, which
 * still names the file; a .build-id/ link alone is the last resort, and
 * said so at the end.
 */
static void test_handle_build_id_cache(void **state)
{
	char *dir = tu_mkdtemp(), path[4096], perf[8192], bid[4096], *s, want[12288];
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/lib/libfoo.so", dir);
	snprintf(perf, sizeof(perf), "%s/home/.debug%s/0123456789abcdef/elf", dir, path);
	snprintf(bid, sizeof(bid), "%s/cache/.build-id/01/23456789abcdef", dir);
	mkdirs_of(path);
	mkdirs_of(perf);
	mkdirs_of(bid);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), path), 0);
	stat_ok(path, &st);
	assert_int_equal(link(path, perf), 0);

	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "handle");
	assert_string_equal(hit.name, path);
	assert_false(hit.name_by_handle);
	s = summary(r);
	assert_string_equal(s, "");
	free(s);
	ust_res_free(r);

	/* Renamed: perf's link no longer leads back; a .build-id/ link made last. */
	snprintf(want, sizeof(want), "%s/lib/libfoo-renamed.so", dir);
	assert_int_equal(rename(path, want), 0);
	assert_int_equal(link(want, bid), 0);
	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "handle");
	assert_string_equal(hit.name, bid);
	assert_true(hit.name_by_handle);
	s = summary(r);
	snprintf(want, sizeof(want),
		 "ustitch: %s (dev %u:%u ino %llu): named by the link the kernel gave its file handle, one of 3: no trace record, live process or searched directory names it\n",
		 bid, major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
	assert_string_equal(s, want);
	free(s);
	ust_res_free(r);
	tu_rmtree(dir);
	free(dir);
}

/* Without CAP_DAC_READ_SEARCH: said once at the end; search_dirs still works. */
static void test_handle_nocap(void **state)
{
	char *dir = tu_mkdtemp(), path[4096];
	const char *dirs[1] = { dir };
	struct stat st;
	int status;
	pid_t pid;

	(void)state;
	snprintf(path, sizeof(path), "%s/libcopy.so", dir);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), path), 0);
	stat_ok(path, &st);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct ust_res_opts o = handle_only;
		struct ust_res_hit hit;
		struct ust_res *r;
		char *s;
		int bad = 0;

		if (syscall(SYS_capget, &h, d) != 0)
			_exit(10);
		d[0].effective &= ~(1U << CAP_DAC_READ_SEARCH);
		d[0].permitted &= ~(1U << CAP_DAC_READ_SEARCH);
		if (syscall(SYS_capset, &h, d) != 0)
			_exit(11);
		r = ust_res_new(&o);
		bad |= ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit) != -ENOENT;
		bad |= (ust_res_lookup(r, kdev_of(&st), st.st_ino + 1, &hit) != -ENOENT) << 1;
		s = summary(r);
		if (strcmp(s, "ustitch: 2 files were not opened by handle: open_by_handle_at needs CAP_DAC_READ_SEARCH (report as root, or name their directories with -O ustitch:search_dirs=DIR)\n")) {
			fprintf(stderr, "summary: '%s'\n", s);
			bad |= 4;
		}
		free(s);
		ust_res_free(r);
		o.no_index = false;
		o.extra_dirs = dirs;
		o.nr_extra_dirs = 1;
		o.no_default_dirs = true;
		r = ust_res_new(&o);
		bad |= (ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit) != 0 ||
			strcmp(hit.source, "index") || strcmp(hit.name, path)) << 3;
		ust_res_free(r);
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	tu_rmtree(dir);
	free(dir);
}

/* tmpfs refuses handles made from inode numbers: the trace's directory finds it. */
static void test_tmpfs_local(void **state)
{
	char dir[] = "/dev/shm/ustitch-res-XXXXXX", path[4096], trace[4096];
	struct ust_res_opts o = handle_only;
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat st;

	(void)state;
	if (!mkdtemp(dir))
		skip();
	snprintf(path, sizeof(path), "%s/libcopy.so", dir);
	snprintf(trace, sizeof(trace), "%s/trace.dat", dir);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), path), 0);
	assert_int_equal(tu_write(trace, "x", 1), 0);
	stat_ok(path, &st);
	r = ust_res_new(&o);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), -ENOENT);
	assert_null(hit.note);
	ust_res_free(r);

	o.no_local_dirs = false;
	r = ust_res_new(&o);
	assert_int_equal(ust_res_set_trace(r, trace, NULL, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "local");
	assert_string_equal(hit.name, path);
	ust_res_free(r);
	tu_rmtree(dir);
}

/* No build-id to compare: the times against the trace's decide. */
static void test_identity_times(void **state)
{
	char *dir = tu_mkdtemp(), path[4096], later[4096], trace[4096], *s, want[8192];
	struct ust_res_hit hit;
	struct ust_res *r;
	struct timespec ts[2];
	struct stat st, tst, lst;

	(void)state;
	snprintf(path, sizeof(path), "%s/prog", dir);
	snprintf(later, sizeof(later), "%s/created-later", dir);
	snprintf(trace, sizeof(trace), "%s/trace.dat", dir);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), path), 0);
	pause_ms(30);
	assert_int_equal(tu_write(trace, "x", 1), 0);
	stat_ok(path, &st);
	stat_ok(trace, &tst);

	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_set_trace(r, trace, NULL, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_false(hit.uncertain);
	s = summary(r);
	assert_string_equal(s, "");
	free(s);
	ust_res_free(r);

	/* Changed after the trace, same inode: named, but uncertain. */
	ts[0] = tst.st_mtim;
	ts[1] = tst.st_mtim;
	ts[1].tv_sec += 10;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_set_trace(r, trace, NULL, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_true(hit.uncertain);
	assert_string_equal(hit.note, "modified after the trace was recorded");
	s = summary(r);
	snprintf(want, sizeof(want), "ustitch: %s (dev %u:%u ino %lu): modified after the trace was recorded, and the trace has no build-id for it: its frames are marked =>?\n",
		 path, major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
	assert_string_equal(s, want);
	free(s);
	ust_res_free(r);

	/* Created after the trace: its inode number cannot be the traced file's. */
	pause_ms(30);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), later), 0);
	stat_ok(later, &lst);
	r = ust_res_new(&handle_only);
	assert_int_equal(ust_res_set_trace(r, trace, NULL, NULL, 0), 0);
	assert_int_equal(ust_res_lookup(r, kdev_of(&lst), lst.st_ino, &hit), -ENOENT);
	assert_string_equal(hit.note, "not the traced file: created after the trace (inode number reused)");
	ust_res_free(r);

	/* With the build-id in the trace, times do not matter: it matches. */
	{
		uint8_t bid[64];
		size_t len = ust_sym_read_build_id(later, bid, sizeof(bid));

		assert_true(len > 0);
		r = ust_res_new(&handle_only);
		assert_int_equal(ust_res_set_trace(r, trace, NULL, NULL, 0), 0);
		assert_int_equal(ust_res_add_mapping(r, kdev_of(&lst), lst.st_ino, "/gone/x.so",
						     bid, len), 0);
		assert_int_equal(ust_res_lookup(r, kdev_of(&lst), lst.st_ino, &hit), 0);
		assert_string_equal(hit.source, "handle");
		assert_string_equal(hit.name, "/gone/x.so");
		assert_false(hit.uncertain);
		ust_res_free(r);
	}
	tu_rmtree(dir);
	free(dir);
}

/* Deleted but still mapped: the handle opens it, and /proc/PID/map_files does. */
static void test_map_files_deleted(void **state)
{
	struct ust_res_opts o = { .no_index = true, .no_local_dirs = true };
	char *dir = tu_mkdtemp(), path[4096];
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat st;
	uint8_t a[64], b[64];
	size_t la, lb;
	void *map;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/mapped.so", dir);
	assert_int_equal(tu_copy(tu_env("UST_LIBUSTTEST"), path), 0);
	la = ust_sym_read_build_id(path, a, sizeof(a));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	stat_ok(path, &st);
	assert_int_equal(unlink(path), 0);

	/* Still referenced (by the mapping): open by handle, named as it was. */
	r = ust_res_new(&o);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "handle");
	assert_string_equal(hit.name, path);
	ust_res_free(r);

	o.no_handle = true;
	r = ust_res_new(&o);
	assert_int_equal(ust_res_lookup(r, kdev_of(&st), st.st_ino, &hit), 0);
	assert_string_equal(hit.source, "map_files");
	assert_string_equal(hit.name, path);
	lb = ust_sym_read_build_id(hit.path, b, sizeof(b));
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	ust_res_free(r);
	munmap(map, 4096);
	tu_rmtree(dir);
	free(dir);
}

static void put_file(const char *dir, const char *rel, const char *from)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_int_equal(tu_copy(from, p), 0);
}

static void mkdirs(const char *dir, const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* Only regular files inside the archive, at the names their keys give, are opened. */
static void test_archive_hostile(void **state)
{
	const char *lib = tu_env("UST_LIBUSTTEST");
	char *dir = tu_mkdtemp(), arch[4096], p[4096], hex[129], rel[512], man[16384];
	struct ust_res_opts o = handle_only;
	struct ust_res_hit hit;
	struct ust_res *r;
	struct stat lst, st;
	uint8_t bid[64], got[64];
	size_t len = ust_sym_read_build_id(lib, bid, sizeof(bid)), i;
	uint32_t kd = UST_ABI_MKKDEV(254, 77);
	char err[512];
	int n;

	(void)state;
	assert_true(len > 2);
	stat_ok(lib, &lst);
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	snprintf(arch, sizeof(arch), "%s/trace.dat.ustitch", dir);
	assert_int_equal(mkdir(arch, 0755), 0);
	mkdirs(arch, ".build-id");
	snprintf(rel, sizeof(rel), ".build-id/%.2s", hex);
	mkdirs(arch, rel);
	snprintf(rel, sizeof(rel), ".build-id/%.2s/%s", hex, hex + 2);
	put_file(arch, rel, lib);
	mkdirs(arch, ".by-inode");
	/* 1002: a symlink to the good copy.  1003: a FIFO.  1004: a size the
	 * file does not have.  1005: a display path with "..".  1006: its
	 * .build-id/xx is a symlink to a directory outside. */
	snprintf(p, sizeof(p), "%s/.by-inode/254-77-1002", arch);
	snprintf(rel, sizeof(rel), "%s/.build-id/%.2s/%s", arch, hex, hex + 2);
	assert_int_equal(symlink(rel, p), 0);
	snprintf(p, sizeof(p), "%s/.by-inode/254-77-1003", arch);
	assert_int_equal(mkfifo(p, 0600), 0);
	put_file(arch, ".by-inode/254-77-1004", lib);
	put_file(arch, ".by-inode/254-77-1005", lib);
	snprintf(p, sizeof(p), "%s/outside", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/outside/1234", dir);
	assert_int_equal(tu_copy(lib, p), 0);
	snprintf(p, sizeof(p), "%s/.build-id/ab", arch);
	snprintf(rel, sizeof(rel), "%s/outside", dir);
	assert_int_equal(symlink(rel, p), 0);
	n = snprintf(man, sizeof(man),
		     "# ustitch archive 1\n"
		     "254:77 1001 %s %llu /orig/libusttest.so\n"
		     "254:77 1002 - %llu /orig/symlinked.so\n"
		     "254:77 1003 - 0 /orig/fifo\n"
		     "254:77 1004 - 1099511627776 /orig/huge.so\n"
		     "254:77 1005 - %llu ../../etc/passwd\n"
		     "254:77 1006 ab1234 %llu /orig/outside.so\n"
		     "garbage line\n",
		     hex, (unsigned long long)lst.st_size, (unsigned long long)lst.st_size,
		     (unsigned long long)lst.st_size, (unsigned long long)lst.st_size);
	snprintf(p, sizeof(p), "%s/manifest", arch);
	assert_int_equal(tu_write(p, man, (size_t)n), 0);
	snprintf(p, sizeof(p), "%s/trace.dat", dir);
	assert_int_equal(tu_write(p, "x", 1), 0);

	r = ust_res_new(&o);
	/* TRACE.ustitch/ is found next to the trace. */
	assert_int_equal(ust_res_set_trace(r, p, NULL, err, sizeof(err)), 0);
	assert_null(ust_res_debug_root(r));	/* .build-id/ab is a symlink */
	assert_int_equal(ust_res_lookup(r, kd, 1001, &hit), 0);
	assert_string_equal(hit.source, "archive");
	assert_string_equal(hit.name, "/orig/libusttest.so");
	assert_int_equal(hit.build_id_len, len);
	assert_int_equal(ust_sym_read_build_id(hit.path, got, sizeof(got)), len);
	assert_memory_equal(got, bid, len);
	assert_int_equal(ust_res_lookup(r, kd, 1002, &hit), -ENOENT);
	assert_int_equal(ust_res_lookup(r, kd, 1003, &hit), -ENOENT);
	assert_int_equal(ust_res_lookup(r, kd, 1004, &hit), -ENOENT);
	assert_int_equal(ust_res_lookup(r, kd, 1005, &hit), 0);
	assert_string_equal(hit.name, "../../etc/passwd");
	assert_int_equal(stat(hit.path, &st), 0);
	{
		struct stat want;

		snprintf(rel, sizeof(rel), "%s/.by-inode/254-77-1005", arch);
		stat_ok(rel, &want);
		assert_true(st.st_ino == want.st_ino && st.st_dev == want.st_dev);
	}
	assert_int_equal(ust_res_lookup(r, kd, 1006, &hit), -ENOENT);
	{
		char *s = summary(r);

		snprintf(man, sizeof(man), "ustitch: archive %s: 1 malformed manifest line ignored\n"
			 "ustitch: archive %s: a debug file in it is a symlink or not a regular file: its debug files are not used\n",
			 arch, arch);
		assert_string_equal(s, man);
		free(s);
	}
	ust_res_free(r);

	/* Without the symlinked directory the archive is a debug root ... */
	snprintf(rel, sizeof(rel), "%s/.build-id/ab", arch);
	assert_int_equal(unlink(rel), 0);
	r = ust_res_new(&o);
	assert_int_equal(ust_res_set_trace(r, p, arch, err, sizeof(err)), 0);
	assert_string_equal(ust_res_debug_root(r), arch);
	ust_res_free(r);

	/* ... until a debug file in it is a symlink. */
	snprintf(rel, sizeof(rel), "%s/.build-id/%.2s/%s.debug", arch, hex, hex + 2);
	assert_int_equal(symlink(lib, rel), 0);
	r = ust_res_new(&o);
	assert_int_equal(ust_res_set_trace(r, p, arch, err, sizeof(err)), 0);
	assert_null(ust_res_debug_root(r));
	ust_res_free(r);

	/* -O ustitch:archive=DIR that is none: said. */
	r = ust_res_new(&o);
	assert_int_equal(ust_res_set_trace(r, p, dir, err, sizeof(err)), -ENOENT);
	snprintf(man, sizeof(man), "archive %s: no manifest (No such file or directory)", dir);
	assert_string_equal(err, man);
	ust_res_free(r);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handle_found_moved_deleted),
		cmocka_unit_test(test_handle_nocap),
		cmocka_unit_test(test_handle_build_id_cache),
		cmocka_unit_test(test_tmpfs_local),
		cmocka_unit_test(test_identity_times),
		cmocka_unit_test(test_map_files_deleted),
		cmocka_unit_test(test_archive_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
