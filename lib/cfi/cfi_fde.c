// SPDX-License-Identifier: LGPL-2.1
/*
 * The FDEs of one CFI section, the ranges they cover and their programs.
 *
 * libdw looks an FDE up by address but does not list them; dwarf_next_cfi
 * walks the entries yet leaves an FDE's initial location and range
 * encoded as its CIE says ('R' in the augmentation, DW_EH_PE_*).  This
 * file decodes just that: the augmentation data up to 'R', the two
 * encoded fields and where the FDE's instructions start (past its own
 * augmentation data); cfi_exec.c runs them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_internal.h"
#include "ustitch/grow.h"

#define PE_OMIT		0xff
#define PE_FMT(e)	((e) & 0x0f)
#define PE_APP(e)	((e) & 0x70)
#define PE_INDIRECT	0x80
enum { PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02, PE_udata4 = 0x03,
       PE_udata8 = 0x04, PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b,
       PE_sdata8 = 0x0c };
enum { PE_abs = 0x00, PE_pcrel = 0x10 };

int ust_cfi_read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	unsigned int shift = 0;

	*v = 0;
	while (p < end) {
		uint8_t b = *p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*pp = p;
			return 0;
		}
	}
	return -1;
}

int ust_cfi_read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
	const uint8_t *p = *pp;
	unsigned int shift = 0;
	uint64_t u = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (shift < 64)
			u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				u |= ~(uint64_t)0 << shift;
			*v = (int64_t)u;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* Little-endian fixed-size field (x86-64 only, as the row format). */
static int read_fixed(const uint8_t **pp, const uint8_t *end, size_t n, bool sign,
		      uint64_t *v)
{
	uint64_t u = 0;
	size_t i;

	if ((size_t)(end - *pp) < n)
		return -1;
	for (i = 0; i < n; i++)
		u |= (uint64_t)(*pp)[i] << (8 * i);
	if (sign && n < 8 && (u >> (8 * n - 1)) & 1)
		u |= ~(uint64_t)0 << (8 * n);
	*pp += n;
	*v = u;
	return 0;
}

int ust_cfi_read_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc,
			 uint64_t field_vaddr, bool apply, uint64_t *v)
{
	int64_t s;

	switch (PE_FMT(enc)) {
	case PE_absptr:
	case PE_udata8:
	case PE_sdata8:
		if (read_fixed(pp, end, 8, false, v))
			return -1;
		break;
	case PE_udata2:
	case PE_sdata2:
		if (read_fixed(pp, end, 2, PE_FMT(enc) == PE_sdata2, v))
			return -1;
		break;
	case PE_udata4:
	case PE_sdata4:
		if (read_fixed(pp, end, 4, PE_FMT(enc) == PE_sdata4, v))
			return -1;
		break;
	case PE_uleb128:
		if (ust_cfi_read_uleb(pp, end, v))
			return -1;
		break;
	case PE_sleb128:
		if (ust_cfi_read_sleb(pp, end, &s))
			return -1;
		*v = (uint64_t)s;
		break;
	default:
		return -1;
	}
	if (!apply)
		return 0;
	if (enc & PE_INDIRECT)
		return -1;
	switch (PE_APP(enc)) {
	case PE_abs:
		return 0;
	case PE_pcrel:
		*v += field_vaddr;
		return 0;
	default:		/* textrel, datarel, funcrel, aligned: not for FDEs on x86-64 */
		return -1;
	}
}

/*
 * The FDE pointer encoding of a CIE: its 'R' entry, absptr without one.
 * Also whether its FDEs carry augmentation data ('z') and are a signal
 * handler's ('S', which may come after 'R').
 */
static bool cie_encoding(const Dwarf_CIE *cie, uint8_t *enc, bool *zaug, bool *signal)
{
	const char *aug = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	uint64_t skip;

	*enc = PE_absptr;
	*zaug = false;
	*signal = aug && strchr(aug, 'S');
	if (!aug || !aug[0])
		return true;
	if (aug[0] != 'z' || !p)
		return false;	/* "eh" and other pre-'z' forms: data of unknown size */
	*zaug = true;
	for (aug++; *aug; aug++) {
		switch (*aug) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p;
			return true;
		case 'L':
			if (p >= end)
				return false;
			p++;
			break;
		case 'P':
			if (p >= end)
				return false;
			{
				uint8_t penc = *p++;

				if (ust_cfi_read_encoded(&p, end, penc, 0, false, &skip))
					return false;
			}
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* Unknown letters: 'R', if any, came before. */
			return true;
		}
	}
	return true;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct ust_cfi_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->sec_off < y->sec_off ? -1 : x->sec_off > y->sec_off;
}

