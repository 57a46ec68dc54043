// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_sym against the reference tools, run at test time on the test
 * programs and on the system's libc: nm for function names and extents,
 * eu-addr2line -i -f for source lines and inlined frames, objdump for
 * real return addresses.  Any disagreement is a failure, so the test
 * programs are kept free of aliases and clones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>

#include "ustitch/sym.h"
#include "util.h"

#define MAX_FRAMES 16

static const char *nm_tool, *a2l_tool, *objdump_tool, *readelf_tool, *objcopy_tool;

static struct ust_sym_file *get(struct ust_sym_cache *c, const char *path)
{
	char err[256] = "";
	struct ust_sym_file *f = ust_sym_cache_get(c, path, NULL, 0, err, sizeof(err));

	if (!f)
		fail_msg("%s: %s", path, err);
	return f;
}

static uint64_t off_of(const char *path, uint64_t vaddr)
{
	uint64_t off = 0;

	assert_int_equal(tu_vaddr_to_off(path, vaddr, &off), 0);
	return off;
}

static const char *str(const char *s)
{
	return s ? s : "";
}

/*
 * Our frames at @vaddr (looked up at @vaddr - 1 when @ret) == those of
 * eu-addr2line on @ref (the same link as @path, or @path itself).
 */
static void compare_lines_ref(struct ust_sym_file *f, const char *path, const char *ref_path,
			      uint64_t vaddr, bool ret, const struct tu_sym *sym)
{
	struct ust_sym_frame fr[MAX_FRAMES];
	struct tu_frame ref[MAX_FRAMES];
	int n, nref, i;

	n = ust_sym_lookup(f, off_of(path, vaddr), ret, true, fr, MAX_FRAMES);
	nref = tu_addr2line(a2l_tool, ref_path, ret ? vaddr - 1 : vaddr, ref, MAX_FRAMES);
	if (n != nref)
		fail_msg("%s %#lx%s: %d frames, eu-addr2line %d", path, (unsigned long)vaddr,
			 ret ? " (return)" : "", n, nref);
	for (i = 0; i < n; i++) {
		if (strcmp(str(fr[i].src_file), ref[i].file) || fr[i].line != ref[i].line ||
		    fr[i].inlined != (i < n - 1))
			fail_msg("%s %#lx frame %d: %s:%u%s, eu-addr2line %s:%u", path,
				 (unsigned long)vaddr, i, str(fr[i].src_file), fr[i].line,
				 fr[i].inlined ? " (inlined)" : "", ref[i].file, ref[i].line);
		/* The outermost frame is the ELF symbol; inlined ones come from DWARF. */
		if (strcmp(str(fr[i].func), ref[i].func) &&
		    !(i == n - 1 && sym && strcmp(str(fr[i].func), sym->name) == 0))
			fail_msg("%s %#lx frame %d: %s, eu-addr2line %s", path,
				 (unsigned long)vaddr, i, str(fr[i].func), ref[i].func);
	}
}

static void compare_lines(struct ust_sym_file *f, const char *path, uint64_t vaddr,
			  bool ret, const struct tu_sym *sym)
{
	compare_lines_ref(f, path, path, vaddr, ret, sym);
}

/*
 * Every sized function of @path (its symbols read by nm from @nm_path),
 * at its first, middle and last byte: name and offset from nm, lines and
 * inlines from eu-addr2line.
 */
static void check_all_functions_ref(const char *path, const char *nm_path,
				    const char *ref_path, const char *const *roots, int nr_roots)
{
	struct ust_sym_opts o = { .debug_dirs = roots, .nr_debug_dirs = nr_roots };
	struct ust_sym_cache *c = ust_sym_cache_new(&o);
	struct ust_sym_file *f;
	struct tu_sym *syms;
	int n, i, checked = 0;

	assert_non_null(c);
	f = get(c, path);
	n = tu_nm(nm_tool, nm_path, false, &syms);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		const struct tu_sym *s = &syms[i];
		uint64_t at[3] = { 0, s->size / 2, s->size - 1 };

		if (!s->size)
			continue;
		for (int k = 0; k < 3; k++) {
			struct ust_sym_frame fr[MAX_FRAMES];
			uint64_t vaddr = s->addr + at[k];
			int got;

			got = ust_sym_lookup(f, off_of(path, vaddr), false, false, fr, MAX_FRAMES);
			assert_int_equal(got, 1);
			if (!fr[0].func || !tu_nm_alias(syms, n, s->addr, fr[0].func))
				fail_msg("%s %#lx: %s, nm %s", path, (unsigned long)vaddr,
					 str(fr[0].func), s->name);
			assert_int_equal(fr[0].func_off, at[k]);
			assert_null(fr[0].src_file);
			assert_false(fr[0].inlined);
			if (a2l_tool)
				compare_lines_ref(f, path, ref_path, vaddr, false, s);
			checked++;
		}
	}
	assert_true(checked >= 6);
	free(syms);
	ust_sym_cache_free(c);
}

