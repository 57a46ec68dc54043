// SPDX-License-Identifier: LGPL-2.1
/*
 * libustlt-cfi.so: the shared library of ust-lttng-cfi-app, built like it
 * with -O2 -fomit-frame-pointer.  It holds the ustlt tracepoint provider
 * (so the probe has no frame pointer either) and cfi_emit(), a leaf whose
 * only call is the tracepoint.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ust_lttng_app_tp.h"
#include "ust_lttng_cfi.h"

volatile int cfi_sink;

CFI_NOINLINE void cfi_emit(int tag, int n)
{
	lttng_ust_tracepoint(ustlt, work, tag, n);
	cfi_sink++;
}

CFI_NOINLINE static void lib_mid(int tag)
{
	cfi_emit(tag, 0);
	cfi_sink++;
}

CFI_NOINLINE void lib_entry(int tag)
{
	lib_mid(tag);
	cfi_sink++;
}
