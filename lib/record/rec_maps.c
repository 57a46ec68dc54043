// SPDX-License-Identifier: LGPL-2.1
/*
 * Mapping records.  The kernel records (dev, inode) per frame; which path
 * and which build-id that was is only knowable while the process lives, so
 * the recorder reads /proc/TGID/maps (path) and /proc/TGID/map_files
 * (the mapped file itself, even if deleted or replaced: its build-id) and
 * writes one ustitch/user_mapping record per file into the trace.  The
 * report then symbolizes after the process is gone, or on another machine
 * that has the debug files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/encode.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/maps.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"
#include "ustitch/rec.h"

struct known {
	uint32_t kdev;
	uint64_t ino;
	char *path;
	uint8_t build_id[UST_ABI_BUILD_ID_MAX];
	size_t build_id_len;
	bool emitted;
};

struct ust_rec_maps {
	uint16_t type;
	struct known *k;
	size_t nr, cap;
	struct ust_hmap by_key;		/* key(kdev, ino) -> index */
	struct ust_hmap failed;		/* key(kdev, ino) seen missing after a fresh look */
	struct ust_hmap tgids;		/* processes looked at once already */
	struct ust_res *res;		/* for processes already gone */
	char *dirs[8];
};

static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/usr/local/lib", "/usr/lib",
};

static uint64_t key_of(uint32_t kdev, uint64_t ino)
{
	return ust_hmap_mix(ino) ^ ((uint64_t)kdev << 1);
}

static struct known *find(struct ust_rec_maps *m, uint32_t kdev, uint64_t ino)
{
	uint64_t i;

	if (!ust_hmap_get(&m->by_key, key_of(kdev, ino), &i))
		return NULL;
	return (m->k[i].kdev == kdev && m->k[i].ino == ino) ? &m->k[i] : NULL;
}

struct ust_rec_maps *ust_rec_maps_new(uint16_t mapping_type, const char *cmd_path)
{
	struct ust_rec_maps *m = calloc(1, sizeof(*m));
	struct ust_res_opts ro = { 0 };
	char *slash;
	size_t i;
	int n = 0;

	if (!m)
		return NULL;
	/*
	 * A process may be gone before its stacks are handled (a short-lived
	 * command exits within a millisecond): then find its files by
	 * (dev, inode) beside the command and in the library directories,
	 * not in a walk of every binary on the system (slow on network
	 * file systems).
	 */
	if (cmd_path && (m->dirs[n] = strdup(cmd_path)) && (slash = strrchr(m->dirs[n], '/'))) {
		*slash = '\0';
		n++;
	}
	for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++)
		m->dirs[n++] = strdup(lib_dirs[i]);
	ro.extra_dirs = (const char *const *)m->dirs;
	ro.nr_extra_dirs = n;
	ro.no_default_dirs = true;
	ro.flat = true;
	ro.no_local_dirs = true;	/* the directories above, not a walk of the cwd */
	/* Test aid: as on 9p (the vm lane's guests), which has no file handles. */
	ro.no_handle = getenv("USTITCH_TEST_NO_HANDLE") != NULL;
	m->res = ust_res_new(&ro);
	m->type = mapping_type;
	ust_hmap_init(&m->by_key);
	ust_hmap_init(&m->failed);
	ust_hmap_init(&m->tgids);
	return m;
}

static void add_known(struct ust_rec_maps *m, uint32_t kdev, uint64_t ino, const char *path,
		      const char *map_file)
{
	struct known *k;
	void *n;

	if (find(m, kdev, ino))
		return;
	n = ust_grow(m->k, &m->cap, m->nr + 1, sizeof(*m->k), 64);
	if (!n)
		return;
	m->k = n;
	k = &m->k[m->nr];
	memset(k, 0, sizeof(*k));
	k->kdev = kdev;
	k->ino = ino;
	k->path = strdup(path);
	if (!k->path)
		return;
	/* map_files opens the very file that is mapped, even if the path now
	 * names another one (a package upgrade during the recording). */
	k->build_id_len = ust_sym_read_build_id(map_file, k->build_id, sizeof(k->build_id));
	if (!k->build_id_len)
		k->build_id_len = ust_sym_read_build_id(path, k->build_id, sizeof(k->build_id));
	if (ust_hmap_put(&m->by_key, key_of(kdev, ino), m->nr)) {
		free(k->path);
		return;
	}
	m->nr++;
}