static void check_all_functions(const char *path, const char *nm_path,
				const char *const *roots, int nr_roots)
{
	check_all_functions_ref(path, nm_path, path, roots, nr_roots);
}

static void test_pie(void **state)
{
	(void)state;
	check_all_functions(tu_env("UST_TESTPROG"), tu_env("UST_TESTPROG"), NULL, 0);
}

static void test_nopie(void **state)
{
	const char *p = tu_env("UST_TESTPROG_NOPIE");

	(void)state;
	/* Non-PIE: addresses are not offsets (0x400000 apart). */
	assert_true(tu_exec_delta(p) != 0);
	check_all_functions(p, p, NULL, 0);
}

static void test_shared_lib(void **state)
{
	const char *p = tu_env("UST_LIBUSTTEST");

	(void)state;
	/* Linked at 0x10000000: p_vaddr - p_offset != 0 in a shared object. */
	assert_true(tu_exec_delta(p) != 0);
	check_all_functions(p, p, NULL, 0);
}

static void test_inline_all(void **state)
{
	(void)state;
	check_all_functions(tu_env("UST_TESTPROG_INLINE"), tu_env("UST_TESTPROG_INLINE"),
			    NULL, 0);
}

static void test_stripped_all(void **state)
{
	const char *roots[] = { tu_env("UST_TESTPROG_DEBUGDIR") };

	(void)state;
	/* Symbols as nm reads them in the unstripped build of the same link. */
	check_all_functions(tu_env("UST_TESTPROG_STRIPPED"),
			    tu_env("UST_TESTPROG_UNSTRIPPED"), NULL, 0);
	check_all_functions(tu_env("UST_TESTPROG_STRIPPED"),
			    tu_env("UST_TESTPROG_UNSTRIPPED"), roots, 1);
}

/*
 * Without .debug_aranges (clang's default), compile units are found
 * through their own ranges: same answers as with them.
 */
static void test_no_aranges(void **state)
{
	const char *p = tu_env("UST_TESTPROG_INLINE");
	char *dir = tu_mkdtemp(), copy[4096], cmd[8192];

	(void)state;
	snprintf(copy, sizeof(copy), "%s/no-aranges", dir);
	snprintf(cmd, sizeof(cmd), "'%s' --remove-section=.debug_aranges '%s' '%s'",
		 objcopy_tool, p, copy);
	assert_int_equal(system(cmd), 0);
	check_all_functions_ref(copy, p, p, NULL, 0);
	tu_rmtree(dir);
	free(dir);
}

/* Return addresses: lines and inlines of the call (at ret - 1), offset of ret. */
static void check_return(const char *path, const char *func, const char *callee,
			 const char *const *inl, int nr_inl)
{
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	struct ust_sym_frame fr[MAX_FRAMES];
	struct ust_sym_file *f;
	struct tu_sym *syms;
	const struct tu_sym *s;
	uint64_t ret;
	int n, i;

	f = get(c, path);
	n = tu_nm(nm_tool, path, false, &syms);
	s = tu_nm_find(syms, n, func);
	assert_non_null(s);
	ret = tu_return_addr(objdump_tool, path, func, callee);
	if (!ret)
		fail_msg("no call to %s in %s", callee, func);
	assert_true(ret > s->addr && ret <= s->addr + s->size);

	n = ust_sym_lookup(f, off_of(path, ret), true, true, fr, MAX_FRAMES);
	assert_int_equal(n, nr_inl + 1);
	for (i = 0; i < nr_inl; i++) {
		assert_string_equal(fr[i].func, inl[i]);
		assert_true(fr[i].inlined);
		assert_int_equal(fr[i].func_off, 0);
	}
	assert_string_equal(fr[n - 1].func, func);
	assert_false(fr[n - 1].inlined);
	/* The offset shown is that of the recorded address, not ret - 1. */
	assert_int_equal(fr[n - 1].func_off, ret - s->addr);
	assert_non_null(fr[n - 1].src_file);
	if (a2l_tool)
		compare_lines(f, path, ret, true, s);

	/* Only lines asked: one frame, the function, still from ret - 1. */
	n = ust_sym_lookup(f, off_of(path, ret), true, false, fr, MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].func, func);
	assert_int_equal(fr[0].func_off, ret - s->addr);
	free(syms);
	ust_sym_cache_free(c);
}

