// SPDX-License-Identifier: LGPL-2.1
/*
 * (kernel dev_t, inode) -> pointer, open addressing with linear probing.
 * Both halves are the key: inode numbers alone repeat across file
 * systems, and 64-bit inodes (xfs, btrfs) leave no room to fold the
 * device in, so the map keeps the pair instead of one packed integer.
 */
#include <stdlib.h>

#include "ustitch/hmap.h"
#include "res_internal.h"

struct ust_res_slot {
	uint64_t ino;
	uint32_t kdev;
	bool used;
	void *val;
};

void ust_res_map_init(struct ust_res_map *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

void ust_res_map_fini(struct ust_res_map *m, void (*free_val)(void *))
{
	size_t i;

	for (i = 0; free_val && i < m->cap; i++)
		if (m->slots[i].used)
			free_val(m->slots[i].val);
	free(m->slots);
	ust_res_map_init(m);
}

static size_t slot_of(const struct ust_res_map *m, uint32_t kdev, uint64_t ino)
{
	size_t i = (size_t)ust_hmap_mix(ino ^ ust_hmap_mix((uint64_t)kdev + 1)) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].ino != ino || m->slots[i].kdev != kdev))
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *ust_res_map_get(const struct ust_res_map *m, uint32_t kdev, uint64_t ino)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot_of(m, kdev, ino);
	return m->slots[i].used ? m->slots[i].val : NULL;
}

static int grow(struct ust_res_map *m)
{
	struct ust_res_map n;
	size_t i;

	n.cap = m->cap ? m->cap * 2 : 64;
	n.len = m->len;
	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -1;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			n.slots[slot_of(&n, m->slots[i].kdev, m->slots[i].ino)] = m->slots[i];
	free(m->slots);
	*m = n;
	return 0;
}

int ust_res_map_put(struct ust_res_map *m, uint32_t kdev, uint64_t ino, void *val,
		    void **old)
{
	size_t i;

	if (old)
		*old = NULL;
	/* Grown at half full: probes stay short. */
	if ((m->len + 1) * 2 > m->cap && grow(m) != 0)
		return -1;
	i = slot_of(m, kdev, ino);
	if (m->slots[i].used) {
		if (old)
			*old = m->slots[i].val;
	} else {
		m->slots[i].used = true;
		m->slots[i].kdev = kdev;
		m->slots[i].ino = ino;
		m->len++;
	}
	m->slots[i].val = val;
	return 0;
}

size_t ust_res_map_len(const struct ust_res_map *m)
{
	return m->len;
}

void ust_res_map_each(const struct ust_res_map *m,
		      void (*fn)(uint32_t kdev, uint64_t ino, void *val, void *ctx), void *ctx)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			fn(m->slots[i].kdev, m->slots[i].ino, m->slots[i].val, ctx);
}
