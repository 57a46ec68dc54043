// SPDX-License-Identifier: LGPL-2.1
/*
 * Opening ELF files defensively, their build-id note and load segments.
 *
 * The files come from whatever a traced process had mapped, so any of
 * them may be truncated (a copy interrupted), corrupt or not ELF at all.
 * libelf checks little by itself when the file is mapped, so every table
 * we later walk (program headers, section headers, section contents) is
 * checked here once against the file size; the rest of ust_sym may then
 * trust offsets it reads through libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "sym_internal.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* [off, off + len) inside a file of @size bytes, without overflow. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int check_tables(Elf *elf, uint64_t size, char *err, size_t errlen)
{
	size_t phnum, shnum, shstrndx, i;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh))
		return fail(err, errlen, "truncated ELF");

	/*
	 * Ranges first, from the header's own counts (libelf would only say
	 * "invalid" on a cut file).  With PN_XNUM / e_shnum 0 the real count
	 * sits in section 0, which then must be in the file itself.
	 */
	if (eh.e_shoff && !in_file(eh.e_shoff, eh.e_shentsize ? eh.e_shentsize : 1, size))
		return fail(err, errlen, "truncated ELF");
	if (eh.e_phnum != PN_XNUM &&
	    !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize, size))
		return fail(err, errlen, "truncated ELF");
	if (eh.e_shnum && !in_file(eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize, size))
		return fail(err, errlen, "truncated ELF");

	if (elf_getphdrnum(elf, &phnum) != 0)
		return fail(err, errlen, "corrupt ELF: bad program header count");
	if (phnum && (eh.e_phentsize != gelf_fsize(elf, ELF_T_PHDR, 1, EV_CURRENT)))
		return fail(err, errlen, "corrupt ELF: bad program header size");
	if (phnum && !in_file(eh.e_phoff, (uint64_t)phnum * eh.e_phentsize, size))
		return fail(err, errlen, "truncated ELF");

	if (elf_getshdrnum(elf, &shnum) != 0)
		return fail(err, errlen, "corrupt ELF: bad section header count");
	if (shnum && (eh.e_shentsize != gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT)))
		return fail(err, errlen, "corrupt ELF: bad section header size");
	if (shnum && !in_file(eh.e_shoff, (uint64_t)shnum * eh.e_shentsize, size))
		return fail(err, errlen, "truncated ELF");
	if (shnum && (elf_getshdrstrndx(elf, &shstrndx) != 0 || shstrndx >= shnum))
		return fail(err, errlen, "corrupt ELF: bad section name table index");

	for (i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			return fail(err, errlen, "corrupt ELF: bad section header %zu", i);
		if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    !in_file(sh.sh_offset, sh.sh_size, size))
			return fail(err, errlen,
				    "corrupt ELF: section %zu lies outside the file", i);
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    (sh.sh_link == 0 || sh.sh_link >= shnum))
			return fail(err, errlen,
				    "corrupt ELF: symbol table %zu has no string table", i);
	}
	return 0;
}