static void test_return_addresses(void **state)
{
	const char *p = tu_env("UST_TESTPROG"), *inl = tu_env("UST_TESTPROG_INLINE");
	const char *deep[] = { "ust_inl_leaf", "ust_inl_leaf2" };
	const char *mid[] = { "ust_inl_leaf" };

	(void)state;
	check_return(p, "ust_c", "getppid@plt", NULL, 0);
	check_return(p, "ust_b", "ust_c", NULL, 0);
	check_return(p, "ust_a", "ust_b", NULL, 0);
	check_return(p, "main", "ust_a", NULL, 0);
	check_return(tu_env("UST_TESTPROG_NOPIE"), "ust_c", "getppid@plt", NULL, 0);
	check_return(tu_env("UST_LIBUSTTEST"), "ust_lib_entry", "ust_lib_inner", NULL, 0);
	check_return(inl, "ust_inl_deep", "getppid@plt", deep, 2);
	check_return(inl, "ust_inl_mid", "getppid@plt", mid, 1);
}

/* A return address at a function's first byte belongs to the call before it. */
static void test_return_at_function_start(void **state)
{
	const char *p = tu_env("UST_TESTPROG");
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	struct ust_sym_frame fr[MAX_FRAMES];
	const struct tu_sym *b, *prev = NULL;
	struct ust_sym_file *f;
	struct tu_sym *syms;
	int n, i;

	(void)state;
	f = get(c, p);
	n = tu_nm(nm_tool, p, false, &syms);
	b = tu_nm_find(syms, n, "ust_b");
	assert_non_null(b);
	for (i = 0; i < n; i++)
		if (syms[i].size && b->addr - 1 - syms[i].addr < syms[i].size)
			prev = &syms[i];
	assert_int_equal(ust_sym_lookup(f, off_of(p, b->addr), true, false, fr, 4), 1);
	if (prev) {
		assert_non_null(fr[0].func);
		assert_true(tu_nm_alias(syms, n, prev->addr, fr[0].func));
		assert_int_equal(fr[0].func_off, b->addr - prev->addr);
	} else {
		assert_null(fr[0].func);
	}
	/* Not a return address: ust_b+0. */
	assert_int_equal(ust_sym_lookup(f, off_of(p, b->addr), false, false, fr, 4), 1);
	assert_string_equal(fr[0].func, "ust_b");
	assert_int_equal(fr[0].func_off, 0);
	free(syms);
	ust_sym_cache_free(c);
}

/* @max smaller than the inline depth: the real function is always last. */
static void test_max_frames(void **state)
{
	const char *p = tu_env("UST_TESTPROG_INLINE");
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	struct ust_sym_frame fr[MAX_FRAMES];
	struct ust_sym_file *f;
	uint64_t ret;
	int n;

	(void)state;
	f = get(c, p);
	ret = tu_return_addr(objdump_tool, p, "ust_inl_deep", "getppid@plt");
	n = ust_sym_lookup(f, off_of(p, ret), true, true, fr, 3);
	assert_int_equal(n, 3);
	n = ust_sym_lookup(f, off_of(p, ret), true, true, fr, 2);
	assert_int_equal(n, 2);
	assert_string_equal(fr[0].func, "ust_inl_leaf");
	assert_string_equal(fr[1].func, "ust_inl_deep");
	assert_false(fr[1].inlined);
	n = ust_sym_lookup(f, off_of(p, ret), true, true, fr, 1);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].func, "ust_inl_deep");
	assert_false(fr[0].inlined);
	assert_int_equal(ust_sym_lookup(f, off_of(p, ret), true, true, fr, 0), 0);
	ust_sym_cache_free(c);
}

static void test_find_function(void **state)
{
	const char *p = tu_env("UST_LIBUSTTEST");
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	const char *names[] = { "ust_lib_entry", "ust_lib_inner" };
	struct ust_sym_file *f;
	struct tu_sym *syms;
	uint64_t off, size;
	int n;

	(void)state;
	f = get(c, p);
	n = tu_nm(nm_tool, p, false, &syms);
	for (size_t i = 0; i < 2; i++) {
		const struct tu_sym *s = tu_nm_find(syms, n, names[i]);

		assert_non_null(s);
		assert_int_equal(ust_sym_find_function(f, names[i], &off, &size), 0);
		assert_int_equal(off, off_of(p, s->addr));
		assert_int_not_equal(off, s->addr);	/* the 0x10000000 base */
		assert_int_equal(size, s->size);
	}
	assert_int_equal(ust_sym_find_function(f, "no_such_function", &off, &size), -ENOENT);
	assert_int_equal(ust_sym_find_function(f, "ust_lib_sink", &off, &size), -ENOENT);
	free(syms);
	ust_sym_cache_free(c);
}

