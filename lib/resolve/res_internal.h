/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_res internals: the (kdev, inode) map every source fills
 * (res_map.c), the /proc/PID/maps scan (res_proc.c) and the directory
 * index (res_index.c).  resolve.c chains them and caches the answers.
 */
#ifndef USTITCH_RES_INTERNAL_H
#define USTITCH_RES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Open-addressing map from (kernel dev_t, inode) to a pointer. */
struct ust_res_map {
	struct ust_res_slot *slots;
	size_t cap;		/* power of two */
	size_t len;
};

void ust_res_map_init(struct ust_res_map *m);
/* Frees the table; @free_val (may be NULL) is called on every value. */
void ust_res_map_fini(struct ust_res_map *m, void (*free_val)(void *));
void *ust_res_map_get(const struct ust_res_map *m, uint32_t kdev, uint64_t ino);
/* Insert or replace; returns the replaced value through @old (may be NULL). */
int ust_res_map_put(struct ust_res_map *m, uint32_t kdev, uint64_t ino, void *val,
		    void **old);
size_t ust_res_map_len(const struct ust_res_map *m);

/* res_kdev.c: stat() @path: a regular file with exactly this (kdev, inode)? */
bool ust_res_path_matches(const char *path, uint32_t kdev, uint64_t ino);

/* res_proc.c: every mapped file of the live processes, paths verified. */
struct ust_res_proc_stats {
	unsigned int pids;
	unsigned int files;
};
/* Adds (kdev, ino) -> strdup'ed path to @m for keys not yet there. */
int ust_res_proc_scan(struct ust_res_map *m, struct ust_res_proc_stats *st);

/* res_index.c: regular files under @dirs, up to @max_files. */
struct ust_res_idx_ent {
	bool via_link;		/* found through a symlink to the file */
	char path[];
};
/* Adds (kdev, ino) -> malloc'ed struct ust_res_idx_ent to @m. */
/* How deep the index goes below each directory. */
#define UST_RES_MAX_DEPTH	32
/* @max_depth: levels of subdirectories to enter (0: the dirs' own files). */
int ust_res_index_build(struct ust_res_map *m, const char *const *dirs, int nr_dirs, int max_depth,
			unsigned int max_files);

#endif
