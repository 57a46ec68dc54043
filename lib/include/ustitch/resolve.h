/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_res: (kernel dev_t, inode) -> a path on this machine.
 *
 * Sources, in order (res.c says why): mapping records carried in the
 * trace (ust_res_add_mapping) and in its archive (trace.dat.ustitch/), the
 * file opened by handle (open_by_handle_at), the live processes'
 * /proc/PID/maps and map_files, the trace's directory and the current one
 * (bounded), and last a bounded, cached index of the usual binary and
 * library directories.  Only regular files are ever returned, and only
 * when fstat() agrees on dev and inode; a file whose build-id differs
 * from the one the trace or archive has is never returned.
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
	bool no_handle;			/* do not open files by handle */
	bool no_local_dirs;		/* skip the trace's directory and the current one */
	bool no_archive;		/* ignore PATH.ustitch/ (ust_res_set_trace) */
};

/* See ust_res_hit.memo. */
struct ust_res_memo {
	uint64_t owner;
	void *val;
};

struct ust_res_hit {
	const char *path;		/* what to open (may be /proc/self/fd/N); NULL: not found */
	const uint8_t *build_id;	/* from a mapping record or the archive, else NULL */
	size_t build_id_len;
	const char *source;		/* "trace", "archive", "handle", "proc", "map_files",
					 * "local", "index" */
	const char *name;		/* the file's path as known, "inode N" if none; for a
					 * miss the trace's or archive's path, else NULL */
	bool uncertain;			/* no build-id to check, and it changed after the trace */
	const char *note;		/* why uncertain, or why not found ("no longer exists",
					 * "not the traced file: ..."); NULL: nothing to say */
	bool name_by_handle;		/* name: the link the kernel gave the file's handle, one
					 * of several, as nothing else named it (a last resort,
					 * said by ust_res_summary) */
	/*
	 * What a caller derived from this answer, kept with it (ust_render
	 * keeps the symbol file there, tagged by its cache's serial): empty
	 * for a new answer, and a record that changes the answer starts a
	 * new one.
	 */
	struct ust_res_memo *memo;
};

struct ust_res *ust_res_new(const struct ust_res_opts *opts);
void ust_res_free(struct ust_res *r);

/* A mapping carried in the trace: tried first.  Copies its arguments.  0 or -errno. */
int ust_res_add_mapping(struct ust_res *r, uint32_t kdev, uint64_t ino,
			const char *path, const uint8_t *build_id, size_t build_id_len);

/* Look up; results (also misses) are cached. Returns 0 if found, -ENOENT if not. */
int ust_res_lookup(struct ust_res *r, uint32_t kdev, uint64_t ino,
		   struct ust_res_hit *hit);

/*
 * The trace being reported: its directory is searched, its modification
 * time is the trace's time (a file created or changed after it is suspect),
 * and its archive is used: @archive_dir, else TRACE.ustitch/ when it exists.
 * Call before the first lookup.  0, or a negative errno with @err when the
 * archive cannot be used (the rest works without it).
 */
int ust_res_set_trace(struct ust_res *r, const char *trace_path, const char *archive_dir,
		      char *err, size_t errsz);

/*
 * Use the archive in @archive_dir (`ustitch archive`'s layout) for a
 * trace whose path is not known (a babeltrace2 sink sees messages, not
 * files).  Call before the first lookup.  0, or a negative errno with
 * @err (also said by ust_res_summary) when it cannot be used.
 */
int ust_res_set_archive(struct ust_res *r, const char *archive_dir, char *err, size_t errsz);

/* The archive in use, when it is safe as a debug root for ust_sym; else NULL. */
const char *ust_res_debug_root(const struct ust_res *r);

/*
 * What to say once at the end of a report, as "ustitch: ...\n" lines: the
 * missing CAP_DAC_READ_SEARCH (once), each file whose frames were marked
 * uncertain or that only its file handle named, an archive that could not
 * be used.  Nothing when all is well.
 */
struct ust_sb;
void ust_res_summary(const struct ust_res *r, struct ust_sb *out);

/*
 * Where an archive keeps the copy of (@kdev, @ino): ".build-id/xx/rest"
 * by its build-id, ".by-inode/MAJ-MIN-INO" without one (its debug file:
 * the same + ".debug").  The manifest's paths are never opened.
 */
void ust_res_archive_name(uint32_t kdev, uint64_t ino, const uint8_t *bid, size_t bid_len,
			  char *out, size_t outsz);

/* Kernel dev_t (major << 20 | minor) <-> user space st_dev. */
dev_t ust_res_kdev_to_dev(uint32_t kdev);
uint32_t ust_res_dev_to_kdev(dev_t dev);

#endif
