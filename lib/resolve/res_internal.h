/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_res internals: the (kdev, inode) map every source fills
 * (res_map.c), the /proc/PID/maps scan (res_proc.c) and the directory
 * index (res_index.c).  res.c chains them and caches the answers.
 */
#ifndef USTITCH_RES_INTERNAL_H
#define USTITCH_RES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ustitch/res_debuginfod.h"

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
/* @fn on every entry, in table order. */
void ust_res_map_each(const struct ust_res_map *m,
		      void (*fn)(uint32_t kdev, uint64_t ino, void *val, void *ctx), void *ctx);

/* res_kdev.c: stat() @path: a regular file with exactly this (kdev, inode)? */
bool ust_res_path_matches(const char *path, uint32_t kdev, uint64_t ino);

/* res_proc.c: every mapped file of the live processes. */
struct ust_res_proc_stats {
	unsigned int pids;
	unsigned int files;
};

/*
 * map_files: a key whose maps path could not be verified (a deleted or
 * replaced file, another mount namespace), opened through
 * /proc/PID/map_files when asked for.
 */
struct ust_res_mapf_ent {
	char *link;		/* /proc/PID/map_files/START-END */
	char *name;		/* the maps path, " (deleted)" cut off */
	bool deleted;
};

/*
 * Reads /proc/PID/maps of every live process.  A file whose maps path
 * stat()s to its (kdev, inode) goes to @paths as (kdev, ino) -> strdup'ed
 * path; one that does not goes to @mapf (may be NULL) as (kdev, ino) ->
 * struct ust_res_mapf_ent.  Keys already in @paths are left alone.
 * @st (may be NULL) gets the counts.  0, or -1 when /proc cannot be read.
 */
int ust_res_proc_scan_maps(struct ust_res_map *paths, struct ust_res_map *mapf,
			   struct ust_res_proc_stats *st);
void ust_res_mapf_free(void *p);

/* res_handle.c: open (kdev, ino) by file handle. */
struct ust_res_mnt {
	uint32_t kdev;
	char *dir;		/* mount point */
	char *fstype;
	int fd;			/* opened on first use, -1: not yet, -2: failed */
	bool whole;		/* the file system's root is mounted there */
};
struct ust_res_mounts {
	struct ust_res_mnt *v;
	size_t nr, cap;
	bool loaded;
};
enum ust_res_h {
	UST_RES_H_OK,		/* *fd: the file, fstat()-verified */
	UST_RES_H_GONE,		/* ESTALE: no file has this inode now */
	UST_RES_H_NOCAP,	/* EPERM: no CAP_DAC_READ_SEARCH */
	UST_RES_H_REFUSED,	/* this file system cannot (*why says why) */
	UST_RES_H_NOMOUNT,	/* no mount of this device here */
	UST_RES_H_OTHER,	/* opened something else, or another error */
};
void ust_res_mounts_fini(struct ust_res_mounts *m);
enum ust_res_h ust_res_open_handle(struct ust_res_mounts *m, uint32_t kdev, uint64_t ino,
				   int *fd, const char **why);
/* The handle type used for (fstype, ino), or -1 with *why when refused. */
int ust_res_handle_type(const char *fstype, uint64_t ino, const char **why);

/* res_archive.c: trace.dat.ustitch/ (manifest + build-id-keyed copies). */
struct ust_res_arch_ent {
	uint8_t bid[64];
	size_t bid_len;
	uint64_t size;
	char *path;		/* original path: shown, never opened */
};
struct ust_res_archive {
	char *dir;
	int dfd;
	struct ust_res_map ents;	/* (kdev, ino) -> struct ust_res_arch_ent */
	bool debug_ok;		/* no hostile debug file: usable as a debug root */
	unsigned int bad_lines;
};
/* 0, or -errno with @err. */
int ust_res_archive_open(struct ust_res_archive *a, const char *dir, char *err, size_t errsz);
void ust_res_archive_fini(struct ust_res_archive *a);
/* The archived copy of @e, opened safely (no symlink, regular, size as
 * recorded); -errno with @err. */
int ust_res_archive_open_copy(const struct ust_res_archive *a, uint32_t kdev, uint64_t ino,
			      const struct ust_res_arch_ent *e, char *err, size_t errsz);
/* openat() of a relative path under @dfd, refusing symlinks and "..":
 * directories on the way and the file itself (O_NONBLOCK: no FIFO wait). */
int ust_res_openat_beneath(int dfd, const char *rel, int flags);

/* res_index.c: regular files under @dirs, up to @max_files. */
struct ust_res_idx_ent {
	bool via_link;		/* found through a symlink to the file */
	bool outside;		/* only through a symlink out of the roots: never used */
	char path[];
};
/* Adds (kdev, ino) -> malloc'ed struct ust_res_idx_ent to @m. */
/* How deep the index goes below each directory. */
#define UST_RES_MAX_DEPTH	32
/* @max_depth: levels of subdirectories to enter (0: the dirs' own files). */
int ust_res_index_build(struct ust_res_map *m, const char *const *dirs, int nr_dirs, int max_depth,
			unsigned int max_files);

/*
 * res_debuginfod.c: the report's debuginfod client and its answers, kept
 * by the resolver (res.c; NULL: asking is off), which alone calls these.
 */
struct ust_sb;
struct ust_res_dbgd;
int ust_res_dbgd_new(struct ust_res_dbgd **out, char *err, size_t errsz);
void ust_res_dbgd_free(struct ust_res_dbgd *d);
int ust_res_dbgd_find(struct ust_res_dbgd *d, enum ust_res_dbgd_kind kind, const uint8_t *bid,
		      size_t bid_len, char *path, size_t pathsz);
const char *ust_res_dbgd_note(const struct ust_res_dbgd *d, const uint8_t *bid, size_t bid_len);
void ust_res_dbgd_summary(const struct ust_res_dbgd *d, struct ust_sb *out);

#endif
