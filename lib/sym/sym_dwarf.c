// SPDX-License-Identifier: LGPL-2.1
/*
 * Source lines and inlined frames from DWARF, through libdw.
 *
 * Two indexes make the per-frame path a pair of binary searches and a
 * short descent, never a scan of the whole debug info:
 *  - the unit index (built at open): every compile unit's address ranges,
 *    from its own DW_AT_ranges / low_pc+high_pc.  .debug_aranges is only
 *    a fallback: clang does not emit it by default.
 *  - per unit, on its first lookup: the address ranges of its concrete
 *    subprograms (also in namespaces and dwz-imported partial units).
 * The descent from the subprogram follows the children whose ranges hold
 * the address: each DW_TAG_inlined_subroutine on the way is one inlined
 * frame, and its DW_AT_call_file/call_line is the source position in the
 * frame that encloses it.  libdw caches the line tables and abbrevs.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "sym_internal.h"

/* Deeper inline chains than this are cut (the innermost levels kept). */
#define MAX_INLINE_DEPTH	64
/* Namespace/imported-unit nesting followed when indexing subprograms. */
#define MAX_SCOPE_DEPTH		16

struct dw_func {
	uint64_t lo, hi;
	Dwarf_Off die;
};

struct dw_unit {
	Dwarf_Off die;
	struct dw_func *funcs;
	size_t nr_funcs;
	bool indexed;
};

struct dw_range {
	uint64_t lo, hi;
	size_t unit;
};

/* A relative source name joined to its unit's DW_AT_comp_dir, made once. */
struct dw_path {
	const char *dir, *name;		/* libdw's strings: stable, the key */
	char *joined;
};

struct ust_sym_dwarf {
	Dwarf *dw;
	struct dw_path *paths;		/* open addressing, by (dir, name) */
	size_t paths_cap, nr_paths;
	struct dw_unit *units;		/* in .debug_info order */
	size_t nr_units;
	struct dw_range *ranges;	/* by lo */
	size_t nr_ranges;
};

/* Room for one more element in a growable array; -1 when out of memory. */
#define DW_GROW(arr, cap, nr) \
	({ void *n_ = ust_grow((arr), (cap), (nr) + 1, sizeof(*(arr)), 64); \
	   n_ ? ((arr) = n_, 0) : -1; })

static int cmp_range(const void *pa, const void *pb)
{
	const struct dw_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi > b->hi ? -1 : a->hi < b->hi;
}

static int cmp_func(const void *pa, const void *pb)
{
	const struct dw_func *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi > b->hi ? -1 : a->hi < b->hi;
}

static int index_units(struct ust_sym_dwarf *d)
{
	size_t cap_units = 0, cap_ranges = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	Dwarf_Half version;

	while (dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		/* Type and partial units hold no code of their own. */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		if (DW_GROW(d->units, &cap_units, d->nr_units))
			return -1;
		memset(&d->units[d->nr_units], 0, sizeof(*d->units));
		d->units[d->nr_units].die = dwarf_dieoffset(&cudie);
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (DW_GROW(d->ranges, &cap_ranges, d->nr_ranges))
				return -1;
			d->ranges[d->nr_ranges++] = (struct dw_range){ lo, hi, d->nr_units };
		}
		d->nr_units++;
	}
	if (d->nr_ranges)
		qsort(d->ranges, d->nr_ranges, sizeof(*d->ranges), cmp_range);
	return 0;
}

struct ust_sym_dwarf *ust_sym_dwarf_open(Elf *elf)
{
	struct ust_sym_dwarf *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!d->dw || index_units(d) != 0 || !d->nr_units) {
		ust_sym_dwarf_close(d);
		return NULL;
	}
	return d;
}

void ust_sym_dwarf_close(struct ust_sym_dwarf *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr_units; i++)
		free(d->units[i].funcs);
	free(d->units);
	free(d->ranges);
	for (i = 0; i < d->paths_cap; i++)
		free(d->paths[i].joined);
	free(d->paths);
	if (d->dw)
		dwarf_end(d->dw);
	free(d);
}

