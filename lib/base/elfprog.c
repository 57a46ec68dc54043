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

/* Its dynamic section's DT_NEEDED and DT_SONAME: whether there are any. */
static void dynamic_tags(Elf *elf, bool *needed, bool *soname)
{
	Elf_Scn *scn = NULL;

	*needed = *soname = false;
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
			*needed |= dyn.d_tag == DT_NEEDED;
			*soname |= dyn.d_tag == DT_SONAME;
		}
	}
}

bool ust_elfprog_entry(Elf *elf, uint64_t *entry)
{
	bool needed, soname;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || !eh.e_entry)
		return false;
	if (eh.e_type != ET_EXEC) {
		if (eh.e_type != ET_DYN)
			return false;
		dynamic_tags(elf, &needed, &soname);
		if (has_interp(elf) ? soname : needed)
			return false;
	}
	if (entry)
		*entry = eh.e_entry;
	return true;
}
