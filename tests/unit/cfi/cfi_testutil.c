// SPDX-License-Identifier: LGPL-2.1
/*
 * ELF facts for the ust_cfi tests, read with libelf directly.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi_testutil.h"

static Elf *open_elf(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	if (*fd < 0)
		return NULL;
	return elf_begin(*fd, ELF_C_READ, NULL);
}

static void close_elf(Elf *e, int fd)
{
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

int ct_load_segs(const char *path, struct ct_segs *out)
{
	size_t n, i;
	int fd;
	Elf *e = open_elf(path, &fd);

	memset(out, 0, sizeof(*out));
	if (!e || elf_getphdrnum(e, &n) != 0) {
		close_elf(e, fd);
		return -1;
	}
	out->s = calloc(n ? n : 1, sizeof(*out->s));
	for (i = 0; out->s && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
			out->s[out->nr++] = (struct ct_seg){ ph.p_vaddr, ph.p_filesz, ph.p_offset,
							     (ph.p_flags & PF_X) != 0 };
	}
	close_elf(e, fd);
	return out->s ? 0 : -1;
}

void ct_free_segs(struct ct_segs *s)
{
	free(s->s);
	memset(s, 0, sizeof(*s));
}

static const struct ct_seg *seg_of(const struct ct_segs *s, uint64_t vaddr)
{
	int i;

	/* Executable first: that is the image a pc is in. */
	for (i = 0; i < s->nr; i++)
		if (s->s[i].exec && vaddr >= s->s[i].vaddr && vaddr - s->s[i].vaddr < s->s[i].filesz)
			return &s->s[i];
	for (i = 0; i < s->nr; i++)
		if (vaddr >= s->s[i].vaddr && vaddr - s->s[i].vaddr < s->s[i].filesz)
			return &s->s[i];
	return NULL;
}

int ct_seg_off(const struct ct_segs *s, uint64_t vaddr, uint64_t *off)
{
	const struct ct_seg *g = seg_of(s, vaddr);

	if (!g)
		return -1;
	*off = vaddr - g->vaddr + g->off;
	return 0;
}

bool ct_seg_exec(const struct ct_segs *s, uint64_t vaddr)
{
	const struct ct_seg *g = seg_of(s, vaddr);

	return g && g->exec;
}

static int section(const char *path, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd, ret = -1;
	Elf *e = open_elf(path, &fd);

	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0) {
		close_elf(e, fd);
		return -1;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (gelf_getshdr(scn, out) && (n = elf_strptr(e, shstrndx, out->sh_name)) &&
		    strcmp(n, name) == 0) {
			ret = 0;
			break;
		}
	}
	close_elf(e, fd);
	return ret;
}

int ct_section(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr sh;

	if (section(path, name, &sh))
		return -1;
	*addr = sh.sh_addr;
	*size = sh.sh_size;
	return 0;
}

int ct_section_off(const char *path, const char *name, uint64_t *off)
{
	GElf_Shdr sh;

	if (section(path, name, &sh))
		return -1;
	*off = sh.sh_offset;
	return 0;
}

int ct_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	int fd, ret = -1;
	Elf *e = open_elf(path, &fd);

	while (e && ret && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				*addr = sym.st_value;
				*size = sym.st_size;
				ret = 0;
				break;
			}
		}
	}
	close_elf(e, fd);
	return ret;
}

uint64_t ct_entry(const char *path)
{
	GElf_Ehdr eh;
	uint64_t entry = 0;
	int fd;
	Elf *e = open_elf(path, &fd);

	if (e && gelf_getehdr(e, &eh))
		entry = eh.e_entry;
	close_elf(e, fd);
	return entry;
}
