// SPDX-License-Identifier: LGPL-2.1
/*
 * libustlt-cfi-dl.so: dlopen()ed by ust-lttng-cfi-app, dlclose()d, and
 * dlopen()ed again at another address; its frames lie between the
 * application's and libustlt-cfi.so's cfi_emit().
 */
#include "ust_lttng_cfi.h"

CFI_NOINLINE static void dl_mid(int tag)
{
	cfi_emit(tag, 0);
	cfi_sink++;
}

CFI_NOINLINE void dl_entry(int tag)
{
	dl_mid(tag);
	cfi_sink++;
}
