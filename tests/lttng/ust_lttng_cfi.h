/* SPDX-License-Identifier: LGPL-2.1 */
/* ust-lttng-cfi-app and its libraries (all -O2 -fomit-frame-pointer). */
#ifndef UST_LTTNG_CFI_H
#define UST_LTTNG_CFI_H

/* Kept as a frame of its own under its own name (no clone, no inlining). */
#ifdef __clang__
#define CFI_NOINLINE __attribute__((noinline))
#else
#define CFI_NOINLINE __attribute__((noipa))
#endif

extern volatile int cfi_sink;
void cfi_emit(int tag, int n);
void lib_entry(int tag);

#endif
