/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_ldso: the files the dynamic loader will map for a program, before
 * it runs (lib/record/ldso.c).
 */
#ifndef USTITCH_LDSO_H
#define USTITCH_LDSO_H

/* Called once per file (a real path), the program first; its return value is ignored. */
typedef int (*ust_ldso_fn)(const char *path, void *ctx);

/*
 * @path, its PT_INTERP and its DT_NEEDED closure, each once.  Returns how
 * many files @fn was given, -ENOENT when @path cannot be read.
 */
int ust_ldso_deps(const char *path, ust_ldso_fn fn, void *ctx);

#endif