int ust_sym_elf_open(struct ust_sym_elf *e, const char *path, char *err, size_t errlen)
{
	unsigned char ident[EI_NIDENT];
	struct stat st;
	ssize_t n;
	int fd;

	memset(e, 0, sizeof(*e));
	/* O_NONBLOCK: a FIFO must be refused, not waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fail(err, errlen, "%s", errno == ENOENT || errno == ENOTDIR ?
			    "no such file" : strerror(errno));
	if (fstat(fd, &st) != 0) {
		fail(err, errlen, "%s", strerror(errno));
		goto out_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(err, errlen, "not a regular file");
		goto out_fd;
	}
	/* libelf reads the whole file in when it cannot map it. */
	if ((uint64_t)st.st_size > UST_SYM_MAX_FILE) {
		fail(err, errlen, UST_SYM_MAX_FILE_TEXT);
		goto out_fd;
	}
	n = pread(fd, ident, sizeof(ident), 0);
	if (n < SELFMAG || memcmp(ident, ELFMAG, SELFMAG) != 0) {
		fail(err, errlen, "not an ELF file");
		goto out_fd;
	}
	if (n < EI_NIDENT) {
		fail(err, errlen, "truncated ELF");
		goto out_fd;
	}

	elf_version(EV_CURRENT);
	e->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf) {
		if (st.st_size < (off_t)sizeof(Elf64_Ehdr))
			fail(err, errlen, "truncated ELF");
		else
			fail(err, errlen, "corrupt ELF: %s", elf_errmsg(-1));
		goto out_fd;
	}
	if (elf_kind(e->elf) != ELF_K_ELF) {
		fail(err, errlen, "not an ELF file");
		goto out_elf;
	}
	if (check_tables(e->elf, (uint64_t)st.st_size, err, errlen) != 0)
		goto out_elf;
	/*
	 * Detach from the descriptor (the image is mapped, or read in when
	 * mapping failed) so that a cache of many files holds no fds.
	 */
	if (elf_cntl(e->elf, ELF_C_FDREAD) != 0) {
		fail(err, errlen, "corrupt ELF: %s", elf_errmsg(-1));
		goto out_elf;
	}
	close(fd);

	e->path = strdup(path);
	if (!e->path) {
		elf_end(e->elf);
		e->elf = NULL;
		return fail(err, errlen, "out of memory");
	}
	e->size = (uint64_t)st.st_size;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	return 0;

out_elf:
	elf_end(e->elf);
	e->elf = NULL;
out_fd:
	close(fd);
	return -1;
}

void ust_sym_elf_close(struct ust_sym_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	free(e->path);
	memset(e, 0, sizeof(*e));
}

Elf_Scn *ust_sym_elf_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

bool ust_sym_elf_has_data(Elf *elf, const char *name)
{
	GElf_Shdr sh;

	return ust_sym_elf_section(elf, name, &sh) && sh.sh_type != SHT_NOBITS &&
	       sh.sh_size > 0;
}

static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t max)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= max) {
			memcpy(out, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t ust_sym_elf_build_id(Elf *elf, uint8_t *out, size_t max)
{
	Elf_Scn *scn = NULL;
	size_t phnum, i, len;

	/* Sections first: a debug file keeps its notes there, with valid offsets. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && (len = note_build_id(d, out, max)))
			return len;
	}
	if (elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || !ph.p_filesz)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d && d->d_buf && (len = note_build_id(d, out, max)))
			return len;
	}
	return 0;
}

#define PAGE_MASK	((1ULL << UST_ABI_PAGE_SHIFT) - 1)

int ust_sym_elf_segments(Elf *elf, struct ust_sym_seg **segs, int *nr, bool *guessed)
{
	struct ust_sym_seg *s;
	size_t phnum, i;
	uint64_t prev_end = 0;
	int n = 0;

	*segs = NULL;
	*nr = 0;
	*guessed = false;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return -1;
	s = calloc(phnum ? phnum : 1, sizeof(*s));
	if (!s)
		return -1;

	/* objcopy --only-keep-debug empties the code segments' file image. */
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz == 0 && ph.p_memsz)
			*guessed = true;
	}

	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_memsz)
			continue;
		if (!*guessed) {
			if (!ph.p_filesz)
				continue;
			s[n].off = ph.p_offset;
			s[n].filesz = ph.p_filesz;
			s[n].vaddr = ph.p_vaddr;
			s[n].exec = ph.p_flags & PF_X;
		} else {
			/*
			 * The original offsets are lost: rebuild them the way
			 * linkers lay segments out, each at the first offset
			 * past the previous one that is congruent to its
			 * address modulo the page size (the kernel's only
			 * requirement for mmap).  Exact for ld.bfd, gold and
			 * lld; p_memsz stands in for the lost p_filesz.
			 */
			s[n].off = prev_end + ((ph.p_vaddr - prev_end) & PAGE_MASK);
			s[n].filesz = ph.p_memsz;
			s[n].vaddr = ph.p_vaddr;
			s[n].exec = ph.p_flags & PF_X;
			prev_end = s[n].off + ph.p_memsz;
		}
		n++;
	}
	*segs = s;
	*nr = n;
	return 0;
}
