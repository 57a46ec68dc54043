// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_sym: the cache of symbolized objects and the per-frame lookup.
 *
 * Each object is loaded once per cache (successes and failures alike):
 * its load segments, its function symbols (sorted), and the location of
 * its DWARF, which is indexed on the first lookup that wants lines.  The
 * lookup itself then only does binary searches in memory.
 *
 * Where things come from when the object is stripped: .symtab and DWARF
 * from the separate debug file (sym_debug.c), but the load segments
 * always from the object itself when it is there, because a debug file's
 * program headers have lost their file offsets (sym_elf.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

#define SYM_MEMO	4096

struct sym_memo {
	uint64_t key;			/* the address + 1; 0: empty */
	const struct ust_sym_ent *ent;
};

struct ust_sym_file {
	struct ust_sym_file *next;	/* hash chain */
	char *key;
	char *path;		/* as asked for; else the debug file's */
	const char *base;
	char *err;		/* set: a cached failure */
	int err_no;		/* its errno */

	uint8_t build_id[UST_SYM_BUILD_ID_MAX];
	size_t build_id_len;

	struct ust_sym_elf main;	/* .elf NULL when missing */
	struct ust_sym_elf debug;	/* .elf NULL when none found */
	struct ust_sym_seg *segs;
	int nr_segs;
	bool segs_guessed;
	struct ust_sym_tab tab;

	Elf *dwarf_elf;			/* the one of main/debug with DWARF */
	struct ust_sym_dwarf *dwarf;	/* opened on first want_lines */
	bool dwarf_tried;

	bool demangle;			/* names leave demangled (opts.raw_names) */
	struct ust_sym_dm dm;		/* what they became, once each */
	/*
	 * The symbol of an address, as last looked up, direct-mapped: a
	 * report asks for the same return addresses at every stack (the
	 * outer frames repeat), and a search of cc1plus's 100,000
	 * symbols is 17 cache misses.
	 */
	struct sym_memo *memo;		/* SYM_MEMO of them, on the first lookup */
};

struct ust_sym_cache {
	char **roots;
	int nr_roots;
	int (*fetch_debug)(void *ctx, const uint8_t *bid, size_t bid_len, char *path,
			   size_t pathsz);
	void *fetch_ctx;
	bool raw_names;
	struct ust_sym_file **buckets;
	size_t nr_buckets;
	size_t nr_files;
	uint64_t serial;	/* ust_sym_cache_serial() */
};

static uint64_t next_serial;

struct ust_sym_cache *ust_sym_cache_new(const struct ust_sym_opts *opts)
{
	struct ust_sym_cache *c = calloc(1, sizeof(*c));
	int i;

	if (!c)
		return NULL;
	/* Never 0, never reused in the process (threads: atomically). */
	c->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
	c->nr_buckets = 256;
	if (opts) {
		c->fetch_debug = opts->fetch_debug;
		c->fetch_ctx = opts->fetch_ctx;
		c->raw_names = opts->raw_names;
	}
	c->buckets = calloc(c->nr_buckets, sizeof(*c->buckets));
	if (!c->buckets)
		goto err;
	if (opts && opts->nr_debug_dirs > 0 && opts->debug_dirs) {
		c->roots = calloc((size_t)opts->nr_debug_dirs, sizeof(*c->roots));
		if (!c->roots)
			goto err;
		for (i = 0; i < opts->nr_debug_dirs; i++) {
			if (!opts->debug_dirs[i])
				continue;
			c->roots[c->nr_roots] = strdup(opts->debug_dirs[i]);
			if (!c->roots[c->nr_roots++])
				goto err;
		}
	}
	return c;
err:
	ust_sym_cache_free(c);
	return NULL;
}

static void file_free(struct ust_sym_file *f)
{
	ust_sym_dm_fini(&f->dm);
	free(f->memo);
	ust_sym_dwarf_close(f->dwarf);
	ust_sym_tab_free(&f->tab);
	free(f->segs);
	ust_sym_elf_close(&f->debug);
	ust_sym_elf_close(&f->main);
	free(f->err);
	free(f->path);
	free(f->key);
	free(f);
}

uint64_t ust_sym_cache_serial(const struct ust_sym_cache *c)
{
	return c ? c->serial : 0;
}

void ust_sym_cache_free(struct ust_sym_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; c->buckets && i < c->nr_buckets; i++) {
		struct ust_sym_file *f = c->buckets[i], *next;

		for (; f; f = next) {
			next = f->next;
			file_free(f);
		}
	}
	for (i = 0; c->roots && i < (size_t)c->nr_roots; i++)
		free(c->roots[i]);
	free(c->roots);
	free(c->buckets);
	free(c);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static void rehash(struct ust_sym_cache *c)
{
	size_t n = c->nr_buckets * 4, i;
	struct ust_sym_file **b = calloc(n, sizeof(*b));

	if (!b)
		return;		/* longer chains, still correct */
	for (i = 0; i < c->nr_buckets; i++) {
		struct ust_sym_file *f = c->buckets[i], *next;

		for (; f; f = next) {
			size_t h = hash_str(f->key) & (n - 1);

			next = f->next;
			f->next = b[h];
			b[h] = f;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nr_buckets = n;
}

static bool has_symtab(Elf *elf)
{
	GElf_Shdr sh;

	return ust_sym_elf_section(elf, ".symtab", &sh) && sh.sh_type == SHT_SYMTAB;
}

bool ust_sym_wants_debug_file(const char *path)
{
	struct ust_sym_elf e = { 0 };
	bool want;

	if (ust_sym_elf_open(&e, path, NULL, 0) != 0)
		return false;
	want = !has_symtab(e.elf) || !ust_sym_elf_has_data(e.elf, ".debug_info");
	ust_sym_elf_close(&e);
	return want;
}

static int set_err(struct ust_sym_file *f, int err_no, const char *msg)
{
	f->err = strdup(msg);
	f->err_no = err_no;
	return -1;
}

static int load(struct ust_sym_cache *c, struct ust_sym_file *f, const char *path,
		const uint8_t *id, size_t id_len)
{
	char main_err[256] = "";
	uint8_t own[UST_SYM_BUILD_ID_MAX];
	size_t own_len = 0;
	Elf *segs_elf;

	if (id_len > UST_SYM_BUILD_ID_MAX)
		id_len = 0;
	if (path && ust_sym_elf_open(&f->main, path, main_err, sizeof(main_err)) == 0) {
		own_len = ust_sym_elf_build_id(f->main.elf, own, sizeof(own));
		/*
		 * A different build-id means the file on disk is not the one
		 * that was traced (upgraded since): its symbols would be wrong.
		 * Only the debug file of the recorded build-id can help then.
		 */
		if (id_len && own_len && (own_len != id_len || memcmp(own, id, id_len))) {
			ust_sym_elf_close(&f->main);
			snprintf(main_err, sizeof(main_err), "build-id mismatch");
			own_len = 0;
		}
	}
	if (own_len) {
		memcpy(f->build_id, own, own_len);
		f->build_id_len = own_len;
	} else if (id_len) {
		memcpy(f->build_id, id, id_len);
		f->build_id_len = id_len;
	}

	if (!f->main.elf || !has_symtab(f->main.elf) ||
	    !ust_sym_elf_has_data(f->main.elf, ".debug_info"))
		ust_sym_debug_find((const char *const *)c->roots, c->nr_roots,
				   f->main.elf ? &f->main : NULL, path,
				   f->build_id_len ? f->build_id : NULL, f->build_id_len,
				   &f->debug);
	/* Last, the fetcher (debuginfod), for a stripped or missing object. */
	if (!f->debug.elf && c->fetch_debug && f->build_id_len &&
	    (!f->main.elf || !has_symtab(f->main.elf) ||
	     !ust_sym_elf_has_data(f->main.elf, ".debug_info"))) {
		char dpath[PATH_MAX];

		if (c->fetch_debug(c->fetch_ctx, f->build_id, f->build_id_len, dpath,
				   sizeof(dpath)) == 0)
			ust_sym_debug_open_id(dpath, f->build_id, f->build_id_len,
					      f->main.elf ? &f->main : NULL, &f->debug);
	}

	if (!f->main.elf && !f->debug.elf) {
		if (path)
			return set_err(f, !strcmp(main_err, "no such file") ||
					  !strcmp(main_err, "build-id mismatch") ? ENOENT : EINVAL,
				       main_err);
		return set_err(f, ENOENT, f->build_id_len ? "no debug file for the build-id" :
				  "neither a path nor a build-id");
	}

	segs_elf = f->main.elf ? f->main.elf : f->debug.elf;
	if (ust_sym_elf_segments(segs_elf, &f->segs, &f->nr_segs, &f->segs_guessed) != 0)
		return set_err(f, ENOMEM, "out of memory");

	/* The richest table wins: .symtab (own, then debug), else .dynsym. */
	if (f->main.elf && ust_sym_tab_load(&f->tab, f->main.elf, SHT_SYMTAB))
		return set_err(f, ENOMEM, "out of memory");
	if (!f->tab.nr && f->debug.elf &&
	    ust_sym_tab_load(&f->tab, f->debug.elf, SHT_SYMTAB))
		return set_err(f, ENOMEM, "out of memory");
	if (!f->tab.nr && f->main.elf && ust_sym_tab_load(&f->tab, f->main.elf, SHT_DYNSYM))
		return set_err(f, ENOMEM, "out of memory");

	if (f->main.elf && ust_sym_elf_has_data(f->main.elf, ".debug_info"))
		f->dwarf_elf = f->main.elf;
	else if (f->debug.elf && ust_sym_elf_has_data(f->debug.elf, ".debug_info"))
		f->dwarf_elf = f->debug.elf;
	return 0;
}

/* The key, "PATH\nHEX-BUILD-ID", into @out (@klen bytes with its NUL). */
static void put_key(char *out, size_t klen, const char *path, const uint8_t *id, size_t id_len)
{
	static const char hex[] = "0123456789abcdef";
	size_t plen = klen - 2 - 2 * id_len, i;

	memcpy(out, path ? path : "", plen);
	out[plen++] = '\n';
	for (i = 0; i < id_len; i++) {
		out[plen++] = hex[id[i] >> 4];
		out[plen++] = hex[id[i] & 15];
	}
	out[plen] = '\0';
}

struct ust_sym_file *ust_sym_cache_get(struct ust_sym_cache *c, const char *path,
				       const uint8_t *build_id, size_t build_id_len,
				       char *err, size_t errsz)
{
	struct ust_sym_file *f;
	char stack_key[512];
	size_t klen, h = 0;
	char *key;

	if (!c) {
		if (err && errsz)
			snprintf(err, errsz, "no cache");
		errno = EINVAL;
		return NULL;
	}
	if (!build_id)
		build_id_len = 0;
	/* Key: the path and the build-id asked for, both matter to the result.
	 * Asked for at every frame printed: built on the stack, copied only
	 * for a new file. */
	klen = (path ? strlen(path) : 0) + 2 + 2 * build_id_len;
	key = klen <= sizeof(stack_key) ? stack_key : malloc(klen);
	f = NULL;
	if (key) {
		put_key(key, klen, path, build_id, build_id_len);
		h = hash_str(key) & (c->nr_buckets - 1);
		for (f = c->buckets[h]; f; f = f->next)
			if (strcmp(f->key, key) == 0)
				break;
	}
	if (f) {
		if (key != stack_key)
			free(key);
		goto found;
	}
	if (key == stack_key)
		key = strdup(stack_key);
	if (!key) {
		if (err && errsz)
			snprintf(err, errsz, "out of memory");
		errno = ENOMEM;
		return NULL;
	}

	f = calloc(1, sizeof(*f));
	if (!f) {
		free(key);
		if (err && errsz)
			snprintf(err, errsz, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	f->key = key;
	f->demangle = !c->raw_names;
	ust_sym_dm_init(&f->dm);
	if (load(c, f, path, build_id, build_id_len) != 0) {
		/* Keep the error, drop everything else: failures are cached too. */
		ust_sym_tab_free(&f->tab);
		free(f->segs);
		f->segs = NULL;
		ust_sym_elf_close(&f->debug);
		ust_sym_elf_close(&f->main);
		if (!f->err) {
			free(f->key);
			free(f);
			if (err && errsz)
				snprintf(err, errsz, "out of memory");
			errno = ENOMEM;
			return NULL;
		}
	} else {
		f->path = strdup(path ? path : f->debug.path);
		if (!f->path) {
			file_free(f);
			if (err && errsz)
				snprintf(err, errsz, "out of memory");
			errno = ENOMEM;
			return NULL;
		}
		f->base = strrchr(f->path, '/');
		f->base = f->base ? f->base + 1 : f->path;
	}
	f->next = c->buckets[h];
	c->buckets[h] = f;
	if (++c->nr_files > 2 * c->nr_buckets)
		rehash(c);

found:
	if (f->err) {
		if (err && errsz)
			snprintf(err, errsz, "%s", f->err);
		errno = f->err_no;
		return NULL;
	}
	return f;
}

/* A file offset as the kernel records it -> the address in the ELF image. */
static int off_to_vaddr(const struct ust_sym_file *f, uint64_t off, uint64_t *vaddr)
{
	const struct ust_sym_seg *hit = NULL;
	int i;

	for (i = 0; i < f->nr_segs; i++) {
		const struct ust_sym_seg *s = &f->segs[i];

		if (off - s->off < s->filesz && off >= s->off && (!hit || s->exec))
			hit = s;
	}
	if (!hit)
		return -1;
	*vaddr = off - hit->off + hit->vaddr;
	return 0;
}

static int vaddr_to_off(const struct ust_sym_file *f, uint64_t vaddr, uint64_t *off)
{
	const struct ust_sym_seg *hit = NULL;
	int i;

	for (i = 0; i < f->nr_segs; i++) {
		const struct ust_sym_seg *s = &f->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz && (!hit || s->exec))
			hit = s;
	}
	if (!hit)
		return -1;
	*off = vaddr - hit->vaddr + hit->off;
	return 0;
}

static struct ust_sym_dwarf *file_dwarf(struct ust_sym_file *f)
{
	if (!f->dwarf_tried) {
		f->dwarf_tried = true;
		if (f->dwarf_elf)
			f->dwarf = ust_sym_dwarf_open(f->dwarf_elf);
	}
	return f->dwarf;
}

/* ust_sym_tab_lookup() through the file's memo (without one if memory is short). */
static const struct ust_sym_ent *tab_lookup(struct ust_sym_file *f, uint64_t addr)
{
	size_t k = (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 52) & (SYM_MEMO - 1);

	if (!f->memo)
		f->memo = calloc(SYM_MEMO, sizeof(*f->memo));
	if (!f->memo)
		return ust_sym_tab_lookup(&f->tab, addr);
	if (f->memo[k].key != addr + 1) {
		f->memo[k].key = addr + 1;
		f->memo[k].ent = ust_sym_tab_lookup(&f->tab, addr);
	}
	return f->memo[k].ent;
}

int ust_sym_lookup(struct ust_sym_file *f, uint64_t file_off, bool is_return,
		   bool want_lines, struct ust_sym_frame *out, int max)
{
	const struct ust_sym_ent *sym;
	struct ust_sym_dwarf *dw;
	struct ust_sym_frame *last;
	uint64_t vaddr, pc, entry = 0;
	int n = 0, i;

	if (!f || f->err)
		return -EINVAL;
	if (off_to_vaddr(f, file_off, &vaddr) != 0)
		return -ENOENT;
	if (max < 1)
		return 0;
	/*
	 * A return address points past the call, possibly already into the
	 * next line, inline block or (after a noreturn call) function: the
	 * call itself is at the byte before.  The offset shown stays that
	 * of the address recorded.
	 */
	pc = is_return && vaddr ? vaddr - 1 : vaddr;
	sym = tab_lookup(f, pc);
	/*
	 * Nothing before it but a function starting right there: no call
	 * returns there, but a signal handler "returns" to the sigreturn
	 * trampoline (__restore_rt), whose first byte the frame holds.
	 */
	if (!sym && pc != vaddr) {
		const struct ust_sym_ent *at = ust_sym_tab_lookup(&f->tab, vaddr);

		if (at && at->addr == vaddr) {
			sym = at;
			pc = vaddr;
		}
	}

	if (want_lines && (dw = file_dwarf(f)))
		n = ust_sym_dwarf_frames(dw, pc, out, max, &entry);
	if (!n) {
		out[0] = (struct ust_sym_frame){ 0 };
		n = 1;
	}
	for (i = 0; i < n - 1; i++)
		out[i].func_off = 0;
	last = &out[n - 1];
	last->inlined = false;
	if (sym) {
		last->func = sym->name;
		last->func_off = vaddr - sym->addr;
	} else {
		/* No symbol: the DWARF subprogram's name, if any. */
		last->func_off = last->func && vaddr >= entry ? vaddr - entry : 0;
	}
	/* The one place names leave the symbolizer: as perf prints them. */
	for (i = 0; f->demangle && i < n; i++)
		out[i].func = ust_sym_dm_name(&f->dm, out[i].func);
	return n;
}

int ust_sym_find_function(struct ust_sym_file *f, const char *name,
			  uint64_t *file_off, uint64_t *size)
{
	const struct ust_sym_ent *e;
	uint64_t off;

	if (!f || f->err || !name)
		return -EINVAL;
	e = ust_sym_tab_find_name(&f->tab, name);
	if (!e || vaddr_to_off(f, e->addr, &off) != 0)
		return -ENOENT;
	if (file_off)
		*file_off = off;
	if (size)
		*size = e->size;
	return 0;
}

const char *ust_sym_file_path(const struct ust_sym_file *f)
{
	return f ? f->path : NULL;
}

const char *ust_sym_file_debug_path(const struct ust_sym_file *f)
{
	return f && f->debug.elf ? f->debug.path : NULL;
}

const char *ust_sym_file_basename(const struct ust_sym_file *f)
{
	return f ? f->base : NULL;
}

size_t ust_sym_file_build_id(const struct ust_sym_file *f, const uint8_t **id)
{
	if (!f || !f->build_id_len) {
		if (id)
			*id = NULL;
		return 0;
	}
	if (id)
		*id = f->build_id;
	return f->build_id_len;
}

size_t ust_sym_read_build_id(const char *path, uint8_t *out, size_t max)
{
	uint8_t id[UST_SYM_BUILD_ID_MAX];
	struct ust_sym_elf e;
	size_t len;

	if (!path || ust_sym_elf_open(&e, path, NULL, 0) != 0)
		return 0;
	len = ust_sym_elf_build_id(e.elf, id, sizeof(id));
	ust_sym_elf_close(&e);
	if (!len || len > max)
		return 0;
	memcpy(out, id, len);
	return len;
}
