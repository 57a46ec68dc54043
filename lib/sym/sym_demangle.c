// SPDX-License-Identifier: LGPL-2.1
/*
 * Symbol names as perf prints them: C++ and Rust (legacy and v0) names
 * demangled by libiberty's cplus_demangle with the flags perf uses.  The
 * demangler is GCC's own, maintained with the ABIs; ustitch has none.
 *
 * A report names the same few functions over and over: each file keeps
 * what its names became, keyed by the name's address (its string table,
 * or libdw's, lives as long as the file), so a name is demangled once.
 */
#include <stdint.h>
#include <stdlib.h>

#include <libiberty/demangle.h>

#include "sym_internal.h"

/*
 * DMGL_AUTO tries Rust first (a legacy Rust name is also a valid C++ name),
 * then the C++ ABI; those two paths allocate with malloc() and return NULL
 * on failure, never exit (libiberty's xmalloc is reached only by styles
 * not asked for here).
 */
#define DEMANGLE_FLAGS	(DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)

char *ust_sym_demangle(const char *name)
{
	/* Every C++ (_Z) and Rust (_ZN..., _R) name starts with '_': the
	 * rest (main, C functions) is not asked. */
	if (!name || name[0] != '_')
		return NULL;
	return cplus_demangle(name, DEMANGLE_FLAGS);
}

void ust_sym_dm_init(struct ust_sym_dm *d)
{
	ust_hmap_init(&d->names);
}

void ust_sym_dm_fini(struct ust_sym_dm *d)
{
	uint64_t key, val;
	size_t pos = 0;

	while (ust_hmap_next(&d->names, &pos, &key, &val))
		free((char *)(uintptr_t)val);
	ust_hmap_fini(&d->names);
}

const char *ust_sym_dm_name(struct ust_sym_dm *d, const char *name)
{
	uint64_t key = (uint64_t)(uintptr_t)name, val;
	char *dm;

	if (!name || name[0] != '_')
		return name;
	if (ust_hmap_get(&d->names, key, &val))
		return val ? (const char *)(uintptr_t)val : name;
	/* 0: not a mangled name (or out of memory), shown as it is. */
	dm = ust_sym_demangle(name);
	if (ust_hmap_put(&d->names, key, (uint64_t)(uintptr_t)dm) != 0) {
		free(dm);
		return name;
	}
	return dm ? dm : name;
}
