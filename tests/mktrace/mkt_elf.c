// SPDX-License-Identifier: LGPL-2.1
/*
 * ELF reads for the bench generator and for `mapping` lines.  Deliberately
 * independent of lib/sym*.c: fixtures that check the symbolizer must not be
 * computed by the symbolizer.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mkt.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		return NULL;
	}
	return e;
}

/* File offset of @vaddr if an executable PT_LOAD maps it. */
static bool vaddr_to_off(Elf *e, uint64_t vaddr, uint64_t *off)
{
	GElf_Phdr ph;
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0)
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

static Elf_Scn *find_symtab(Elf *e, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_entsize)
			return scn;
	return NULL;
}

int ust_mkt_elf_functions(const char *path, struct ust_mkt_func **out, size_t *nr,
			  char *err, size_t errlen)
{
	struct ust_mkt_func *v = NULL, *nv;
	size_t n = 0, cap = 0, i, count;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;
	uint64_t off;
	const char *name;
	Elf *e;
	int fd;

	*out = NULL;
	*nr = 0;
	e = open_elf(path, &fd);
	if (!e) {
		snprintf(err, errlen, "%s: not a readable ELF file", path);
		return -1;
	}
	scn = find_symtab(e, SHT_SYMTAB, &sh);
	if (!scn)
		scn = find_symtab(e, SHT_DYNSYM, &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	count = data ? sh.sh_size / sh.sh_entsize : 0;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_size || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!name || !name[0] || !vaddr_to_off(e, sym.st_value, &off))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n].name = strdup(name);
		if (!v[n].name)
			goto nomem;
		v[n].file_off = off;
		v[n].size = sym.st_size;
		n++;
	}
	elf_end(e);
	close(fd);
	if (!n) {
		free(v);
		snprintf(err, errlen, "%s: no function symbols", path);
		return -1;
	}
	*out = v;
	*nr = n;
	return 0;
nomem:
	ust_mkt_free_functions(v, n);
	elf_end(e);
	close(fd);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ust_mkt_free_functions(struct ust_mkt_func *f, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(f[i].name);
	free(f);
}

size_t ust_mkt_elf_build_id(const char *path, uint8_t *out, size_t max)
{
	size_t len = 0, off, name_off, desc_off;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	Elf *e;
	int fd;

	e = open_elf(path, &fd);
	if (!e)
		return 0;
	while (!len && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		for (off = 0; data && !len &&
		     (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0;) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz && nh.n_descsz <= max) {
				memcpy(out, (char *)data->d_buf + desc_off, nh.n_descsz);
				len = nh.n_descsz;
			}
		}
	}
	elf_end(e);
	close(fd);
	return len;
}
