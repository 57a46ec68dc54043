/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_res: (kernel dev_t, inode) -> a path on this machine.
 *
 * Sources, in order: mapping records carried in the trace
 * (ust_res_add_mapping), the live processes' /proc/PID/maps, and a bounded,
 * cached index of the usual binary and library directories.  Only regular
 * files are ever returned, and only when stat() agrees on dev and inode.
 */
#ifndef USTITCH_RESOLVE_H
#define USTITCH_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ust_res;

struct ust_res_opts {
	bool no_proc;			/* skip /proc/PID/maps */
	bool no_index;			/* skip the directory index */
	const char *const *extra_dirs;	/* indexed before the usual ones */
	int nr_extra_dirs;
	unsigned int max_files;		/* bound of the index; 0 = default */
	bool no_default_dirs;		/* index extra_dirs only */
	bool flat;			/* index the dirs' own files, not their subdirectories */
};

struct ust_res_hit {
	const char *path;		/* NULL when not found */
	const uint8_t *build_id;	/* from a mapping record, else NULL */
	size_t build_id_len;
	const char *source;		/* "trace", "proc", "index" */
};

struct ust_res *ust_res_new(const struct ust_res_opts *opts);
void ust_res_free(struct ust_res *r);

/* A mapping carried in the trace: tried first.  Copies its arguments.  0 or -errno. */
int ust_res_add_mapping(struct ust_res *r, uint32_t kdev, uint64_t ino,
			const char *path, const uint8_t *build_id, size_t build_id_len);

/* Look up; results (also misses) are cached. Returns 0 if found, -ENOENT if not. */
int ust_res_lookup(struct ust_res *r, uint32_t kdev, uint64_t ino,
		   struct ust_res_hit *hit);

/* Kernel dev_t (major << 20 | minor) <-> user space st_dev. */
dev_t ust_res_kdev_to_dev(uint32_t kdev);
uint32_t ust_res_dev_to_kdev(dev_t dev);

#endif
