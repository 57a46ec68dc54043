// SPDX-License-Identifier: LGPL-2.1
/*
 * cfi-lib: called by cfi-prog through its PLT (lazy binding), built
 * -O2 -fomit-frame-pointer like the program.
 *   cfi_lib_entry -> cfi_lib_inner (through this library's own PLT) -> getpriority
 *   cfi_lib_ifunc: an IFUNC; its resolver runs inside ld.so's lazy
 *   resolution (_dl_runtime_resolve_* -> _dl_fixup -> resolver) on the
 *   first call and makes getegid there.
 */
#include "cfi-lib.h"
#include "cfi-sys.h"

volatile long cfi_lib_sink;

CFI_FN void cfi_lib_inner(void);
CFI_FN void cfi_lib_inner(void)
{
	cfi_lib_sink += cfi_sys2(SYS_getpriority, 0 /* PRIO_PROCESS */, 0);
}

void cfi_lib_entry(void)
{
	cfi_lib_inner();
	cfi_lib_sink++;
}

static void cfi_lib_ifunc_impl(void)
{
	cfi_lib_sink++;
}

typedef void cfi_lib_fn(void);
CFI_FN cfi_lib_fn *cfi_lib_resolver(void);
CFI_FN cfi_lib_fn *cfi_lib_resolver(void)
{
	cfi_lib_sink += cfi_sys0(SYS_getegid);
	return cfi_lib_ifunc_impl;
}

void cfi_lib_ifunc(void) __attribute__((ifunc("cfi_lib_resolver")));
