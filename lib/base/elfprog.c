// SPDX-License-Identifier: LGPL-2.1
/* ust_elfprog: is this ELF file a program the kernel starts; see elfprog.h. */
#include <stddef.h>

#include "ustitch/elfprog.h"

static bool has_interp(Elf *elf)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

static bool needs_library(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (k = 0; d && k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)k, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_NEEDED)
				return true;
		}
	}
	return false;
}

bool ust_elfprog_entry(Elf *elf, uint64_t *entry)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || !eh.e_entry)
		return false;
	if (eh.e_type != ET_EXEC &&
	    (eh.e_type != ET_DYN || (!has_interp(elf) && needs_library(elf))))
		return false;
	if (entry)
		*entry = eh.e_entry;
	return true;
}
