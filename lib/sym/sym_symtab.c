// SPDX-License-Identifier: LGPL-2.1
/*
 * Function symbols of one ELF symbol table, sorted once by address so
 * that every lookup is a binary search.
 *
 * Several names often share one address (glibc: getppid is a weak alias
 * of __getppid; C++: complete and base constructors).  The sort order
 * puts the preferred alias first in its address group, so the choice is
 * deterministic and the same on every run: a global symbol over a weak
 * one over a local one, then one with a size over one without, then the
 * name with fewer leading underscores (the public spelling), then the
 * lexically smaller name.
 *
 * Names in a .symtab may carry the symbol version the way the assembler
 * spells it ("fopen@@GLIBC_2.2.5", "memcpy@GLIBC_2.2.5"): they are shown
 * without it, as in .dynsym, and an old version ("@") ranks below the
 * default one ("@@") when a name is looked up.
 */
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "ustitch/elfprog.h"
#include "sym_internal.h"
#include "ustitch/grow.h"

static uint8_t bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct ust_sym_ent *a = pa, *b = pb;
	size_t ua, ub;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->sized != b->sized)
		return a->sized ? -1 : 1;
	if (a->old_version != b->old_version)
		return a->old_version ? 1 : -1;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}

/*
 * @e sorted by cmp_ent(): by address with a stable radix sort, 11 bits a
 * pass (a pass whose digit all entries share is skipped: a file's
 * addresses fit in 32 bits or so), then each group of one address by
 * cmp_ent() itself.  qsort() with cmp_ent() as its only key was 3 % of a
 * report of cc1plus's stacks (31,000 symbols in its .dynsym), every time
 * the file is loaded.  Without memory for the second array: qsort().
 */
#define RADIX_BITS	11

static void sort_ents(struct ust_sym_ent *e, size_t n)
{
	struct ust_sym_ent *tmp = malloc(n * sizeof(*e)), *src = e, *dst = tmp, *sw, x;
	size_t cnt[1 << RADIX_BITS], i, j, k, sum;
	unsigned int shift;

	if (!tmp) {
		qsort(e, n, sizeof(*e), cmp_ent);
		return;
	}
	for (shift = 0; shift < 64; shift += RADIX_BITS) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i].addr >> shift) & ((1U << RADIX_BITS) - 1)]++;
		if (cnt[(src[0].addr >> shift) & ((1U << RADIX_BITS) - 1)] == n)
			continue;
		for (i = 0, sum = 0; i < (1U << RADIX_BITS); i++) {
			k = cnt[i];
			cnt[i] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i].addr >> shift) & ((1U << RADIX_BITS) - 1)]++] = src[i];
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != e)
		memcpy(e, src, n * sizeof(*e));
	free(tmp);
	/* The aliases of one address: a few at most, by insertion. */
	for (i = 1; i < n; i++) {
		if (e[i].addr != e[i - 1].addr || cmp_ent(&e[i - 1], &e[i]) <= 0)
			continue;
		x = e[i];
		for (j = i; j > 0 && e[j - 1].addr == x.addr && cmp_ent(&e[j - 1], &x) > 0; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
}

/* Where the section holding a symbol ends: the last bound of a sizeless one. */
static uint64_t section_end(Elf *elf, size_t shnum, const GElf_Sym *sym)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
	    sym->st_shndx >= shnum)
		return 0;
	scn = elf_getscn(elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	if (sym->st_value < sh.sh_addr || sym->st_value >= sh.sh_addr + sh.sh_size)
		return 0;
	return sh.sh_addr + sh.sh_size;
}

static Elf_Scn *find_table(Elf *elf, GElf_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN	0x8000
#endif

/* The .gnu.version entries parallel to a .dynsym of @count symbols. */
static Elf_Data *version_table(Elf *elf, size_t count)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym) {
			d = elf_getdata(scn, NULL);
			return d && d->d_size / sizeof(GElf_Versym) >= count ? d : NULL;
		}
	return NULL;
}

