// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_ldso: the files the dynamic loader will map for a program, found
 * before it runs: its PT_INTERP and the DT_NEEDED closure, searched the
 * way ld.so does (DT_RPATH when there is no DT_RUNPATH, LD_LIBRARY_PATH,
 * DT_RUNPATH, the ld.so.conf directories, the default directories).
 *
 * Why: the recorder loads the unwind tables of a traced command before
 * it starts, so that its first stacks are already complete.  A library
 * missed here (dlopen, an odd search path) is still found later, when the
 * BPF walk meets it and asks for it; only its first stacks are marked.
 * ld.so.cache is not read: its directories are those of ld.so.conf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/ldso.h"

#define LDSO_MAX_FILES	512
#define LDSO_MAX_DIRS	64

struct ldso {
	char *files[LDSO_MAX_FILES];	/* found so far, each once */
	int nr;
	char *conf[LDSO_MAX_DIRS];	/* ld.so.conf directories */
	int nr_conf;
};

static bool ldso_seen(const struct ldso *l, const char *path)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->files[i], path))
			return true;
	return false;
}

static void conf_add_dir(struct ldso *l, const char *dir)
{
	int i;

	for (i = 0; i < l->nr_conf; i++)
		if (!strcmp(l->conf[i], dir))
			return;
	if (l->nr_conf < LDSO_MAX_DIRS)
		l->conf[l->nr_conf++] = strdup(dir);
}

/* /etc/ld.so.conf: directory lines and "include GLOB" lines, one level deep. */
static void conf_read(struct ldso *l, const char *path, int depth)
{
	char line[PATH_MAX];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *e;

		s[strcspn(s, "#\n")] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		if (!*s)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;
			size_t i;

			for (s += 8; *s == ' ' || *s == '\t'; s++)
				;
			if (depth < 2 && !glob(s, 0, NULL, &g)) {
				for (i = 0; i < g.gl_pathc; i++)
					conf_read(l, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
		} else if (*s == '/') {
			conf_add_dir(l, s);
		}
	}
	fclose(f);
}

/* @dirs (colon-separated, $ORIGIN expanded) / @name, if it exists. */
static bool search_dirs(const char *dirs, const char *origin, const char *name, char *out,
			size_t len)
{
	const char *d = dirs;

	while (d && *d) {
		size_t n = strcspn(d, ":");
		char dir[PATH_MAX];

		if (n && n < sizeof(dir)) {
			memcpy(dir, d, n);
			dir[n] = '\0';
			int w;

			if (!strncmp(dir, "$ORIGIN", 7) || !strncmp(dir, "${ORIGIN}", 9)) {
				const char *rest = dir + (dir[1] == '{' ? 9 : 7);

				w = snprintf(out, len, "%s%s/%s", origin, rest, name);
			} else {
				w = snprintf(out, len, "%s/%s", dir, name);
			}
			if (w > 0 && (size_t)w < len && !access(out, R_OK))
				return true;
		}
		d += n;
		if (*d == ':')
			d++;
	}
	return false;
}

static const char *const default_dirs =
	"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";

static bool find_lib(const struct ldso *l, const char *name, const char *rpath,
		     const char *runpath, const char *origin, char *out, size_t len)
{
	int i;

	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len && !access(out, R_OK);
	if (!runpath && rpath && search_dirs(rpath, origin, name, out, len))
		return true;
	if (search_dirs(getenv("LD_LIBRARY_PATH"), origin, name, out, len))
		return true;
	if (runpath && search_dirs(runpath, origin, name, out, len))
		return true;
	for (i = 0; i < l->nr_conf; i++)
		if (search_dirs(l->conf[i], origin, name, out, len))
			return true;
	return search_dirs(default_dirs, origin, name, out, len);
}

static void ldso_visit(struct ldso *l, const char *path, int depth);

/* PT_INTERP and the DYNAMIC entries of one file. */
static void ldso_scan(struct ldso *l, Elf *e, const char *path, int depth)
{
	char origin[PATH_MAX], tmp[PATH_MAX], found[PATH_MAX];
	const char *needed[256], *rpath = NULL, *runpath = NULL;
	int nneeded = 0, i;
	size_t phnum, p;
	Elf_Scn *scn = NULL;

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(origin, sizeof(origin), "%s", dirname(tmp));
	if (!elf_getphdrnum(e, &phnum)) {
		for (p = 0; p < phnum; p++) {
			GElf_Phdr ph;
			size_t size;
			char *img = elf_rawfile(e, &size);

			if (!gelf_getphdr(e, (int)p, &ph) || ph.p_type != PT_INTERP || !img ||
			    ph.p_offset >= size || ph.p_filesz > size - ph.p_offset || !ph.p_filesz)
				continue;
			snprintf(found, sizeof(found), "%.*s", (int)ph.p_filesz, img + ph.p_offset);
			ldso_visit(l, found, depth + 1);
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n, k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (k = 0; k < n; k++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(d, (int)k, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED && nneeded < (int)(sizeof(needed) / sizeof(needed[0])))
				needed[nneeded++] = s;
			else if (dyn.d_tag == DT_RPATH)
				rpath = s;
			else if (dyn.d_tag == DT_RUNPATH)
				runpath = s;
		}
	}
	for (i = 0; i < nneeded; i++)
		if (find_lib(l, needed[i], rpath, runpath, origin, found, sizeof(found)))
			ldso_visit(l, found, depth + 1);
}

static void ldso_visit(struct ldso *l, const char *path, int depth)
{
	char real[PATH_MAX];
	Elf *e;
	int fd;

	if (depth > 32 || l->nr >= LDSO_MAX_FILES || !realpath(path, real) || ldso_seen(l, real))
		return;
	l->files[l->nr] = strdup(real);
	if (!l->files[l->nr])
		return;
	l->nr++;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		ldso_scan(l, e, real, depth);
	elf_end(e);
	close(fd);
}

int ust_ldso_deps(const char *path, ust_ldso_fn fn, void *ctx)
{
	struct ldso l = { .nr = 0 };
	int i, nr;

	if (!path || !fn)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	conf_read(&l, "/etc/ld.so.conf", 0);
	ldso_visit(&l, path, 0);
	/* Best effort: a file the callback cannot use is asked for later. */
	for (i = 0; i < l.nr; i++) {
		fn(l.files[i], ctx);
		free(l.files[i]);
	}
	for (i = 0; i < l.nr_conf; i++)
		free(l.conf[i]);
	nr = l.nr;
	return nr ? nr : -ENOENT;
}