/* Offsets outside every PT_LOAD file image: -ENOENT.  Inside but not code: no name. */
static void test_outside_segments(void **state)
{
	const char *p = tu_env("UST_TESTPROG");
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	struct ust_sym_frame fr[4];
	struct ust_sym_file *f;

	(void)state;
	f = get(c, p);
	assert_int_equal(ust_sym_lookup(f, 1ULL << 40, false, true, fr, 4), -ENOENT);
	assert_int_equal(ust_sym_lookup(f, (uint64_t)-1, true, true, fr, 4), -ENOENT);
	assert_int_equal(ust_sym_lookup(f, 0, false, true, fr, 4), 1);
	assert_null(fr[0].func);
	assert_int_equal(ust_sym_lookup(NULL, 0, false, true, fr, 4), -EINVAL);
	ust_sym_cache_free(c);
}

static const char *libc_path(void)
{
	const char *p = tu_env_opt("UST_LIBC");

	if (!p && access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) == 0)
		p = "/lib/x86_64-linux-gnu/libc.so.6";
	return p;
}

/* libc: exported functions, IFUNCs among them, against nm -D. */
static void test_libc(void **state)
{
	static const char *const names[] = {
		"getppid", "malloc", "free", "qsort", "fork", "strlen", "memcpy", "printf",
	};
	const char *p = libc_path();
	struct ust_sym_cache *c;
	struct ust_sym_file *f;
	struct tu_sym *syms;
	int n;

	(void)state;
	if (!p)
		skip();
	c = ust_sym_cache_new(NULL);
	f = get(c, p);
	n = tu_nm(nm_tool, p, true, &syms);
	assert_true(n > 100);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct tu_sym *s = tu_nm_find(syms, n, names[i]);
		uint64_t at[3], off, foff;

		if (!s)
			fail_msg("nm -D %s: no %s", p, names[i]);
		at[0] = 0;
		at[1] = s->size > 1 ? 1 : 0;
		at[2] = s->size ? s->size - 1 : 0;
		for (int k = 0; k < 3; k++) {
			struct ust_sym_frame fr[MAX_FRAMES];

			off = off_of(p, s->addr + at[k]);
			assert_int_equal(ust_sym_lookup(f, off, false, false, fr, MAX_FRAMES), 1);
			assert_non_null(fr[0].func);
			/*
			 * An alias nm -D lists at that address, or (with libc's
			 * debug file installed) one of its .symtab names there.
			 */
			if (!tu_nm_alias(syms, n, s->addr, fr[0].func) &&
			    !(ust_sym_find_function(f, fr[0].func, &foff, NULL) == 0 &&
			      foff == off_of(p, s->addr)))
				fail_msg("libc %s+%#lx: %s", names[i], (unsigned long)at[k],
					 fr[0].func);
			assert_int_equal(fr[0].func_off, at[k]);
		}
		assert_int_equal(ust_sym_find_function(f, names[i], &foff, NULL), 0);
		assert_int_equal(foff, off_of(p, s->addr));
	}
	free(syms);
	ust_sym_cache_free(c);
}

/* A global name is preferred over weak and local aliases at one address. */
static void test_alias_preference(void **state)
{
	const char *p = libc_path();
	struct ust_sym_cache *c;
	struct ust_sym_file *f;
	struct tu_sym *syms;
	int n, tested = 0;

	(void)state;
	if (!p)
		skip();
	c = ust_sym_cache_new(NULL);
	f = get(c, p);
	n = tu_nm(nm_tool, p, true, &syms);
	for (int i = 0; i < n && tested < 50; i++) {
		struct ust_sym_frame fr[4];
		bool has_global = false, has_weak = false;

		if (syms[i].type != 'T')
			continue;
		for (int j = 0; j < n; j++)
			if (syms[j].addr == syms[i].addr && syms[j].type == 'W')
				has_weak = true;
		if (!has_weak)
			continue;
		has_global = true;
		assert_int_equal(ust_sym_lookup(f, off_of(p, syms[i].addr), false, false, fr, 4), 1);
		/* Exported global aliases at that address: ours must be one of them. */
		for (int j = 0; j < n; j++)
			if (syms[j].addr == syms[i].addr && syms[j].type == 'T' &&
			    strcmp(syms[j].name, fr[0].func) == 0)
				has_global = false;
		if (has_global)
			fail_msg("libc %#lx: %s is not a global alias", (unsigned long)syms[i].addr,
				 fr[0].func);
		tested++;
	}
	assert_true(tested > 0);
	free(syms);
	ust_sym_cache_free(c);
}

