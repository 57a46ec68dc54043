/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_hmap: open-addressing hash map from u64 keys to u64 values, the one
 * index structure of the core (cookies, record offsets, (dev, inode)).
 */
#ifndef USTITCH_HMAP_H
#define USTITCH_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ust_hmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap;		/* power of two */
	size_t len;
};

void ust_hmap_init(struct ust_hmap *m);
void ust_hmap_fini(struct ust_hmap *m);
/* Insert or replace. Returns 0, or -ENOMEM. */
int ust_hmap_put(struct ust_hmap *m, uint64_t key, uint64_t val);
bool ust_hmap_get(const struct ust_hmap *m, uint64_t key, uint64_t *val);
/*
 * The entries, in no order: start with *@pos = 0; each call gives the next
 * key and value and returns true, false past the last.
 */
static inline bool ust_hmap_next(const struct ust_hmap *m, size_t *pos, uint64_t *key,
				 uint64_t *val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->used[*pos]) {
			*key = m->keys[*pos];
			*val = m->vals[(*pos)++];
			return true;
		}
	}
	return false;
}

/* A good 64-bit mix, also for building composite keys. */
static inline uint64_t ust_hmap_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A string's key (FNV-1a, mixed): equal strings, equal keys. */
static inline uint64_t ust_hmap_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return ust_hmap_mix(h);
}

/* The same for @n bytes at @p. */
static inline uint64_t ust_hmap_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *b++) * 1099511628211ULL;
	return ust_hmap_mix(h);
}

#endif
