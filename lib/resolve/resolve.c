// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_res: (kernel dev_t, inode) -> a path here, from three sources in
 * order of trust, with every answer (misses included) cached:
 *
 *  1. "trace": the mapping records the recorder wrote into the trace.
 *     They name the file as it was; a path that no longer exists is
 *     still returned, with the recorded build-id, because a debug file
 *     found by build-id can symbolize it.
 *  2. "proc": the live processes' maps, scanned on a miss (bounded, and
 *     again on a later miss at most once a second, a few times in all).
 *  3. "index": the directory index, built once on the first miss.
 *
 * A path is returned only when stat() finds a regular file with that
 * very device and inode; the one exception is the missing file of (1).
 * A record whose path now holds another file (a package upgrade replaces
 * the inode) still counts when the file there has the recorded build-id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"
#include "res_internal.h"

#define DEFAULT_MAX_FILES	200000
#define MAX_PROC_SCANS		16
#define PROC_RESCAN_NS		1000000000LL

static const char *const default_dirs[] = {
	"/usr/lib", "/lib", "/usr/lib64", "/usr/bin", "/bin", "/usr/sbin", "/sbin",
	"/usr/libexec", "/usr/local/lib", "/usr/local/bin", "/opt",
};

struct rec {
	char *path;
	uint8_t *bid;
	size_t bid_len;
};

struct answer {
	struct answer *retired;		/* replaced answers, freed at the end */
	char *path;
	uint8_t *bid;
	size_t bid_len;
	const char *source;
	bool found;
};

struct ust_res {
	bool no_proc, no_index, flat;
	char **dirs;			/* extra_dirs then default_dirs */
	int nr_dirs;
	unsigned int max_files;

	struct ust_res_map recs;	/* -> struct rec */
	struct ust_res_map answers;	/* -> struct answer, NULL: recompute */
	struct ust_res_map proc;	/* -> char *path */
	struct ust_res_map index;	/* -> struct ust_res_idx_ent */
	struct answer *retired;

	unsigned int nr_scans;
	struct timespec last_scan;
	bool index_built;
};

struct ust_res *ust_res_new(const struct ust_res_opts *opts)
{
	size_t nr_default = sizeof(default_dirs) / sizeof(default_dirs[0]), i;
	struct ust_res *r = calloc(1, sizeof(*r));
	int nr_extra = 0;

	if (!r)
		return NULL;
	if (opts) {
		r->no_proc = opts->no_proc;
		r->no_index = opts->no_index;
		r->max_files = opts->max_files;
		r->flat = opts->flat;
		if (opts->extra_dirs && opts->nr_extra_dirs > 0)
			nr_extra = opts->nr_extra_dirs;
		if (opts->no_default_dirs)
			nr_default = 0;
	}
	if (!r->max_files)
		r->max_files = DEFAULT_MAX_FILES;
	r->dirs = calloc((size_t)nr_extra + nr_default, sizeof(*r->dirs));
	if (!r->dirs)
		goto err;
	for (i = 0; i < (size_t)nr_extra + nr_default; i++) {
		const char *d = i < (size_t)nr_extra ? opts->extra_dirs[i] :
						       default_dirs[i - nr_extra];

		if (!d)
			continue;
		r->dirs[r->nr_dirs] = strdup(d);
		if (!r->dirs[r->nr_dirs++])
			goto err;
	}
	ust_res_map_init(&r->recs);
	ust_res_map_init(&r->answers);
	ust_res_map_init(&r->proc);
	ust_res_map_init(&r->index);
	return r;
err:
	ust_res_free(r);
	return NULL;
}

static void free_rec(void *p)
{
	struct rec *rec = p;

	free(rec->path);
	free(rec->bid);
	free(rec);
}

static void free_answer(void *p)
{
	struct answer *a = p;

	if (!a)
		return;
	free(a->path);
	free(a->bid);
	free(a);
}

void ust_res_free(struct ust_res *r)
{
	int i;

	if (!r)
		return;
	ust_res_map_fini(&r->recs, free_rec);
	ust_res_map_fini(&r->answers, free_answer);
	ust_res_map_fini(&r->proc, free);
	ust_res_map_fini(&r->index, free);
	while (r->retired) {
		struct answer *a = r->retired;

		r->retired = a->retired;
		free_answer(a);
	}
	for (i = 0; r->dirs && i < r->nr_dirs; i++)
		free(r->dirs[i]);
	free(r->dirs);
	free(r);
}

static uint8_t *dup_bytes(const uint8_t *p, size_t len)
{
	uint8_t *d;

	if (!p || !len)
		return NULL;
	d = malloc(len);
	if (d)
		memcpy(d, p, len);
	return d;
}