static void lookup_name(struct ust_sym_file *f, const char *path, uint64_t vaddr,
			const char *want)
{
	struct ust_sym_frame fr[MAX_FRAMES];
	int n = ust_sym_lookup(f, off_of(path, vaddr), false, true, fr, MAX_FRAMES);

	assert_true(n >= 1);
	if (want) {
		assert_non_null(fr[n - 1].func);
		assert_string_equal(fr[n - 1].func, want);
		assert_non_null(fr[n - 1].src_file);
	} else {
		assert_int_equal(n, 1);
		assert_null(fr[0].func);
	}
}

static const struct tu_sym *unstripped_sym(struct tu_sym **syms, const char *name)
{
	int n = tu_nm(nm_tool, tu_env("UST_TESTPROG_UNSTRIPPED"), false, syms);
	const struct tu_sym *s = tu_nm_find(*syms, n, name);

	assert_non_null(s);
	return s;
}

/* Stripped binary, debug file beside it: found by .gnu_debuglink. */
static void test_stripped_debuglink(void **state)
{
	const char *p = tu_env("UST_TESTPROG_STRIPPED");
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	struct tu_sym *syms;
	const struct tu_sym *s = unstripped_sym(&syms, "ust_c");

	(void)state;
	lookup_name(get(c, p), p, s->addr + 4, "ust_c");
	free(syms);
	ust_sym_cache_free(c);
}

/* A copy elsewhere: no debuglink match, only the build-id tree helps. */
static void test_stripped_build_id(void **state)
{
	const char *roots[] = { "/nonexistent-root", tu_env("UST_TESTPROG_DEBUGDIR") };
	struct ust_sym_opts o = { .debug_dirs = roots, .nr_debug_dirs = 2 };
	struct ust_sym_cache *c;
	char *dir = tu_mkdtemp(), copy[4096];
	struct tu_sym *syms;
	const struct tu_sym *s = unstripped_sym(&syms, "ust_b");

	(void)state;
	snprintf(copy, sizeof(copy), "%s/ust-testprog-stripped", dir);
	assert_int_equal(tu_copy(tu_env("UST_TESTPROG_STRIPPED"), copy), 0);

	c = ust_sym_cache_new(&o);
	lookup_name(get(c, copy), copy, s->addr + 1, "ust_b");
	ust_sym_cache_free(c);

	/* Without the root: the stripped binary has no such symbol at all. */
	c = ust_sym_cache_new(NULL);
	lookup_name(get(c, copy), copy, s->addr + 1, NULL);
	ust_sym_cache_free(c);
	free(syms);
	tu_rmtree(dir);
	free(dir);
}

/* @path's e_entry and its PT_INTERP (into @interp), read with libelf. */
static uint64_t elf_entry(const char *path, char *interp, size_t len)
{
	int fd = open(path, O_RDONLY);
	uint64_t entry = 0;
	size_t phnum, i;
	GElf_Ehdr eh;
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_non_null(gelf_getehdr(e, &eh));
	entry = eh.e_entry;
	if (interp)
		*interp = 0;
	for (i = 0; interp && !elf_getphdrnum(e, &phnum) && i < phnum; i++) {
		GElf_Phdr ph;
		size_t sz;
		char *raw;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP &&
		    (raw = elf_rawfile(e, &sz)) && ph.p_offset + ph.p_filesz <= sz)
			snprintf(interp, len, "%.*s", (int)ph.p_filesz, raw + ph.p_offset);
	}
	elf_end(e);
	close(fd);
	return entry;
}

static const char *func_at(struct ust_sym_file *f, const char *path, uint64_t vaddr)
{
	struct ust_sym_frame fr[MAX_FRAMES];
	int n = ust_sym_lookup(f, off_of(path, vaddr), false, false, fr, MAX_FRAMES);

	assert_true(n >= 1);
	return fr[n - 1].func;
}

/*
 * A stripped program's entry point, which no .dynsym symbol names, is
 * _start over its stub only: crt1's, by its FDE (nm's size in the
 * unstripped link); the dynamic loader's, which has no FDE, its first
 * bytes.  The unnamed functions after the stub stay unnamed.
 */
