// SPDX-License-Identifier: LGPL-2.1
/*
 * Data symbols of an ELF file, for naming locks: a pthread mutex is a
 * variable, not code, and ust_sym indexes functions only.  One sorted
 * table per file, from .symtab (else .dynsym), built on first use.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ust_bt2.h"

struct dsym {
	uint64_t addr, size;
	char *name;
	bool named;		/* demangled when asked for, once */
};

struct dfile {
	struct dfile *next;
	char *path;
	struct dsym *syms;
	size_t nr;
};

struct ust_bt2_datasym {
	struct dfile *files;
	bool demangle;
};

struct ust_bt2_datasym *ust_bt2_datasym_new(bool demangle)
{
	struct ust_bt2_datasym *d = calloc(1, sizeof(*d));

	if (d)
		d->demangle = demangle;
	return d;
}

void ust_bt2_datasym_free(struct ust_bt2_datasym *d)
{
	if (!d)
		return;
	while (d->files) {
		struct dfile *f = d->files;

		d->files = f->next;
		for (size_t i = 0; i < f->nr; i++)
			free(f->syms[i].name);
		free(f->syms);
		free(f->path);
		free(f);
	}
	free(d);
}

static int cmp_dsym(const void *a, const void *b)
{
	const struct dsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void load_table(struct dfile *f, Elf *elf, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n, i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		f->syms = calloc(n ? n : 1, sizeof(*f->syms));
		if (!f->syms)
			return;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int t;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			t = GELF_ST_TYPE(sym.st_info);
			if ((t != STT_OBJECT && t != STT_COMMON) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_size)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			f->syms[f->nr].addr = sym.st_value;
			f->syms[f->nr].size = sym.st_size;
			f->syms[f->nr].name = strdup(name);
			if (f->syms[f->nr].name)
				f->nr++;
		}
		qsort(f->syms, f->nr, sizeof(*f->syms), cmp_dsym);
		return;
	}
}

static struct dfile *open_file(struct ust_bt2_datasym *d, const char *path)
{
	struct dfile *f;
	Elf *elf;
	int fd;

	for (f = d->files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->next = d->files;
	d->files = f;		/* failures are remembered as empty tables */
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return f;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		load_table(f, elf, SHT_SYMTAB);
		if (!f->nr) {
			free(f->syms);
			f->syms = NULL;
			load_table(f, elf, SHT_DYNSYM);
		}
		elf_end(elf);
	}
	close(fd);
	return f;
}

const char *ust_bt2_datasym_lookup(struct ust_bt2_datasym *d, const char *path,
				   uint64_t vaddr, uint64_t *off)
{
	struct dfile *f = path ? open_file(d, path) : NULL;
	struct dsym *hit;
	size_t lo = 0, hi;
	char *dm;

	if (!f || !f->nr)
		return NULL;
	/* The last symbol starting at or below vaddr. */
	hi = f->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	hit = lo ? &f->syms[lo - 1] : NULL;
	if (!hit || vaddr - hit->addr >= hit->size)
		return NULL;
	/* A C++ variable (ns::lock) as its functions' frames are named; only
	 * the few named, not the whole table. */
	if (d->demangle && !hit->named && (dm = ust_sym_demangle(hit->name))) {
		free(hit->name);
		hit->name = dm;
	}
	hit->named = true;
	*off = vaddr - hit->addr;
	return hit->name;
}