/*
 * The longest entry stub that has no CFI of its own: the dynamic loader's
 * _start and _dl_start_user, about 80 bytes (crt1.o's _start, 34 bytes,
 * has an FDE and is measured by it).
 */
#define ENTRY_STUB_MAX 128

/* How far the entry stub at @entry runs: its FDE's range, else up to
 * ENTRY_STUB_MAX bytes of its section (ending at @sec_end). */
static uint64_t entry_size(Elf *elf, uint64_t entry, uint64_t sec_end)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	uint64_t end = sec_end - entry > ENTRY_STUB_MAX ? entry + ENTRY_STUB_MAX : sec_end;
	Dwarf_Frame *frame;

	if (cfi && !dwarf_cfi_addrframe(cfi, entry, &frame)) {
		Dwarf_Addr start, fend;

		if (dwarf_frame_info(frame, &start, &fend, NULL) >= 0 && start <= entry &&
		    fend > entry && fend <= sec_end)
			end = fend;
		free(frame);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	return end - entry;
}

/*
 * A program's entry point is where the kernel starts its first thread: the
 * outermost frame of every stack of it.  Stripped programs (Debian's: sh,
 * sort, the dynamic loader) have no symbol there in .dynsym; the
 * toolchain's name for it is _start (crt1.o, ld.so's own), and a stack
 * that reaches it reads as whole.  Added to @ents[@n] (room for one)
 * when no function symbol starts there or covers it: 1, else 0.  Sized to
 * the stub alone: the unnamed functions after it stay unnamed.
 */
static size_t entry_name(Elf *elf, struct ust_sym_ent *ents, size_t n)
{
	Elf_Scn *scn = NULL;
	uint64_t entry;
	size_t i;

	if (!ust_elfprog_entry(elf, &entry))
		return 0;
	for (i = 0; i < n; i++)
		if (ents[i].addr == entry ||
		    (ents[i].sized && entry > ents[i].addr && entry - ents[i].addr < ents[i].size))
			return 0;
	while ((scn = elf_nextscn(elf, scn))) {	/* the section holding it */
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && entry >= sh.sh_addr &&
		    entry - sh.sh_addr < sh.sh_size) {
			memset(&ents[n], 0, sizeof(ents[n]));
			ents[n].addr = entry;
			ents[n].name = "_start";
			ents[n].rank = bind_rank(STB_GLOBAL);
			ents[n].sized = true;
			ents[n].size = entry_size(elf, entry, sh.sh_addr + sh.sh_size);
			return 1;
		}
	}
	return 0;
}

