// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_res: (kernel dev_t, inode) -> a file here, from these sources in
 * order of trust, with every answer (misses included) cached:
 *
 *  1. "trace": the mapping records the recorder wrote into the trace.
 *     They name the file as it was; a path that no longer exists is
 *     still returned last of all, with the recorded build-id, because a
 *     debug file found by build-id can symbolize it.
 *     "archive": the trace's archive (trace.dat.ustitch/, `ustitch
 *     archive`): a build-id-keyed copy, and the build-id the file had.
 *  2. "handle": the very inode, opened by file handle on its mount
 *     (res_handle.c; needs CAP_DAC_READ_SEARCH, said once at the end).
 *  3. "proc": the live processes' maps, scanned on a miss (bounded, and
 *     again on a later miss at most once a second, a few times in all);
 *     "map_files": their /proc/PID/map_files links, which open mapped
 *     files that are deleted or that the maps path no longer names.
 *  4. "local": the trace's directory and the current one, two levels
 *     deep, bounded, indexed once on the first miss that gets there.
 *  5. "index": the directory index of the usual places, the last resort.
 *
 * A path is returned only when fstat() finds a regular file with that
 * very device and inode (for a record: or the recorded build-id).  Where
 * the trace or its archive has the file's build-id, a file with another
 * one is never returned; where none has it, a file created after the trace
 * (an inode number reused) is not returned either, and one modified after
 * it is returned marked uncertain.  The trace's time is its file's mtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/res_debuginfod.h"
#include "ustitch/resolve.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"
#include "res_internal.h"

#define DEFAULT_MAX_FILES	200000
#define MAX_PROC_SCANS		16
#define PROC_RESCAN_NS		1000000000LL
#define LOCAL_DEPTH		2
#define LOCAL_MAX_FILES		20000
#define MAX_KEPT_FDS		512

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
	char *name;
	uint8_t *bid;
	size_t bid_len;
	const char *source;
	const char *note;
	char why[192];			/* a note made here (the archive's), note may point at it */
	int fd;				/* kept open for path = /proc/self/fd/N */
	uint32_t kdev;
	uint64_t ino;
	bool found, uncertain;
	unsigned int handle_links;	/* named by its handle's fd, one of this many links */
	struct ust_res_memo memo;	/* ust_res_hit.memo */
};

struct ust_res {
	bool no_proc, no_index, flat, no_handle, no_local, no_archive;
	char **dirs;			/* extra_dirs then default_dirs */
	int nr_dirs;
	unsigned int max_files;

	struct ust_res_map recs;	/* -> struct rec */
	struct ust_res_map answers;	/* -> struct answer, NULL: recompute */
	struct ust_res_map proc;	/* -> char *path */
	struct ust_res_map mapf;	/* -> struct ust_res_mapf_ent */
	struct ust_res_map index;	/* -> struct ust_res_idx_ent */
	struct ust_res_map local;	/* -> struct ust_res_idx_ent */
	struct answer *retired;
	struct ust_res_mounts mounts;

	unsigned int nr_scans;
	struct timespec last_scan;
	bool index_built, local_built;

	/* ust_res_set_trace */
	char *trace_dir;
	struct timespec trace_time;
	bool has_time;
	struct ust_res_archive arch;
	bool has_arch;
	char arch_err[512];

	unsigned int nr_nocap;		/* lookups that needed CAP_DAC_READ_SEARCH */
	unsigned int nr_fds;

	struct ust_res_dbgd *dbgd;	/* ust_res_set_debuginfod; NULL: off */
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
		r->no_handle = opts->no_handle;
		r->no_local = opts->no_local_dirs;
		r->no_archive = opts->no_archive;
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
	ust_res_map_init(&r->mapf);
	ust_res_map_init(&r->local);
	r->arch.dfd = -1;
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
	if (a->fd >= 0)
		close(a->fd);
	free(a->name);
	free(a->path);
	free(a->bid);
	free(a);
}

void ust_res_free(struct ust_res *r)
{
	int i;

	if (!r)
		return;
	ust_res_dbgd_free(r->dbgd);
	ust_res_map_fini(&r->recs, free_rec);
	ust_res_map_fini(&r->answers, free_answer);
	ust_res_map_fini(&r->proc, free);
	ust_res_map_fini(&r->index, free);
	ust_res_map_fini(&r->mapf, ust_res_mapf_free);
	ust_res_map_fini(&r->local, free);
	ust_res_mounts_fini(&r->mounts);
	if (r->has_arch)
		ust_res_archive_fini(&r->arch);
	free(r->trace_dir);
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

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/*
 * Is the file at @path the one the trace saw?  With a build-id to compare
 * (@want): exactly that.  Without: not when it was created after the
 * trace (its inode number was reused), uncertain when modified after it.
 */
static bool identity_ok(const struct ust_res *r, const char *path, const uint8_t *want,
			size_t want_len, bool *uncertain, const char **note)
{
	uint8_t id[UST_ABI_BUILD_ID_MAX * 4];
	struct statx sx;
	size_t len;

	*uncertain = false;
	if (want_len) {
		len = ust_sym_read_build_id(path, id, sizeof(id));
		if (len == want_len && memcmp(id, want, len) == 0)
			return true;
		*note = len ? "not the traced file: its build-id differs" :
			      "not the traced file: it has no build-id";
		return false;
	}
	if (!r->has_time || statx(AT_FDCWD, path, 0, STATX_BTIME | STATX_MTIME, &sx) != 0)
		return true;
	if ((sx.stx_mask & STATX_BTIME) &&
	    ts_after(&(struct timespec){ sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec }, &r->trace_time)) {
		*note = "not the traced file: created after the trace (inode number reused)";
		return false;
	}
	if ((sx.stx_mask & STATX_MTIME) &&
	    ts_after(&(struct timespec){ sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec }, &r->trace_time)) {
		*uncertain = true;
		*note = "modified after the trace was recorded";
	}
	return true;
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

static void proc_scan(struct ust_res *r, uint32_t kdev, uint64_t ino)
{
	if ((ust_res_map_get(&r->proc, kdev, ino) || ust_res_map_get(&r->mapf, kdev, ino)) ||
	    !rescan_allowed(r))
		return;
	r->nr_scans++;
	ust_res_proc_scan_maps(&r->proc, &r->mapf, NULL);
	clock_gettime(CLOCK_MONOTONIC, &r->last_scan);
}

static const char *from_proc(struct ust_res *r, uint32_t kdev, uint64_t ino)
{
	const char *p;

	proc_scan(r, kdev, ino);
	p = ust_res_map_get(&r->proc, kdev, ino);
	return p && ust_res_path_matches(p, kdev, ino) ? p : NULL;
}

static const char *from_dirs(struct ust_res_map *m, bool *built, const char *const *dirs,
			     int nr, int depth, unsigned int max, uint32_t kdev, uint64_t ino,
			     const char **note)
{
	const struct ust_res_idx_ent *e;

	if (!*built) {
		*built = true;
		ust_res_index_build(m, dirs, nr, depth, max);
	}
	e = ust_res_map_get(m, kdev, ino);
	if (e && e->outside) {
		*note = "only a symlink out of the searched directories leads to it: not followed";
		return NULL;
	}
	return e && ust_res_path_matches(e->path, kdev, ino) ? e->path : NULL;
}

static const char *from_local(struct ust_res *r, uint32_t kdev, uint64_t ino, const char **note)
{
	char cwd[4096];
	const char *dirs[2];
	int n = 0;

	if (!r->local_built) {
		if (r->trace_dir)
			dirs[n++] = r->trace_dir;
		if (getcwd(cwd, sizeof(cwd)) && (!n || strcmp(cwd, dirs[0]) != 0))
			dirs[n++] = cwd;
		return from_dirs(&r->local, &r->local_built, dirs, n, LOCAL_DEPTH, LOCAL_MAX_FILES,
				 kdev, ino, note);
	}
	return from_dirs(&r->local, &r->local_built, NULL, 0, 0, 0, kdev, ino, note);
}

static const char *from_index(struct ust_res *r, uint32_t kdev, uint64_t ino, const char **note)
{
	return from_dirs(&r->index, &r->index_built, (const char *const *)r->dirs, r->nr_dirs,
			 r->flat ? 0 : UST_RES_MAX_DEPTH, r->max_files, kdev, ino, note);
}

/* An fd stands for the file: "/proc/self/fd/N" opens it again, even unlinked. */
static bool take_fd(struct ust_res *r, struct answer *a, int fd)
{
	char link[64];

	if (r->nr_fds >= MAX_KEPT_FDS) {
		close(fd);
		return false;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	a->path = strdup(link);
	if (!a->path) {
		close(fd);
		return false;
	}
	a->fd = fd;
	r->nr_fds++;
	return true;
}

/*
 * The path the kernel gives an fd, when it is a name of the file here, or
 * the name it had when deleted (*deleted; the file is still open or mapped
 * somewhere, or it could not have been opened).
 */
static char *fd_name(int fd, uint32_t kdev, uint64_t ino, bool *deleted)
{
	char link[64], buf[4096];
	ssize_t n;

	*deleted = false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 1 || buf[0] != '/')
		return NULL;	/* "/" alone: a dentry the kernel could not connect */
	buf[n] = '\0';
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)")) {
		buf[n - 10] = '\0';
		*deleted = true;
		return strdup(buf);
	}
	return ust_res_path_matches(buf, kdev, ino) ? strdup(buf) : NULL;
}

static bool too_large(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && (uint64_t)st.st_size > UST_SYM_MAX_FILE;
}

struct want {
	const uint8_t *bid;
	size_t bid_len;
	const char *hint;		/* the path the trace or the archive knows */
	const char *note;		/* why a candidate was refused */
};

/* A candidate at @path (or an fd): checked, then taken into @a. */
static bool accept(struct ust_res *r, struct answer *a, struct want *w, const char *path,
		   int fd, const char *name, const char *source)
{
	const char *note = NULL;
	bool unc = false;
	char link[64];

	if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		path = link;
	}
	/* The symbolizer refuses a file this large: say why here, where the
	 * frame can show it. */
	if (too_large(path)) {
		w->note = UST_SYM_MAX_FILE_TEXT;
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (!identity_ok(r, path, w->bid, w->bid_len, &unc, &note)) {
		w->note = note;
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (fd >= 0 ? !take_fd(r, a, fd) : !(a->path = strdup(path)))
		return false;
	a->name = name ? strdup(name) : NULL;
	a->source = source;
	a->uncertain = unc;
	a->note = note;
	a->found = true;
	return true;
}

static bool from_archive(struct ust_res *r, struct answer *a, struct want *w, uint32_t kdev,
			 uint64_t ino)
{
	const struct ust_res_arch_ent *e;
	int fd;

	if (!r->has_arch || !(e = ust_res_map_get(&r->arch.ents, kdev, ino)))
		return false;
	/* The trace's own record outranks the manifest. */
	if (w->bid_len && (e->bid_len != w->bid_len || memcmp(e->bid, w->bid, w->bid_len))) {
		w->note = "not the traced file: the archived copy's build-id differs";
		return false;
	}
	fd = ust_res_archive_open_copy(&r->arch, kdev, ino, e, a->why + 9, sizeof(a->why) - 9);
	if (fd < 0) {
		/* A copy refused (a symlink, a FIFO, the wrong size): said at its frames. */
		memcpy(a->why, "archive: ", 9);
		w->note = a->why;
		return false;
	}
	/* The copy's build-id was checked against the manifest's; its own
	 * times are the archive's, not the traced file's. */
	if (!take_fd(r, a, fd))
		return false;
	a->name = strdup(e->path);
	a->source = "archive";
	a->found = true;
	return true;
}

/*
 * A build-id cache's link, never the name a process maps a file by:
 * perf's ~/.debug (which hard-links the files it saw:
 * ~/.debug/ORIGINAL/PATH/BUILD-ID/elf), any .build-id/ tree, the
 * distribution's /usr/lib/debug, debuginfod's client cache.
 */
static bool in_debug_cache(const char *path)
{
	return strstr(path, "/.debug/") || strstr(path, "/.build-id/") ||
	       !strncmp(path, "/usr/lib/debug/", 15) || strstr(path, "/debuginfod_client/");
}

/*
 * The path perf's cache link @path was made from (DIR/.debug/ORIGINAL/
 * PATH/BUILD-ID/NAME -> /ORIGINAL/PATH), if it still names this file.
 */
static char *perf_cache_origin(const char *path, uint32_t kdev, uint64_t ino)
{
	const char *d = strstr(path, "/.debug/");
	char *orig, *slash;
	int i;

	if (!d || !(orig = strdup(d + 7)))
		return NULL;
	for (i = 0; i < 2 && (slash = strrchr(orig, '/')) && slash != orig; i++)
		*slash = '\0';
	if (i == 2 && ust_res_path_matches(orig, kdev, ino))
		return orig;
	free(orig);
	return NULL;
}

/*
 * The name to show for a file opened by handle.  The kernel names an fd
 * by whichever of its links is cached ("/" when none is): with one link
 * that is the name; with several (perf's ~/.debug hard-links libraries)
 * the trace's own path, a live process's or the index's is the better one,
 * and a build-id cache's link is no name a process used: the path perf's
 * link was made from, when it still names the file.  The fd's name when
 * nothing else names the file is a last resort: *@links says how many
 * links it had to choose from (0: the name is no guess).
 */
static char *handle_name(struct ust_res *r, const struct want *w, int fd, uint32_t kdev,
			 uint64_t ino, unsigned int *links)
{
	bool deleted;
	char *fdn = fd_name(fd, kdev, ino, &deleted), *orig;
	const char *p, *ignored;
	struct stat st;

	*links = 0;
	if (w->hint) {
		free(fdn);
		return strdup(w->hint);
	}
	if (fdn && in_debug_cache(fdn) && (orig = perf_cache_origin(fdn, kdev, ino))) {
		free(fdn);
		return orig;
	}
	if (fdn && !in_debug_cache(fdn) &&
	    (deleted || (fstat(fd, &st) == 0 && st.st_nlink == 1)))
		return fdn;
	if (!r->no_proc && (p = from_proc(r, kdev, ino))) {
		free(fdn);
		return strdup(p);
	}
	if (!r->no_index && (p = from_index(r, kdev, ino, &ignored))) {
		free(fdn);
		return strdup(p);
	}
	if (fdn)
		*links = fstat(fd, &st) == 0 && st.st_nlink > 1 ? (unsigned int)st.st_nlink : 1;
	return fdn;
}

static bool from_handle(struct ust_res *r, struct answer *a, struct want *w, uint32_t kdev,
			uint64_t ino)
{
	unsigned int links = 0;
	const char *why;
	char *name;
	bool ok;
	int fd;

	switch (ust_res_open_handle(&r->mounts, kdev, ino, &fd, &why)) {
	case UST_RES_H_OK:
		break;
	case UST_RES_H_NOCAP:
		r->nr_nocap++;
		return false;
	case UST_RES_H_GONE:
		if (!w->note)
			w->note = "no longer exists";
		return false;
	default:
		return false;
	}
	name = handle_name(r, w, fd, kdev, ino, &links);
	if (name && ust_res_path_matches(name, kdev, ino)) {
		/* A path that names the file here: the stabler thing to keep. */
		close(fd);
		fd = -1;
	}
	ok = accept(r, a, w, fd < 0 ? name : NULL, fd, name, "handle");
	if (ok)
		a->handle_links = links;
	free(name);
	return ok;
}

static bool from_map_files(struct ust_res *r, struct answer *a, struct want *w, uint32_t kdev,
			   uint64_t ino)
{
	const struct ust_res_mapf_ent *e = ust_res_map_get(&r->mapf, kdev, ino);
	struct stat st;
	int fd;

	if (!e)
		return false;
	fd = open(e->link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;	/* the process is gone, or not ours */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != ust_res_kdev_to_dev(kdev) || (uint64_t)st.st_ino != ino) {
		close(fd);
		return false;
	}
	return accept(r, a, w, NULL, fd, e->name, "map_files");
}

/* The executable of the wanted build-id from debuginfod: in the client's
 * cache, its build-id already checked (a refusal becomes the note). */
static bool from_debuginfod(struct ust_res *r, struct answer *a, struct want *w)
{
	char path[4096];
	int ret;

	if (!r->dbgd)
		return false;
	ret = ust_res_debuginfod_find(r, UST_RES_DBGD_EXECUTABLE, w->bid, w->bid_len, path,
				      sizeof(path));
	if (ret == -EINVAL)
		w->note = ust_res_debuginfod_note(r, w->bid, w->bid_len);
	if (ret)
		return false;
	return accept(r, a, w, path, -1, w->hint, "debuginfod");
}

static struct answer *resolve(struct ust_res *r, uint32_t kdev, uint64_t ino)
{
	const struct rec *rec = ust_res_map_get(&r->recs, kdev, ino);
	const struct ust_res_arch_ent *man = r->has_arch ?
		ust_res_map_get(&r->arch.ents, kdev, ino) : NULL;
	struct answer *a = calloc(1, sizeof(*a));
	struct want w = { 0 };
	const char *path;
	bool rec_gone = false;
	struct stat st;

	if (!a)
		return NULL;
	a->fd = -1;
	a->kdev = kdev;
	a->ino = ino;
	if (rec && rec->bid_len) {
		w.bid = rec->bid;
		w.bid_len = rec->bid_len;
	} else if (man && man->bid_len) {
		w.bid = man->bid;
		w.bid_len = man->bid_len;
	}
	w.hint = rec ? rec->path : man ? man->path : NULL;

	/* 1. The trace's record: its path, if it still is that file. */
	if (rec) {
		if (ust_res_path_matches(rec->path, kdev, ino))
			accept(r, a, &w, rec->path, -1, rec->path, "trace");
		else if (stat(rec->path, &st) == 0 && S_ISREG(st.st_mode) && w.bid_len)
			accept(r, a, &w, rec->path, -1, rec->path, "trace");
		else if (stat(rec->path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
			rec_gone = true;
		else if (!S_ISREG(st.st_mode))
			w.note = "not a regular file";	/* a FIFO, a device: never opened */
	}
	if (!a->found)
		from_archive(r, a, &w, kdev, ino);
	/* 2. The inode itself. */
	if (!a->found && !r->no_handle)
		from_handle(r, a, &w, kdev, ino);
	/* 3. Live processes. */
	if (!a->found && !r->no_proc) {
		if ((path = from_proc(r, kdev, ino)))
			accept(r, a, &w, path, -1, path, "proc");
		if (!a->found)
			from_map_files(r, a, &w, kdev, ino);
	}
	/* 4, 5. Directories. */
	if (!a->found && !r->no_local && (path = from_local(r, kdev, ino, &w.note)))
		accept(r, a, &w, path, -1, path, "local");
	if (!a->found && !r->no_index && (path = from_index(r, kdev, ino, &w.note)))
		accept(r, a, &w, path, -1, path, "index");
	/* 6. Not here with its build-id: the debuginfod servers, by build-id. */
	if (!a->found && w.bid_len)
		from_debuginfod(r, a, &w);
	/* A recorded file that is gone: its build-id may still find a debug
	 * file (a file debuginfod refused is said instead). */
	if (!a->found && rec_gone) {
		const char *refused = ust_res_debuginfod_note(r, w.bid, w.bid_len);

		a->path = strdup(rec->path);
		a->name = strdup(rec->path);
		a->found = a->path && a->name;
		a->source = "trace";
		a->note = refused ? refused : "no longer exists";
	}
	if (!a->found)
		a->note = w.note;
	/* The recorded build-id travels with any answer, even a miss. */
	if (w.bid_len) {
		a->bid = dup_bytes(w.bid, w.bid_len);
		a->bid_len = a->bid ? w.bid_len : 0;
	}
	if (a->found && !a->name) {
		char buf[48];

		snprintf(buf, sizeof(buf), "inode %" PRIu64, ino);
		a->name = strdup(buf);
		a->found = a->name != NULL;
	}
	if (!a->found) {
		/* A miss keeps the name the trace or the archive gives the file. */
		a->source = NULL;
		free(a->path);
		a->path = NULL;
		free(a->name);
		a->name = w.hint ? strdup(w.hint) : NULL;
	}
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
			return -ENOMEM;
		if (ust_res_map_put(&r->answers, kdev, ino, a, NULL) != 0) {
			free_answer(a);
			return -ENOMEM;
		}
	}
	if (hit) {
		hit->path = a->path;
		hit->name = a->name;
		hit->build_id = a->bid;
		hit->build_id_len = a->bid_len;
		hit->source = a->source;
		hit->uncertain = a->uncertain;
		hit->note = a->note;
		hit->name_by_handle = a->handle_links != 0;
		hit->memo = &a->memo;
	}
	return a->found ? 0 : -ENOENT;
}

int ust_res_set_trace(struct ust_res *r, const char *trace_path, const char *archive_dir,
		      char *err, size_t errsz)
{
	char *dir, *slash, def[4096];
	struct stat st;

	if (err && errsz)
		err[0] = '\0';
	if (!r || !trace_path)
		return -EINVAL;
	if (stat(trace_path, &st) == 0) {
		r->trace_time = st.st_mtim;
		r->has_time = true;
	}
	dir = strdup(trace_path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	free(r->trace_dir);
	r->trace_dir = dir;
	if (r->no_archive)
		return 0;
	if (!archive_dir || !archive_dir[0]) {
		snprintf(def, sizeof(def), "%s.ustitch", trace_path);
		if (stat(def, &st) != 0)
			return 0;	/* no archive: fine */
		archive_dir = def;
	}
	return ust_res_set_archive(r, archive_dir, err, errsz);
}

int ust_res_set_archive(struct ust_res *r, const char *archive_dir, char *err, size_t errsz)
{
	int ret;

	if (err && errsz)
		err[0] = '\0';
	if (!r || !archive_dir || !archive_dir[0])
		return -EINVAL;
	if (r->has_arch) {
		ust_res_archive_fini(&r->arch);
		r->has_arch = false;
	}
	ret = ust_res_archive_open(&r->arch, archive_dir, r->arch_err, sizeof(r->arch_err));
	if (ret < 0) {
		if (err && errsz)
			snprintf(err, errsz, "%s", r->arch_err);
		return ret;
	}
	r->has_arch = true;
	r->arch_err[0] = '\0';
	if (r->arch.bad_lines)
		snprintf(r->arch_err, sizeof(r->arch_err),
			 "archive %.400s: %u malformed manifest line%s ignored", archive_dir,
			 r->arch.bad_lines, r->arch.bad_lines == 1 ? "" : "s");
	if (!r->arch.debug_ok)
		snprintf(r->arch_err + strlen(r->arch_err), sizeof(r->arch_err) - strlen(r->arch_err),
			 "%sarchive %.400s: a debug file in it is a symlink or not a regular file: its debug files are not used",
			 r->arch_err[0] ? "\nustitch: " : "", archive_dir);
	return 0;
}

const char *ust_res_debug_root(const struct ust_res *r)
{
	return r && r->has_arch && r->arch.debug_ok ? r->arch.dir : NULL;
}

static void summary_one(uint32_t kdev, uint64_t ino, void *val, void *ctx)
{
	const struct answer *a = val;

	if (a && a->found && a->handle_links)
		ust_sb_printf(ctx, "ustitch: %s (dev %u:%u ino %" PRIu64 "): named by the link the kernel gave its file handle, one of %u: no trace record, live process or searched directory names it\n",
			      a->name, UST_ABI_KDEV_MAJOR(kdev), UST_ABI_KDEV_MINOR(kdev), ino,
			      a->handle_links);
	if (!a || !a->found || !a->uncertain)
		return;
	ust_sb_printf(ctx, "ustitch: %s (dev %u:%u ino %" PRIu64 "): %s, and the trace has no build-id for it: its frames are marked =>?\n",
		      a->name, UST_ABI_KDEV_MAJOR(kdev), UST_ABI_KDEV_MINOR(kdev), ino, a->note);
}

void ust_res_summary(const struct ust_res *r, struct ust_sb *out)
{
	if (!r || !out)
		return;
	if (r->arch_err[0])
		ust_sb_printf(out, "ustitch: %s\n", r->arch_err);
	ust_res_map_each(&r->answers, summary_one, out);
	ust_res_debuginfod_summary(r, out);
	if (r->nr_nocap)
		ust_sb_printf(out, "ustitch: %u file%s not opened by handle: open_by_handle_at needs CAP_DAC_READ_SEARCH (report as root, or name their directories with -O ustitch:search_dirs=DIR)\n",
			      r->nr_nocap, r->nr_nocap == 1 ? " was" : "s were");
}

/* ---- debuginfod (res_debuginfod.c asks; the resolver keeps it) -------- */

int ust_res_set_debuginfod(struct ust_res *r, bool on, char *err, size_t errsz)
{
	if (err && errsz)
		err[0] = '\0';
	if (!r)
		return -EINVAL;
	if (!on) {
		ust_res_dbgd_free(r->dbgd);
		r->dbgd = NULL;
		return 0;
	}
	if (r->dbgd)
		return 0;
	return ust_res_dbgd_new(&r->dbgd, err, errsz);
}

bool ust_res_debuginfod_on(const struct ust_res *r)
{
	return r && r->dbgd;
}

int ust_res_debuginfod_find(struct ust_res *r, enum ust_res_dbgd_kind kind, const uint8_t *bid,
			    size_t bid_len, char *path, size_t pathsz)
{
	return r ? ust_res_dbgd_find(r->dbgd, kind, bid, bid_len, path, pathsz) : -ENOENT;
}

int ust_res_debuginfod_fetch_debug(void *ctx, const uint8_t *bid, size_t bid_len, char *path,
				   size_t pathsz)
{
	return ust_res_debuginfod_find(ctx, UST_RES_DBGD_DEBUGINFO, bid, bid_len, path, pathsz);
}

const char *ust_res_debuginfod_note(const struct ust_res *r, const uint8_t *bid, size_t bid_len)
{
	return r ? ust_res_dbgd_note(r->dbgd, bid, bid_len) : NULL;
}

void ust_res_debuginfod_summary(const struct ust_res *r, struct ust_sb *out)
{
	if (r && out)
		ust_res_dbgd_summary(r->dbgd, out);
}
