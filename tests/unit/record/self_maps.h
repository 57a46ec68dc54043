/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The record unit tests' own truth about where an address lives: the line
 * of /proc/self/maps holding it, read here independently of
 * lib/perf/perf_maps.c, which the code under test uses.
 */
#ifndef USTITCH_TEST_SELF_MAPS_H
#define USTITCH_TEST_SELF_MAPS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/abi.h"

struct self_mapping {
	uint64_t start, end, pgoff;	/* pgoff in pages */
	uint64_t ino;
	uint32_t kdev;
	int exec;
	char path[512];
};

/* The mapping holding @addr, or (when @name) the first one of file @name: 1 found, 0 not. */
static inline int self_mapping(uint64_t addr, const char *name, struct self_mapping *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o, i;
		unsigned int maj, min;
		char perms[8], path[512] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %511s", &s, &e, perms, &o, &maj, &min,
			   &i, path) < 7)
			continue;
		if (name ? strcmp(path, name) != 0 : (addr < s || addr >= e))
			continue;
		m->start = s;
		m->end = e;
		m->pgoff = o >> 12;
		m->ino = i;
		m->kdev = UST_ABI_MKKDEV(maj, min);
		m->exec = perms[2] == 'x';
		snprintf(m->path, sizeof(m->path), "%s", path);
		found = 1;
	}
	fclose(f);
	return found;
}

#endif