void ust_rec_maps_snapshot(struct ust_rec_maps *m, pid_t tgid)
{
	char path[64], line[4096 + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct ust_maps_ent e;
		char map_file[128];

		if (ust_maps_parse(line, &e) || !e.ino || e.path[0] != '/')
			continue;
		snprintf(map_file, sizeof(map_file), "/proc/%d/map_files/%llx-%llx", (int)tgid,
			 (unsigned long long)e.start, (unsigned long long)e.end);
		add_known(m, e.kdev, e.ino, e.path, map_file);
	}
	fclose(f);
}

void ust_rec_maps_note_task(struct ust_rec_maps *m, pid_t tgid)
{
	if (ust_hmap_get(&m->tgids, (uint64_t)tgid, NULL))
		return;
	ust_hmap_put(&m->tgids, (uint64_t)tgid, 1);
	ust_rec_maps_snapshot(m, tgid);
}

static void emit(struct ust_rec_maps *m, struct ust_rec_spool *s, struct known *k, pid_t tgid,
		 unsigned int cpu, uint64_t ts)
{
	unsigned char buf[4096 + 64];
	int n;

	n = ust_enc_mapping(buf, sizeof(buf), m->type, tgid, k->kdev, k->ino,
			    k->build_id_len ? k->build_id : NULL, k->build_id_len, k->path);
	if (n > 0 && !ust_rec_spool_add(s, cpu, ts, buf, (size_t)n))
		k->emitted = true;
}

void ust_rec_maps_note_file(struct ust_rec_maps *m, struct ust_rec_spool *s, pid_t tgid,
			unsigned int cpu, uint64_t ts, uint32_t kdev, uint64_t ino)
{
	struct known *k;

	if (!ino)
		return;
	k = find(m, kdev, ino);
	/* Not seen yet: look at the process again, once per file. */
	if (!k && !ust_hmap_get(&m->failed, key_of(kdev, ino), NULL)) {
		struct ust_res_hit hit;

		ust_rec_maps_snapshot(m, tgid);
		k = find(m, kdev, ino);
		/*
		 * hit.path may be an fd of the file (/proc/self/fd/N): the
		 * record names it by hit.name, a path when the resolver knows
		 * one.  Not a guess among a file's links (a build-id cache's,
		 * perf's ~/.debug, may be the one the kernel gives a handle):
		 * without a record the report finds the file and says how.
		 */
		if (!k && m->res && !ust_res_lookup(m->res, kdev, ino, &hit) && hit.path &&
		    hit.name && hit.name[0] == '/' && !hit.name_by_handle) {
			add_known(m, kdev, ino, hit.name, hit.path);
			k = find(m, kdev, ino);
		}
		if (!k)
			ust_hmap_put(&m->failed, key_of(kdev, ino), 1);
	}
	if (k && !k->emitted)
		emit(m, s, k, tgid, cpu, ts);
}

void ust_rec_maps_note_exec(struct ust_rec_maps *m, const char *path, uint32_t kdev, uint64_t ino)
{
	/* bpfu.c checked that the file at @path is (@kdev, @ino). */
	if (m && ino && !find(m, kdev, ino))
		add_known(m, kdev, ino, path, path);
}

unsigned long ust_rec_maps_count(const struct ust_rec_maps *m)
{
	unsigned long i, n = 0;

	for (i = 0; i < m->nr; i++)
		n += m->k[i].emitted;
	return n;
}

void ust_rec_maps_free(struct ust_rec_maps *m)
{
	unsigned long i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++)
		free(m->k[i].path);
	free(m->k);
	ust_hmap_fini(&m->by_key);
	ust_hmap_fini(&m->failed);
	ust_hmap_fini(&m->tgids);
	ust_res_free(m->res);
	for (i = 0; i < sizeof(m->dirs) / sizeof(m->dirs[0]); i++)
		free(m->dirs[i]);
	free(m);
}
