// SPDX-License-Identifier: LGPL-2.1
/*
 * cfi-dl: dlopen()ed by cfi-prog's dlopen scenario, never linked, built
 * -O2 -fomit-frame-pointer like the program: a file the recorder cannot
 * know before the program maps it.  Its chain makes its system call as
 * soon as it is loaded, before any walk could have asked for its table.
 *   cfi_dl_entry -> cfi_dl_b -> cfi_dl_c: raw getresuid
 */
#include "cfi-sys.h"

volatile long cfi_dl_sink;

CFI_FN void cfi_dl_c(void)
{
	cfi_dl_sink += cfi_sys2(SYS_getresuid, 0, 0);	/* EFAULT: the entry is what counts */
}

CFI_FN void cfi_dl_b(void)
{
	cfi_dl_c();
	cfi_dl_sink++;
}

CFI_FN void cfi_dl_entry(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_dl_b();
	cfi_dl_sink++;
}
