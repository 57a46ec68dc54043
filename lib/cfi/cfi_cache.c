// SPDX-License-Identifier: LGPL-2.1
/*
 * The registry of built tables, by build-id: in memory first, then the
 * disk cache (cfi_disk.c), then a build (cfi_build.c), whose result is
 * saved to disk.  The mutex guards the list and the counts, not a load or
 * a build: threads build different libraries at once (the recorder's
 * workers, lib/record/bpfu_pool.c).  Two threads that load the same
 * build-id at once each do so, and the second to finish takes the
 * first's table (freeing its own).  Files without a build-id cannot be told
 * apart from another version of themselves: they are built on every get
 * (and kept until the cache is freed, as the returned pointer must live).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_internal.h"
#include "ustitch/grow.h"

struct ust_cfi_cache {
	pthread_mutex_t lock;
	struct ust_cfi_opts opts;	/* debug_dirs borrowed from the caller */
	char *disk_dir;			/* NULL: no disk cache */
	struct ust_cfi_table **tabs;	/* all tables, with and without build-id */
	size_t nr, cap;
	struct ust_cfi_cache_stats st;
};

struct ust_cfi_cache *ust_cfi_cache_new(const struct ust_cfi_opts *opts, const char *disk_dir)
{
	struct ust_cfi_cache *c = calloc(1, sizeof(*c));
	char dir[PATH_MAX];

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	if (opts)
		c->opts = *opts;
	if (!disk_dir && ust_cfi_disk_dir(dir, sizeof(dir)) == 0)
		disk_dir = dir;
	if (disk_dir && disk_dir[0] && !(c->disk_dir = strdup(disk_dir))) {
		ust_cfi_cache_free(c);
		return NULL;
	}
	return c;
}

void ust_cfi_cache_free(struct ust_cfi_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++)
		ust_cfi_table_free(c->tabs[i]);
	free(c->tabs);
	free(c->disk_dir);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct ust_cfi_table *find(struct ust_cfi_cache *c, const uint8_t *id, size_t len)
{
	size_t i;

	for (i = 0; len && i < c->nr; i++)
		if (c->tabs[i]->build_id_len == len && memcmp(c->tabs[i]->build_id, id, len) == 0)
			return c->tabs[i];
	return NULL;
}

static int keep(struct ust_cfi_cache *c, struct ust_cfi_table *t)
{
	struct ust_cfi_table **n = ust_grow(c->tabs, &c->cap, c->nr + 1, sizeof(*n), 32);

	if (!n)
		return -ENOMEM;
	c->tabs = n;
	c->tabs[c->nr++] = t;
	return 0;
}

/*
 * @t, just loaded or built, into the list, counted in *@counter; or the
 * table another thread put there meanwhile.  Under the lock.
 */
static int keep_new(struct ust_cfi_cache *c, struct ust_cfi_table *t, uint32_t *counter,
		    const struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct ust_cfi_table *had = find(c, t->build_id, t->build_id_len);

	(*counter)++;
	if (had) {
		ust_cfi_table_free(t);
		*out = had;
		return 0;
	}
	if (keep(c, t)) {
		ust_cfi_table_free(t);
		return ust_cfi_fail(err, errsz, -ENOMEM, "out of memory");
	}
	*out = t;
	return 0;
}

/* Memory, disk, build: the lock taken for the list only. */
static int get(struct ust_cfi_cache *c, const struct ust_sym_elf *e, const char *path,
	       const struct ust_cfi_table **out, char *err, size_t errsz)
{
	uint8_t id[UST_CFI_BUILD_ID_MAX];
	struct ust_cfi_table *t;
	size_t len;
	int ret;

	len = ust_sym_elf_build_id(e->elf, id, sizeof(id));
	pthread_mutex_lock(&c->lock);
	t = find(c, id, len);
	if (t)
		c->st.hits++;
	pthread_mutex_unlock(&c->lock);
	if (t) {
		*out = t;
		return 0;
	}
	if (len && c->disk_dir) {
		ret = ust_cfi_disk_load(c->disk_dir, id, len, &t, NULL, 0);
		pthread_mutex_lock(&c->lock);
		if (ret == 0)
			ret = keep_new(c, t, &c->st.disk_loads, out, err, errsz);
		else if (ret == -EBADMSG)
			c->st.disk_rejects++;
		else
			ret = -ENOENT;
		pthread_mutex_unlock(&c->lock);
		if (ret != -ENOENT && ret != -EBADMSG)
			return ret;
	}
	ret = ust_cfi_build_elf(e, path, &c->opts, &t, err, errsz);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ret = keep_new(c, t, &c->st.builds, out, err, errsz);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	/* A cache that cannot be written (read-only home) only costs rebuilds. */
	if (len && c->disk_dir && ust_cfi_disk_save(c->disk_dir, *out, NULL, 0) == 0) {
		pthread_mutex_lock(&c->lock);
		c->st.disk_saves++;
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

int ust_cfi_cache_get_path(struct ust_cfi_cache *c, const char *path,
			   const struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct ust_sym_elf e;
	int ret;

	*out = NULL;
	ret = ust_cfi_elf_path(&e, path, err, errsz);
	if (ret)
		return ret;
	ret = get(c, &e, path, out, err, errsz);
	ust_sym_elf_close(&e);
	return ret;
}

int ust_cfi_cache_get_mem(struct ust_cfi_cache *c, const void *image, size_t size,
			  const struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct ust_sym_elf e;
	int ret;

	*out = NULL;
	ret = ust_cfi_elf_mem(&e, image, size, err, errsz);
	if (ret)
		return ret;
	ret = get(c, &e, NULL, out, err, errsz);
	ust_sym_elf_close(&e);
	return ret;
}

void ust_cfi_cache_stats(struct ust_cfi_cache *c, struct ust_cfi_cache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
}
