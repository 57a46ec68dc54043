/* SPDX-License-Identifier: LGPL-2.1 */
/* cfi-lib: the shared library of cfi-prog (see cfi-prog.c). */
#ifndef CFI_LIB_H
#define CFI_LIB_H

void cfi_lib_entry(void);	/* -> cfi_lib_inner() -> getpriority */
void cfi_lib_ifunc(void);	/* an IFUNC: its resolver makes getegid */

#endif
