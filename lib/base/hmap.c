// SPDX-License-Identifier: LGPL-2.1
/* ust_hmap: linear probing, grown at 50 % load so probes stay short. */
#include <errno.h>
#include <stdlib.h>

#include "ustitch/hmap.h"

void ust_hmap_init(struct ust_hmap *m)
{
	m->keys = NULL;
	m->vals = NULL;
	m->used = NULL;
	m->cap = 0;
	m->len = 0;
}

void ust_hmap_fini(struct ust_hmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	ust_hmap_init(m);
}

static size_t slot(const struct ust_hmap *m, uint64_t key)
{
	size_t i = (size_t)ust_hmap_mix(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int grow(struct ust_hmap *m)
{
	struct ust_hmap n;
	size_t i;

	n.cap = m->cap ? m->cap * 2 : 64;
	n.len = 0;
	n.keys = malloc(n.cap * sizeof(*n.keys));
	n.vals = malloc(n.cap * sizeof(*n.vals));
	n.used = calloc(n.cap, 1);
	if (!n.keys || !n.vals || !n.used) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = slot(&n, m->keys[i]);
		n.used[j] = 1;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.len++;
	}
	ust_hmap_fini(m);
	*m = n;
	return 0;
}

int ust_hmap_put(struct ust_hmap *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	i = slot(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
	return 0;
}

bool ust_hmap_get(const struct ust_hmap *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = slot(m, key);
	if (!m->used[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}