static struct dw_unit *unit_by_offset(struct ust_sym_dwarf *d, Dwarf_Off off)
{
	size_t lo = 0, hi = d->nr_units;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->units[mid].die == off)
			return &d->units[mid];
		if (d->units[mid].die < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct dw_unit *find_unit(struct ust_sym_dwarf *d, uint64_t pc)
{
	size_t lo = 0, hi = d->nr_ranges, j;
	Dwarf_Die cudie;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of different units may interleave; look back a little. */
	for (j = lo; j > 0 && lo - j < 8; j--)
		if (pc < d->ranges[j - 1].hi)
			return &d->units[d->ranges[j - 1].unit];
	if (dwarf_addrdie(d->dw, pc, &cudie))
		return unit_by_offset(d, dwarf_dieoffset(&cudie));
	return NULL;
}

static int add_func(struct dw_unit *u, size_t *cap, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (DW_GROW(u->funcs, cap, u->nr_funcs))
			return -1;
		u->funcs[u->nr_funcs++] = (struct dw_func){ lo, hi, dwarf_dieoffset(die) };
	}
	return 0;
}

static int walk_scope(struct dw_unit *u, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Attribute attr;
	Dwarf_Die child, imported;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (add_func(u, cap, &child))
				return -1;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			if (walk_scope(u, cap, &child, depth + 1))
				return -1;
			break;
		case DW_TAG_imported_unit:
			if (dwarf_attr(&child, DW_AT_import, &attr) &&
			    dwarf_formref_die(&attr, &imported) &&
			    walk_scope(u, cap, &imported, depth + 1))
				return -1;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static void index_unit(struct ust_sym_dwarf *d, struct dw_unit *u)
{
	size_t cap = 0;
	Dwarf_Die cudie;

	u->indexed = true;
	if (!dwarf_offdie(d->dw, u->die, &cudie))
		return;
	if (walk_scope(u, &cap, &cudie, 0) != 0) {
		/* Out of memory: lines still work, inlines will not. */
		free(u->funcs);
		u->funcs = NULL;
		u->nr_funcs = 0;
		return;
	}
	if (u->nr_funcs)
		qsort(u->funcs, u->nr_funcs, sizeof(*u->funcs), cmp_func);
}

static const struct dw_func *find_func(const struct dw_unit *u, uint64_t pc)
{
	size_t lo = 0, hi = u->nr_funcs, j;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->funcs[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j > 0 && lo - j < 8; j--)
		if (pc < u->funcs[j - 1].hi)
			return &u->funcs[j - 1];
	return NULL;
}

static size_t path_slot(const struct dw_path *tab, size_t cap, const char *dir,
			const char *name)
{
	size_t i = (size_t)(((uintptr_t)dir * 31 + (uintptr_t)name) * 0x9e3779b97f4a7c15ULL >> 7) &
		   (cap - 1);

	while (tab[i].joined && (tab[i].dir != dir || tab[i].name != name))
		i = (i + 1) & (cap - 1);
	return i;
}

/*
 * Source names as eu-addr2line prints them: relative ones (the usual
 * case, "./malloc/malloc.c") prefixed with the unit's compilation
 * directory.  The joined strings are kept for the life of the file, so
 * frames can point at them like at libdw's own strings.
 */
static const char *abs_path(struct ust_sym_dwarf *d, Dwarf_Die *cu, const char *name)
{
	Dwarf_Attribute a;
	const char *dir;
	size_t i, len;

	if (!name || name[0] == '/' || !dwarf_attr(cu, DW_AT_comp_dir, &a) ||
	    !(dir = dwarf_formstring(&a)) || !*dir)
		return name;
	if ((d->nr_paths + 1) * 2 > d->paths_cap) {
		size_t ncap = d->paths_cap ? d->paths_cap * 2 : 64;
		struct dw_path *n = calloc(ncap, sizeof(*n));

		if (!n)
			return name;
		for (i = 0; i < d->paths_cap; i++)
			if (d->paths[i].joined)
				n[path_slot(n, ncap, d->paths[i].dir, d->paths[i].name)] =
					d->paths[i];
		free(d->paths);
		d->paths = n;
		d->paths_cap = ncap;
	}
	i = path_slot(d->paths, d->paths_cap, dir, name);
	if (d->paths[i].joined)
		return d->paths[i].joined;
	len = strlen(dir) + strlen(name) + 2;
	d->paths[i].joined = malloc(len);
	if (!d->paths[i].joined)
		return name;
	snprintf(d->paths[i].joined, len, "%s/%s", dir, name);
	d->paths[i].dir = dir;
	d->paths[i].name = name;
	d->nr_paths++;
	return d->paths[i].joined;
}

/* The linkage name when there is one, so that C++ frames read like symbols. */
static const char *die_name(Dwarf_Die *die)
{
	static const unsigned int attrs[] = {
		DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name,
	};
	Dwarf_Attribute a;
	const char *s;
	size_t i;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (dwarf_attr_integrate(die, attrs[i], &a) && (s = dwarf_formstring(&a)))
			return s;
	return NULL;
}

static void call_site(struct ust_sym_dwarf *d, Dwarf_Die *inl, const char **file,
		      unsigned int *line)
{
	Dwarf_Word idx = 0, ln = 0;
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(inl, DW_AT_call_line, &a) && dwarf_formudata(&a, &ln) == 0)
		*line = (unsigned int)ln;
	/* The file index is into the line table of the unit holding the DIE. */
	if (dwarf_attr(inl, DW_AT_call_file, &a) && dwarf_formudata(&a, &idx) == 0 &&
	    dwarf_diecu(inl, &cu, NULL, NULL) &&
	    dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = abs_path(d, &cu, dwarf_filesrc(files, idx, NULL, NULL));
}

/* The inlined subroutines holding @pc, outermost first; their count. */
static int inline_chain(Dwarf_Die *sub, uint64_t pc, Dwarf_Die *chain, int max)
{
	Dwarf_Die cur = *sub, child;
	int n = 0, depth;

	for (depth = 0; depth < 4 * MAX_INLINE_DEPTH; depth++) {
		bool found = false;

		if (dwarf_child(&cur, &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
			    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
				continue;
			if (dwarf_haspc(&child, pc) <= 0)
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				if (n == max) {
					/* Keep the innermost levels. */
					memmove(chain, chain + 1, (size_t)(max - 1) * sizeof(*chain));
					n--;
				}
				chain[n++] = child;
			}
			cur = child;
			found = true;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

int ust_sym_dwarf_frames(struct ust_sym_dwarf *d, uint64_t pc,
			 struct ust_sym_frame *out, int max, uint64_t *entry)
{
	Dwarf_Die chain[MAX_INLINE_DEPTH];
	const struct dw_func *fn;
	const char *file = NULL;
	unsigned int line = 0;
	struct dw_unit *u;
	Dwarf_Die cudie, sub;
	Dwarf_Line *l;
	Dwarf_Addr e;
	int n, i, nf = 0;

	if (max < 1 || !(u = find_unit(d, pc)) || !dwarf_offdie(d->dw, u->die, &cudie))
		return 0;
	l = dwarf_getsrc_die(&cudie, pc);
	if (l) {
		int ln = 0;

		file = abs_path(d, &cudie, dwarf_linesrc(l, NULL, NULL));
		if (dwarf_lineno(l, &ln) == 0 && ln > 0)
			line = (unsigned int)ln;
	}
	if (!u->indexed)
		index_unit(d, u);
	fn = find_func(u, pc);
	if (!fn || !dwarf_offdie(d->dw, fn->die, &sub)) {
		out[0] = (struct ust_sym_frame){ .src_file = file, .line = line };
		return 1;
	}

	/*
	 * Innermost first: the line table gives the position inside the
	 * innermost inlined body; each inlined DIE's call site is the
	 * position in the next frame out.  When @max cannot hold them all,
	 * the outer inline levels are dropped, never the subprogram.
	 */
	n = inline_chain(&sub, pc, chain, MAX_INLINE_DEPTH);
	for (i = n - 1; i >= 0; i--) {
		const char *cfile;
		unsigned int cline;

		if (nf < max - 1)
			out[nf++] = (struct ust_sym_frame){
				.func = die_name(&chain[i]), .src_file = file,
				.line = line, .inlined = true,
			};
		call_site(d, &chain[i], &cfile, &cline);
		file = cfile;
		line = cline;
	}
	out[nf++] = (struct ust_sym_frame){
		.func = die_name(&sub), .src_file = file, .line = line,
	};
	*entry = dwarf_entrypc(&sub, &e) == 0 ? e : fn->lo;
	return nf;
}
