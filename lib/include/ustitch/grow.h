/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_grow: the one grow-by-doubling helper for arrays that are appended
 * to (vectors, byte buffers, the ring of a queue).  Hash tables that double
 * (ust_hmap in base/hmap.c, the resolver's map in resolve/res_map.c, the
 * DWARF reader's path set in sym/sym_dwarf.c) rehash every entry into a
 * new table instead of moving the old block, so they do not use it.
 */
#ifndef USTITCH_GROW_H
#define USTITCH_GROW_H

#include <stddef.h>

/*
 * Room for @need (>= 1) elements of @elem bytes in @arr, whose capacity
 * is *@cap: doubled (from @first when empty) until it holds @need.
 * Returns the array, moved or not (store it back), with *@cap updated; or
 * NULL when out of memory, and then @arr and *@cap are unchanged.
 */
void *ust_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

#endif