static void test_stripped_entry(void **state)
{
	char *dir = tu_mkdtemp(), path[4096], interp[4096];
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	const struct tu_sym *start, *next = NULL;
	struct ust_sym_file *f;
	struct tu_sym *syms;
	uint64_t entry;
	int n;

	(void)state;
	/* Away from its .debug file, which its debuglink would find. */
	snprintf(path, sizeof(path), "%s/ust-testprog-stripped", dir);
	assert_int_equal(tu_copy(tu_env("UST_TESTPROG_STRIPPED"), path), 0);
	n = tu_nm(nm_tool, tu_env("UST_TESTPROG_UNSTRIPPED"), false, &syms);
	start = tu_nm_find(syms, n, "_start");
	assert_non_null(start);
	assert_true(start->size > 1);
	for (int i = 0; i < n; i++)
		if (syms[i].addr > start->addr && (!next || syms[i].addr < next->addr))
			next = &syms[i];
	assert_non_null(next);
	entry = elf_entry(path, interp, sizeof(interp));
	assert_int_equal(entry, start->addr);
	f = get(c, path);
	assert_string_equal(str(func_at(f, path, entry)), "_start");
	assert_string_equal(str(func_at(f, path, entry + start->size - 1)), "_start");
	assert_null(func_at(f, path, next->addr));
	/* The dynamic loader (Debian's has .dynsym only, nothing at its entry). */
	if (*interp && !access(interp, R_OK)) {
		entry = elf_entry(interp, NULL, 0);
		f = get(c, interp);
		assert_string_equal(str(func_at(f, interp, entry)), "_start");
		assert_string_equal(str(func_at(f, interp, entry + 8)), "_start");
		assert_string_not_equal(str(func_at(f, interp, entry + 4096)), "_start");
	}
	/* A library that can be run (libc.so.6 prints its version) is none. */
	if (libc_path()) {
		const char *libc = libc_path();

		entry = elf_entry(libc, NULL, 0);
		f = get(c, libc);
		assert_string_not_equal(str(func_at(f, libc, entry)), "_start");
	}
	ust_sym_cache_free(c);
	free(syms);
	tu_rmtree(dir);
	free(dir);
}

/* ust_sym_opts.fetch_debug (debuginfod's hook): the path it gives. */
struct fetch_ctx {
	const char *path;
	unsigned int calls;
};

static int fetch(void *ctx, const uint8_t *bid, size_t len, char *path, size_t pathsz)
{
	struct fetch_ctx *f = ctx;

	(void)bid;
	assert_true(len >= 2);
	f->calls++;
	snprintf(path, pathsz, "%s", f->path);
	return 0;
}

/* Asked only for a stripped file with no local debug file, once per file,
 * and what it gives is used only with the file's build-id. */
static void test_fetch_debug(void **state)
{
	struct fetch_ctx f = { tu_env("UST_TESTPROG_NOPIE"), 0 };
	struct ust_sym_opts o = { .fetch_debug = fetch, .fetch_ctx = &f };
	char *dir = tu_mkdtemp(), copy[4096];
	struct ust_sym_cache *c;
	struct tu_sym *syms;
	const struct tu_sym *s = unstripped_sym(&syms, "ust_b");

	(void)state;
	/* A copy away from its debuglink file. */
	snprintf(copy, sizeof(copy), "%s/ust-testprog-stripped", dir);
	assert_int_equal(tu_copy(tu_env("UST_TESTPROG_STRIPPED"), copy), 0);

	/* Another link's file (full symbols, another build-id): not used. */
	c = ust_sym_cache_new(&o);
	lookup_name(get(c, copy), copy, s->addr + 1, NULL);
	lookup_name(get(c, copy), copy, s->addr + 1, NULL);
	assert_int_equal(f.calls, 1);
	ust_sym_cache_free(c);

	/* The debug file of this build-id: used. */
	f.path = tu_env("UST_TESTPROG_STRIPPED_DEBUG");
	c = ust_sym_cache_new(&o);
	lookup_name(get(c, copy), copy, s->addr + 1, "ust_b");
	assert_int_equal(f.calls, 2);
	ust_sym_cache_free(c);

	/* A file with its own symbols and DWARF: never asked. */
	c = ust_sym_cache_new(&o);
	assert_non_null(get(c, tu_env("UST_TESTPROG_UNSTRIPPED")));
	assert_int_equal(f.calls, 2);
	ust_sym_cache_free(c);
	free(syms);
	tu_rmtree(dir);
	free(dir);
}

