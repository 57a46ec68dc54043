// SPDX-License-Identifier: LGPL-2.1
/* One line of /proc/PID/maps: "start-end perms offset MAJ:MIN inode   path". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/abi.h"
#include "ustitch/maps.h"

int ust_maps_parse(char *line, struct ust_maps_ent *e)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	size_t len;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
		   &min, &ino, &pos) != 7 || !pos)
		return -EINVAL;
	e->start = start;
	e->end = end;
	e->off = off;
	e->ino = ino;
	e->kdev = UST_ABI_MKKDEV(maj, min);
	e->exec = strchr(perms, 'x') != NULL;
	e->path = line + pos;
	len = strlen(e->path);
	while (len && (e->path[len - 1] == '\n' || e->path[len - 1] == ' '))
		e->path[--len] = '\0';
	return 0;
}
