// SPDX-License-Identifier: LGPL-2.1
/*
 * The files the live processes have mapped, from /proc/PID/maps.
 *
 * A maps line names the device as MAJ:MIN in hex, which is the kernel's
 * own dev_t split in two: rebuilt with UST_ABI_MKKDEV it compares equal
 * to what the kernel records in the trace.  The path, though, is as the
 * process sees it (another mount namespace, a file deleted since): each
 * one is kept only when stat() here finds the same device and inode.
 * The others (deleted, replaced, another mount namespace, an overlay
 * path whose mapping holds the underlying file) are remembered by their
 * /proc/PID/map_files/START-END link, which opens the mapped file itself.
 */
#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/abi.h"
#include "ustitch/maps.h"
#include "res_internal.h"

/* Bounds of one scan: a pathological machine must not stall a report. */
#define MAX_PIDS		65536
#define MAX_LINES_PER_PID	65536

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A file mapping of a maps line: its (dev, inode), path and range. */
static bool parse_line(char *line, uint32_t *kdev, uint64_t *ino, char **path, char *range,
		       size_t rangesz, bool *deleted)
{
	struct ust_maps_ent e;
	size_t len;

	if (ust_maps_parse(line, &e) || !e.ino)
		return false;
	snprintf(range, rangesz, "%llx-%llx", (unsigned long long)e.start,
		 (unsigned long long)e.end);
	if (e.path[0] != '/')
		return false;	/* [heap], anon_inode:..., memfd: ... */
	len = strlen(e.path);
	*deleted = len > 10 && strcmp(e.path + len - 10, " (deleted)") == 0;
	if (*deleted)
		e.path[len - 10] = '\0';
	*kdev = e.kdev;
	*ino = e.ino;
	*path = e.path;
	return true;
}

void ust_res_mapf_free(void *p)
{
	struct ust_res_mapf_ent *e = p;

	if (!e)
		return;
	free(e->link);
	free(e->name);
	free(e);
}

/* A file the maps path does not reach: remember where map_files has it. */
static void add_mapf(struct ust_res_map *mapf, const char *pid, const char *range,
		     uint32_t kdev, uint64_t ino, const char *path, bool deleted)
{
	struct ust_res_mapf_ent *e;
	char link[96];

	if (!mapf || ust_res_map_get(mapf, kdev, ino))
		return;
	snprintf(link, sizeof(link), "/proc/%s/map_files/%s", pid, range);
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->link = strdup(link);
	e->name = strdup(path);
	e->deleted = deleted;
	if (!e->link || !e->name || ust_res_map_put(mapf, kdev, ino, e, NULL) != 0)
		ust_res_mapf_free(e);
}

static void scan_pid(struct ust_res_map *m, struct ust_res_map *tried, struct ust_res_map *mapf,
		     const char *pid, unsigned int *files)
{
	char fname[sizeof("/proc//maps") + sizeof(((struct dirent *)0)->d_name)];
	char *line = NULL;
	unsigned int lines = 0;
	size_t cap = 0;
	FILE *fp;

	snprintf(fname, sizeof(fname), "/proc/%s/maps", pid);
	fp = fopen(fname, "re");
	if (!fp)
		return;		/* gone, or not ours to read */
	while (lines++ < MAX_LINES_PER_PID && getline(&line, &cap, fp) > 0) {
		uint32_t kdev;
		uint64_t ino;
		char *path, *prev, *copy, *old, range[40];
		bool deleted;

		if (!parse_line(line, &kdev, &ino, &path, range, sizeof(range), &deleted) ||
		    ust_res_map_get(m, kdev, ino))
			continue;
		if (deleted) {
			add_mapf(mapf, pid, range, kdev, ino, path, true);
			continue;
		}
		/* The same unverifiable path in every process: stat it once. */
		prev = ust_res_map_get(tried, kdev, ino);
		if (prev && strcmp(prev, path) == 0)
			continue;
		if (!ust_res_path_matches(path, kdev, ino)) {
			add_mapf(mapf, pid, range, kdev, ino, path, false);
			copy = strdup(path);
			if (copy && ust_res_map_put(tried, kdev, ino, copy, (void **)&old) == 0)
				free(old);
			else
				free(copy);
			continue;
		}
		copy = strdup(path);
		if (copy && ust_res_map_put(m, kdev, ino, copy, NULL) == 0)
			(*files)++;
		else
			free(copy);
	}
	free(line);
	fclose(fp);
}

int ust_res_proc_scan_maps(struct ust_res_map *paths, struct ust_res_map *mapf,
			   struct ust_res_proc_stats *st)
{
	struct ust_res_map tried;
	struct dirent *de;
	unsigned int pids = 0, files = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -1;
	ust_res_map_init(&tried);
	while ((de = readdir(d)) && pids < MAX_PIDS) {
		if (!all_digits(de->d_name))
			continue;
		pids++;
		scan_pid(paths, &tried, mapf, de->d_name, &files);
	}
	closedir(d);
	ust_res_map_fini(&tried, free);
	if (st) {
		st->pids = pids;
		st->files = files;
	}
	return 0;
}