static int cmp_cie(const void *a, const void *b)
{
	const struct ust_cfi_cie *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int ust_cfi_fde_list(Elf *elf, Elf_Scn *scn, bool eh, struct ust_cfi_fdes *out,
		     char *err, size_t errsz)
{
	const char *name = eh ? ".eh_frame" : ".debug_frame";
	struct ust_cfi_fde *fdes = NULL;
	struct ust_cfi_cie *cies = NULL;
	size_t nr = 0, cap = 0, nr_cie = 0, cap_cie = 0;
	const unsigned char *ident;
	Dwarf_Off off = 0, next;
	GElf_Shdr sh;
	Elf_Data *data;
	int ret;

	*out = (struct ust_cfi_fdes){ .eh = eh, .name = name };
	ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!ident || !gelf_getshdr(scn, &sh))
		return ust_cfi_fail(err, errsz, -ENOEXEC, "corrupt ELF: %s header", name);
	if (ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB)
		return ust_cfi_fail(err, errsz, -ENOEXEC, "not a 64-bit little-endian ELF");
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		return ust_cfi_fail(err, errsz, -EBADMSG, "%s: unreadable", name);

	/* Pass 1: the CIEs (an FDE may name a CIE that follows it). */
	while (off < data->d_size) {
		Dwarf_CFI_Entry ent;
		int r = dwarf_next_cfi(ident, data, eh, off, &next, &ent);

		if (r > 0)
			break;
		if (r < 0) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG, "corrupt %s at offset %#llx: %s",
					   name, (unsigned long long)off, dwarf_errmsg(-1));
			goto fail;
		}
		if (dwarf_cfi_cie_p(&ent)) {
			struct ust_cfi_cie *n = ust_grow(cies, &cap_cie, nr_cie + 1, sizeof(*n), 16);

			if (!n)
				goto nomem;
			cies = n;
			n = &cies[nr_cie++];
			*n = (struct ust_cfi_cie){
				.off = off,
				.insns = ent.cie.initial_instructions,
				.insns_end = ent.cie.initial_instructions_end,
				.code_align = ent.cie.code_alignment_factor,
				.data_align = ent.cie.data_alignment_factor,
			};
			n->ok = cie_encoding(&ent.cie, &n->enc, &n->zaug, &n->signal);
		}
		if (next <= off)
			break;
		off = next;
	}
	if (nr_cie)
		qsort(cies, nr_cie, sizeof(*cies), cmp_cie);

	/* Pass 2: the FDEs. */
	for (off = 0; off < data->d_size; off = next) {
		struct ust_cfi_cie key, *cie;
		struct ust_cfi_fde *n;
		Dwarf_CFI_Entry ent;
		const uint8_t *p, *end;
		uint64_t start, len, aug;
		int r = dwarf_next_cfi(ident, data, eh, off, &next, &ent);

		if (r != 0 || next <= off)
			break;	/* pass 1 saw the same */
		if (dwarf_cfi_cie_p(&ent))
			continue;
		key.off = ent.fde.CIE_pointer;
		cie = nr_cie ? bsearch(&key, cies, nr_cie, sizeof(*cies), cmp_cie) : NULL;
		if (!cie) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG,
					   "corrupt %s: FDE at offset %#llx names no CIE (%#llx)",
					   name, (unsigned long long)off,
					   (unsigned long long)ent.fde.CIE_pointer);
			goto fail;
		}
		if (!cie->ok) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG,
					   "%s: CIE at offset %#llx has an augmentation this reader does not know",
					   name, (unsigned long long)cie->off);
			goto fail;
		}
		p = ent.fde.start;
		end = ent.fde.end;
		if (ust_cfi_read_encoded(&p, end, eh ? cie->enc : PE_absptr,
					 sh.sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf),
					 true, &start) ||
		    ust_cfi_read_encoded(&p, end, eh ? (uint8_t)PE_FMT(cie->enc) : PE_absptr, 0,
					 false, &len)) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG,
					   "corrupt %s: FDE at offset %#llx: bad address encoding %#x",
					   name, (unsigned long long)off, cie->enc);
			goto fail;
		}
		/* 'z': the FDE's own augmentation data, skipped. */
		if (cie->zaug && (ust_cfi_read_uleb(&p, end, &aug) || aug > (uint64_t)(end - p))) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG,
					   "corrupt %s: FDE at offset %#llx: augmentation data past its end",
					   name, (unsigned long long)off);
			goto fail;
		}
		if (cie->zaug)
			p += aug;
		if (!len)
			continue;
		if (start + len < start) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG,
					   "corrupt %s: FDE at offset %#llx: range wraps around",
					   name, (unsigned long long)off);
			goto fail;
		}
		n = ust_grow(fdes, &cap, nr + 1, sizeof(*n), 256);
		if (!n)
			goto nomem;
		fdes = n;
		fdes[nr] = (struct ust_cfi_fde){
			.start = start,
			.end = start + len,
			.sec_off = off,
			.insns = p,
			.insns_end = end,
			.cie = cie,
		};
		nr++;
	}
	if (nr > INT32_MAX) {
		free(cies);
		free(fdes);
		return ust_cfi_fail(err, errsz, -ERANGE, "%s: too many FDEs", name);
	}
	if (nr)
		qsort(fdes, nr, sizeof(*fdes), cmp_fde);
	out->fdes = fdes;
	out->nr = (int)nr;
	out->cies = cies;
	out->sec_vaddr = sh.sh_addr;
	out->sec_base = data->d_buf;
	return (int)nr;

nomem:
	ret = ust_cfi_fail(err, errsz, -ENOMEM, "out of memory");
fail:
	free(cies);
	free(fdes);
	return ret;
}

void ust_cfi_fdes_free(struct ust_cfi_fdes *l)
{
	free(l->fdes);
	free(l->cies);
	l->fdes = NULL;
	l->cies = NULL;
	l->nr = 0;
}