/* A debuglink candidate with the right name but another CRC is ignored. */
static void test_debuglink_crc(void **state)
{
	char *dir = tu_mkdtemp(), copy[4096], dbg[4096];
	struct ust_sym_cache *c;
	struct tu_sym *syms;
	const struct tu_sym *s = unstripped_sym(&syms, "ust_a");

	(void)state;
	snprintf(copy, sizeof(copy), "%s/ust-testprog-stripped", dir);
	snprintf(dbg, sizeof(dbg), "%s/ust-testprog-stripped.debug", dir);
	assert_int_equal(tu_copy(tu_env("UST_TESTPROG_STRIPPED"), copy), 0);
	/* An ELF with full symbols, of another link: must not be used. */
	assert_int_equal(tu_copy(tu_env("UST_TESTPROG_NOPIE"), dbg), 0);
	c = ust_sym_cache_new(NULL);
	lookup_name(get(c, copy), copy, s->addr, NULL);
	ust_sym_cache_free(c);

	/* The right file under that name: used. */
	snprintf(dbg, sizeof(dbg), "%s/.debug", dir);
	assert_int_equal(mkdir(dbg, 0755), 0);
	snprintf(dbg, sizeof(dbg), "%s/.debug/ust-testprog-stripped.debug", dir);
	assert_int_equal(tu_copy(tu_env("UST_TESTPROG_STRIPPED_DEBUG"), dbg), 0);
	c = ust_sym_cache_new(NULL);
	lookup_name(get(c, copy), copy, s->addr, "ust_a");
	ust_sym_cache_free(c);
	free(syms);
	tu_rmtree(dir);
	free(dir);
}