int ust_res_add_mapping(struct ust_res *r, uint32_t kdev, uint64_t ino,
			const char *path, const uint8_t *build_id, size_t build_id_len)
{
	struct answer *stale;
	struct rec *rec, *old;

	if (!r || !path)
		return -EINVAL;
	if (!build_id)
		build_id_len = 0;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	rec->path = strdup(path);
	rec->bid = dup_bytes(build_id, build_id_len);
	rec->bid_len = rec->bid ? build_id_len : 0;
	if (!rec->path || (build_id_len && !rec->bid) ||
	    ust_res_map_put(&r->recs, kdev, ino, rec, (void **)&old) != 0) {
		free_rec(rec);
		return -ENOMEM;
	}
	if (old)
		free_rec(old);
	/*
	 * The latest record wins.  An answer already given for this file is
	 * recomputed on the next lookup; its strings stay valid (retired,
	 * not freed) for callers still holding them.
	 */
	stale = ust_res_map_get(&r->answers, kdev, ino);
	if (stale) {
		ust_res_map_put(&r->answers, kdev, ino, NULL, NULL);
		stale->retired = r->retired;
		r->retired = stale;
	}
	return 0;
}

static bool same_build_id(const char *path, const struct rec *rec)
{
	uint8_t id[UST_ABI_BUILD_ID_MAX * 4];
	size_t len;

	if (!rec->bid_len)
		return false;
	len = ust_sym_read_build_id(path, id, sizeof(id));
	return len == rec->bid_len && memcmp(id, rec->bid, len) == 0;
}

/* The trace's record, when it can be trusted (see the top comment). */
static bool from_record(const struct rec *rec, uint32_t kdev, uint64_t ino)
{
	struct stat st;

	if (ust_res_path_matches(rec->path, kdev, ino))
		return true;
	if (stat(rec->path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR;
	return S_ISREG(st.st_mode) && same_build_id(rec->path, rec);
}

static bool rescan_allowed(struct ust_res *r)
{
	struct timespec now;
	long long ns;

	if (!r->nr_scans)
		return true;
	if (r->nr_scans >= MAX_PROC_SCANS)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (now.tv_sec - r->last_scan.tv_sec) * 1000000000LL +
	     (now.tv_nsec - r->last_scan.tv_nsec);
	return ns >= PROC_RESCAN_NS;
}

static const char *from_proc(struct ust_res *r, uint32_t kdev, uint64_t ino)
{
	const char *p = ust_res_map_get(&r->proc, kdev, ino);

	if (p && ust_res_path_matches(p, kdev, ino))
		return p;
	if (!rescan_allowed(r))
		return NULL;
	r->nr_scans++;
	ust_res_proc_scan(&r->proc, NULL);
	clock_gettime(CLOCK_MONOTONIC, &r->last_scan);
	p = ust_res_map_get(&r->proc, kdev, ino);
	return p && ust_res_path_matches(p, kdev, ino) ? p : NULL;
}

static const char *from_index(struct ust_res *r, uint32_t kdev, uint64_t ino)
{
	const struct ust_res_idx_ent *e;

	if (!r->index_built) {
		r->index_built = true;
		ust_res_index_build(&r->index, (const char *const *)r->dirs, r->nr_dirs,
				    r->flat ? 0 : UST_RES_MAX_DEPTH,
				    r->max_files);
	}
	e = ust_res_map_get(&r->index, kdev, ino);
	return e && ust_res_path_matches(e->path, kdev, ino) ? e->path : NULL;
}

static struct answer *resolve(struct ust_res *r, uint32_t kdev, uint64_t ino)
{
	const struct rec *rec = ust_res_map_get(&r->recs, kdev, ino);
	struct answer *a = calloc(1, sizeof(*a));
	const char *path = NULL;

	if (!a)
		return NULL;
	if (rec && from_record(rec, kdev, ino)) {
		path = rec->path;
		a->source = "trace";
	}
	if (!path && !r->no_proc && (path = from_proc(r, kdev, ino)))
		a->source = "proc";
	if (!path && !r->no_index && (path = from_index(r, kdev, ino)))
		a->source = "index";
	/* The recorded build-id travels with any answer, even a miss. */
	if (rec && rec->bid_len) {
		a->bid = dup_bytes(rec->bid, rec->bid_len);
		a->bid_len = a->bid ? rec->bid_len : 0;
	}
	if (path) {
		a->path = strdup(path);
		a->found = a->path != NULL;
	}
	if (!a->found)
		a->source = NULL;
	return a;
}

int ust_res_lookup(struct ust_res *r, uint32_t kdev, uint64_t ino,
		   struct ust_res_hit *hit)
{
	struct answer *a;

	if (hit)
		memset(hit, 0, sizeof(*hit));
	if (!r)
		return -ENOENT;
	a = ust_res_map_get(&r->answers, kdev, ino);
	if (!a) {
		a = resolve(r, kdev, ino);
		if (!a)
			return -ENOENT;
		if (ust_res_map_put(&r->answers, kdev, ino, a, NULL) != 0) {
			free_answer(a);
			return -ENOMEM;
		}
	}
	if (hit) {
		hit->path = a->path;
		hit->build_id = a->bid;
		hit->build_id_len = a->bid_len;
		hit->source = a->source;
	}
	return a->found ? 0 : -ENOENT;
}
