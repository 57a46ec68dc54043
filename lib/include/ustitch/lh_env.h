/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_lh_env: what the running kernel offers lock_held() (struct
 * ust_lh_env of ustitch/lh.h), asked of the kernel itself: kallsyms, slab
 * caches (through BPF), its BTF, tracefs, and an attempt to load a tracing
 * program.  The language (lib/lockheld/) only sees the callbacks, so unit
 * tests can describe any kernel; this is the recorder's side.
 */
#ifndef USTITCH_LH_ENV_H
#define USTITCH_LH_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "ustitch/lh.h"

/* A slab cache's kmem_cache address, by name (lib/record/lh_slab.c).  0, or a
 * negative errno (-ENOENT: no such cache, or slab_caches not in kallsyms;
 * -ENAMETOOLONG; the BPF walk's; -ENOTSUP without BPF) with why in @err. */
int ust_lh_slab_addr(const char *name, uint64_t *addr, char *err, size_t errsz);

/* The running kernel (probes once; the strings live until exit). */
const struct ust_lh_env *ust_lh_env_live(void);

#endif