/* Only a build-id: the debug file alone, its segments reconstructed. */
static void test_build_id_only(void **state)
{
	const char *roots[] = { tu_env("UST_TESTPROG_DEBUGDIR") };
	struct ust_sym_opts o = { .debug_dirs = roots, .nr_debug_dirs = 1 };
	const char *p = tu_env("UST_TESTPROG_STRIPPED");
	uint8_t id[64], ref[64];
	struct ust_sym_cache *c;
	struct ust_sym_file *f;
	struct tu_sym *syms;
	const uint8_t *fid;
	char err[256];
	size_t len;
	int n;

	(void)state;
	len = ust_sym_read_build_id(p, id, sizeof(id));
	assert_int_equal(len, 20);
	assert_int_equal(tu_readelf_build_id(readelf_tool, p, ref, sizeof(ref)), len);
	assert_memory_equal(id, ref, len);
	assert_int_equal(ust_sym_read_build_id(tu_env("UST_TESTPROG_STRIPPED_DEBUG"), ref,
					       sizeof(ref)), len);
	assert_memory_equal(id, ref, len);
	assert_int_equal(ust_sym_read_build_id(p, ref, 8), 0);	/* too small */
	assert_int_equal(ust_sym_read_build_id("/nonexistent", ref, sizeof(ref)), 0);

	c = ust_sym_cache_new(&o);
	f = ust_sym_cache_get(c, NULL, id, len, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(ust_sym_file_build_id(f, &fid), len);
	assert_memory_equal(fid, id, len);
	n = tu_nm(nm_tool, tu_env("UST_TESTPROG_UNSTRIPPED"), false, &syms);
	for (int i = 0; i < n; i++)
		if (syms[i].size && strncmp(syms[i].name, "ust_", 4) == 0)
			lookup_name(f, p, syms[i].addr + syms[i].size / 2, syms[i].name);

	/* A path that is gone: the build-id is enough, the name is kept. */
	f = ust_sym_cache_get(c, "/nonexistent/dir/ust-testprog-stripped", id, len, err,
			      sizeof(err));
	assert_non_null(f);
	assert_string_equal(ust_sym_file_path(f), "/nonexistent/dir/ust-testprog-stripped");
	assert_string_equal(ust_sym_file_basename(f), "ust-testprog-stripped");
	lookup_name(f, p, tu_nm_find(syms, n, "ust_c")->addr, "ust_c");
	ust_sym_cache_free(c);

	c = ust_sym_cache_new(NULL);
	assert_null(ust_sym_cache_get(c, "/nonexistent/dir/x", id, len, err, sizeof(err)));
	assert_string_equal(err, "no such file");
	assert_int_equal(errno, ENOENT);
	assert_null(ust_sym_cache_get(c, NULL, id, len, err, sizeof(err)));
	assert_string_equal(err, "no debug file for the build-id");
	assert_int_equal(errno, ENOENT);
	assert_null(ust_sym_cache_get(c, NULL, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "neither a path nor a build-id");
	assert_int_equal(errno, ENOENT);
	ust_sym_cache_free(c);
	free(syms);
}

/* The file at the path is another build than the one recorded. */
static void test_build_id_mismatch(void **state)
{
	const char *roots[] = { tu_env("UST_TESTPROG_DEBUGDIR") };
	struct ust_sym_opts o = { .debug_dirs = roots, .nr_debug_dirs = 1 };
	uint8_t id[64];
	struct ust_sym_cache *c;
	struct ust_sym_file *f;
	struct tu_sym *syms;
	char err[256];
	size_t len;
	const struct tu_sym *s = unstripped_sym(&syms, "ust_c");

	(void)state;
	len = ust_sym_read_build_id(tu_env("UST_TESTPROG_STRIPPED"), id, sizeof(id));
	assert_true(len > 0);
	c = ust_sym_cache_new(NULL);
	assert_null(ust_sym_cache_get(c, tu_env("UST_TESTPROG_NOPIE"), id, len, err,
				      sizeof(err)));
	assert_string_equal(err, "build-id mismatch");
	assert_int_equal(errno, ENOENT);
	ust_sym_cache_free(c);

	c = ust_sym_cache_new(&o);
	f = ust_sym_cache_get(c, tu_env("UST_TESTPROG_NOPIE"), id, len, err, sizeof(err));
	assert_non_null(f);
	lookup_name(f, tu_env("UST_TESTPROG_STRIPPED"), s->addr, "ust_c");
	ust_sym_cache_free(c);
	free(syms);
}

static void test_cache(void **state)
{
	const char *p = tu_env("UST_TESTPROG");
	struct ust_sym_cache *c = ust_sym_cache_new(NULL);
	char *dir = tu_mkdtemp(), path[4096], err[256];
	struct ust_sym_file *f;
	const uint8_t *id;

	(void)state;
	f = get(c, p);
	assert_ptr_equal(get(c, p), f);
	assert_string_equal(ust_sym_file_path(f), p);
	assert_string_equal(ust_sym_file_basename(f), "ust-testprog");
	assert_int_equal(ust_sym_file_build_id(f, &id), 20);
	assert_null(ust_sym_file_path(NULL));

	/* Failures are cached: the file fixed afterwards is not looked at again. */
	snprintf(path, sizeof(path), "%s/obj", dir);
	assert_int_equal(tu_write(path, "garbage", 7), 0);
	assert_null(ust_sym_cache_get(c, path, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "not an ELF file");
	assert_int_equal(tu_copy(p, path), 0);
	err[0] = '\0';
	assert_null(ust_sym_cache_get(c, path, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "not an ELF file");
	assert_int_equal(errno, EINVAL);
	assert_null(ust_sym_cache_get(c, path, NULL, 0, NULL, 0));
	ust_sym_cache_free(c);

	/* Many files: the cache's table grows. */
	c = ust_sym_cache_new(NULL);
	for (int i = 0; i < 700; i++) {
		snprintf(path, sizeof(path), "%s/missing-%d", dir, i);
		assert_null(ust_sym_cache_get(c, path, NULL, 0, err, sizeof(err)));
		assert_string_equal(err, "no such file");
	}
	assert_ptr_equal(get(c, p), get(c, p));
	ust_sym_cache_free(c);
	ust_sym_cache_free(NULL);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_shared_lib),
		cmocka_unit_test(test_inline_all),
		cmocka_unit_test(test_stripped_all),
		cmocka_unit_test(test_no_aranges),
		cmocka_unit_test(test_return_addresses),
		cmocka_unit_test(test_return_at_function_start),
		cmocka_unit_test(test_max_frames),
		cmocka_unit_test(test_find_function),
		cmocka_unit_test(test_outside_segments),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_alias_preference),
		cmocka_unit_test(test_stripped_debuglink),
		cmocka_unit_test(test_stripped_build_id),
		cmocka_unit_test(test_debuglink_crc),
		cmocka_unit_test(test_stripped_entry),
		cmocka_unit_test(test_fetch_debug),
		cmocka_unit_test(test_build_id_only),
		cmocka_unit_test(test_build_id_mismatch),
		cmocka_unit_test(test_cache),
	};

	nm_tool = tu_env("UST_NM");
	objdump_tool = tu_env("UST_OBJDUMP");
	readelf_tool = tu_env("UST_READELF");
	objcopy_tool = tu_env("UST_OBJCOPY");
	a2l_tool = tu_env_opt("UST_EU_ADDR2LINE");
	if (!a2l_tool)
		fprintf(stderr, "eu-addr2line not found: line checks skipped\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
