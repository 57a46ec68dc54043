// SPDX-License-Identifier: LGPL-2.1
/*
 * The directory index: (kdev, inode) of every regular file under the
 * usual binary and library directories, built once when the trace's
 * mapping records and /proc did not know a file.
 *
 * Bounded in files (a huge /opt must not stall a report).  Directories
 * are entered at most once, by their own (dev, inode): that dedupes the
 * roots that are symlinks to each other (/lib -> usr/lib on Debian 12)
 * and stops bind-mount loops.  Symlinks to directories inside the roots
 * are not followed; symlinks to files are, but the file's own path wins
 * when both are seen, being the stabler name.  A symlink whose target is
 * outside every root is not followed (the roots bound what a trace may
 * make us open): its target is kept only to say so.  /usr/lib/debug is
 * left out: its files are never the ones a process maps.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustitch/grow.h"
#include "ustitch/resolve.h"
#include "res_internal.h"

/* MAX_DEPTH: res_internal.h */

struct pending {
	char *path;
	int depth;
};

struct walk {
	struct ust_res_map *m;
	char **roots;			/* the roots' real paths, NULL where none */
	int nr_roots;
	struct ust_res_map seen_dirs;
	struct pending *stack;
	size_t nr, cap;
	unsigned int files, max_files;
	int max_depth;
};

static int push(struct walk *w, const char *dir, const char *name, int depth)
{
	size_t len;
	char *p;

	if (w->nr == w->cap) {
		struct pending *n = ust_grow(w->stack, &w->cap, w->nr + 1, sizeof(*n), 64);

		if (!n)
			return -1;
		w->stack = n;
	}
	len = strlen(dir) + (name ? strlen(name) + 2 : 1);
	p = malloc(len);
	if (!p)
		return -1;
	if (name)
		snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	else
		snprintf(p, len, "%s", dir);
	w->stack[w->nr++] = (struct pending){ p, depth };
	return 0;
}

static void add_file(struct walk *w, const char *dir, const char *name,
		     const struct stat *st, bool via_link, bool outside)
{
	uint32_t kdev = ust_res_dev_to_kdev(st->st_dev);
	struct ust_res_idx_ent *e, *old;
	size_t len;

	old = ust_res_map_get(w->m, kdev, (uint64_t)st->st_ino);
	if (old && !old->outside && (via_link || !old->via_link))
		return;
	if (old && outside)
		return;
	len = strlen(dir) + strlen(name) + 2;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return;
	e->via_link = via_link;
	e->outside = outside;
	snprintf(e->path, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	if (ust_res_map_put(w->m, kdev, (uint64_t)st->st_ino, e, NULL) != 0) {
		free(e);
		return;
	}
	free(old);
	if (!old)
		w->files++;
}

/* Does the symlink @name in @dir lead to a file beneath one of the roots? */
static bool link_inside(const struct walk *w, const char *dir, const char *name)
{
	char full[PATH_MAX], *real;
	bool in = false;
	int i;

	if (snprintf(full, sizeof(full), "%s/%s", dir, name) >= (int)sizeof(full) ||
	    !(real = realpath(full, NULL)))
		return false;
	for (i = 0; i < w->nr_roots && !in; i++) {
		size_t n = w->roots[i] ? strlen(w->roots[i]) : 0;

		in = n && !strncmp(real, w->roots[i], n) &&
		     (real[n] == '/' || !real[n] || w->roots[i][n - 1] == '/');
	}
	free(real);
	return in;
}

static void walk_dir(struct walk *w, const char *path, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	/* Below a root, a directory only as fstatat() saw it: not a symlink
	 * put there since. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (depth ? O_NOFOLLOW : 0));
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 ||
	    ust_res_map_get(&w->seen_dirs, ust_res_dev_to_kdev(st.st_dev), (uint64_t)st.st_ino) ||
	    ust_res_map_put(&w->seen_dirs, ust_res_dev_to_kdev(st.st_dev), (uint64_t)st.st_ino,
			    (void *)1, NULL) != 0) {
		close(fd);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while (w->files < w->max_files && (de = readdir(d))) {
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth < w->max_depth)
				push(w, path, de->d_name, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			add_file(w, path, de->d_name, &st, false, false);
		} else if (S_ISLNK(st.st_mode)) {
			if (fstatat(fd, de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
				add_file(w, path, de->d_name, &st, true,
					 !link_inside(w, path, de->d_name));
		}
	}
	closedir(d);
}

static void mark_skipped(struct walk *w, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		ust_res_map_put(&w->seen_dirs, ust_res_dev_to_kdev(st.st_dev),
				(uint64_t)st.st_ino, (void *)1, NULL);
}

int ust_res_index_build(struct ust_res_map *m, const char *const *dirs, int nr_dirs, int max_depth,
			unsigned int max_files)
{
	struct walk w = { .m = m, .max_files = max_files, .max_depth = max_depth };
	int i;

	ust_res_map_init(&w.seen_dirs);
	w.roots = calloc((size_t)nr_dirs + 1, sizeof(*w.roots));
	for (i = 0; w.roots && i < nr_dirs; i++)
		w.roots[i] = dirs[i] && dirs[i][0] ? realpath(dirs[i], NULL) : NULL;
	w.nr_roots = w.roots ? nr_dirs : 0;
	mark_skipped(&w, "/usr/lib/debug");
	mark_skipped(&w, "/proc");
	mark_skipped(&w, "/sys");
	mark_skipped(&w, "/dev");
	for (i = 0; i < nr_dirs && w.files < w.max_files; i++) {
		if (!dirs[i] || !dirs[i][0] || push(&w, dirs[i], NULL, 0) != 0)
			continue;
		/* Depth first, one root fully before the next: roots are ordered. */
		while (w.nr && w.files < w.max_files) {
			struct pending p = w.stack[--w.nr];

			walk_dir(&w, p.path, p.depth);
			free(p.path);
		}
	}
	while (w.nr)
		free(w.stack[--w.nr].path);
	free(w.stack);
	for (i = 0; i < w.nr_roots; i++)
		free(w.roots[i]);
	free(w.roots);
	ust_res_map_fini(&w.seen_dirs, NULL);
	return 0;
}