int ust_sym_tab_load(struct ust_sym_tab *t, Elf *elf, GElf_Word type)
{
	size_t shnum, count, i, n = 0, k;
	Elf_Data *versym = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;

	memset(t, 0, sizeof(*t));
	t->origin = type == SHT_SYMTAB ? ".symtab" : ".dynsym";
	scn = find_table(elf, type, &sh);
	if (!scn || elf_getshdrnum(elf, &shnum) != 0)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;
	count = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!count)
		return 0;
	/* .dynsym names carry no "@VERSION": the hidden bit of .gnu.version does. */
	if (type == SHT_DYNSYM)
		versym = version_table(elf, count);

	/* One more: a stripped program's entry point (entry_name()). */
	t->ents = malloc((count + 1) * sizeof(*t->ents));
	if (!t->ents)
		return -1;

	for (i = 0; i < count; i++) {
		unsigned char st;
		const char *name, *at;
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		st = GELF_ST_TYPE(sym.st_info);
		if ((st != STT_FUNC && st != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		t->ents[n].old_version = false;
		if (versym) {
			GElf_Versym vs;

			if (gelf_getversym(versym, (int)i, &vs) && (vs & VERSYM_HIDDEN))
				t->ents[n].old_version = true;
		}
		if ((at = strchr(name, '@')) && at != name) {
			char **owned = ust_grow(t->owned, &t->cap_owned, t->nr_owned + 1,
						sizeof(*owned), 16);
			char *cut = strndup(name, (size_t)(at - name));

			if (!owned || !cut) {
				free(cut);
				if (owned)
					t->owned = owned;
				ust_sym_tab_free(t);
				return -1;
			}
			t->owned = owned;
			t->owned[t->nr_owned++] = cut;
			t->ents[n].old_version = at[1] != '@';
			name = cut;
		}
		t->ents[n].addr = sym.st_value;
		t->ents[n].size = sym.st_size;
		t->ents[n].sized = sym.st_size != 0;
		t->ents[n].name = name;
		t->ents[n].rank = bind_rank(GELF_ST_BIND(sym.st_info));
		/* Stash the bound in size until sorted; see below. */
		if (!sym.st_size)
			t->ents[n].size = section_end(elf, shnum, &sym);
		n++;
	}
	n += entry_name(elf, t->ents, n);
	t->nr = n;
	if (!n) {
		free(t->ents);
		t->ents = NULL;
		return 0;
	}
	sort_ents(t->ents, n);

	t->prim = malloc(n * sizeof(*t->prim));
	if (!t->prim) {
		ust_sym_tab_free(t);
		return -1;
	}
	for (i = 0; i < n; i = k) {
		uint64_t next = 0;
		bool has_next;

		for (k = i + 1; k < n && t->ents[k].addr == t->ents[i].addr; k++)
			;
		t->prim[t->nr_prim++] = (uint32_t)i;
		has_next = k < n;
		if (has_next)
			next = t->ents[k].addr;
		/* A sizeless symbol runs to the next symbol or its section's end. */
		for (size_t j = i; j < k; j++) {
			struct ust_sym_ent *e = &t->ents[j];
			uint64_t end = e->size;	/* the section end stashed above */

			if (e->sized)
				continue;
			if (has_next && (!end || next < end))
				end = next;
			e->size = end > e->addr ? end - e->addr : 0;
		}
	}
	return 0;
}

void ust_sym_tab_free(struct ust_sym_tab *t)
{
	free(t->ents);
	free(t->prim);
	free(t->by_name);
	while (t->nr_owned)
		free(t->owned[--t->nr_owned]);
	free(t->owned);
	memset(t, 0, sizeof(*t));
}

const struct ust_sym_ent *ust_sym_tab_lookup(const struct ust_sym_tab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_prim, k, j;

	/* The last address group starting at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ents[t->prim[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	k = lo - 1;
	/*
	 * Usually that symbol covers @addr or nothing does (padding between
	 * functions).  A few symbols nest (a sized function enclosing a
	 * label typed as function): look back a little for an enclosing one.
	 */
	for (j = 0; j < 4 && j <= k; j++) {
		const struct ust_sym_ent *e = &t->ents[t->prim[k - j]];

		if (addr - e->addr < e->size)
			return e;
	}
	return NULL;
}

static int cmp_name(const void *pa, const void *pb, void *arg)
{
	const struct ust_sym_ent *ents = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int r = strcmp(ents[a].name, ents[b].name);

	if (r)
		return r;
	/* Same name: the default version, then the best-ranked, then by address. */
	if (ents[a].old_version != ents[b].old_version)
		return ents[a].old_version ? 1 : -1;
	if (ents[a].rank != ents[b].rank)
		return ents[a].rank < ents[b].rank ? -1 : 1;
	return a < b ? -1 : a > b;
}

const struct ust_sym_ent *ust_sym_tab_find_name(struct ust_sym_tab *t, const char *name)
{
	size_t lo = 0, hi = t->nr, i;

	if (!t->nr)
		return NULL;
	if (!t->by_name) {
		/* Built on first use only: lookups by address never need it. */
		t->by_name = malloc(t->nr * sizeof(*t->by_name));
		if (!t->by_name)
			return NULL;
		for (i = 0; i < t->nr; i++)
			t->by_name[i] = (uint32_t)i;
		qsort_r(t->by_name, t->nr, sizeof(*t->by_name), cmp_name, t->ents);
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->ents[t->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nr && strcmp(t->ents[t->by_name[lo]].name, name) == 0)
		return &t->ents[t->by_name[lo]];
	return NULL;
}
