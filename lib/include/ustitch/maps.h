/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_maps: one line of /proc/PID/maps, the one parser of that format for
 * the resolver, the perf address maps, the recorder's mapping records and
 * its unwind tables.
 */
#ifndef USTITCH_MAPS_H
#define USTITCH_MAPS_H

#include <stdbool.h>
#include <stdint.h>

struct ust_maps_ent {
	uint64_t start, end;	/* [start, end) */
	uint64_t off;		/* file offset of start */
	uint64_t ino;		/* 0: no file */
	uint32_t kdev;		/* the kernel's dev_t of MAJ:MIN */
	bool exec;		/* perms has x */
	char *path;		/* the rest of the line, trailing blanks cut: "" when none */
};

/* Parse @line in place (its end is cut).  0, or -EINVAL when it is not a maps line. */
int ust_maps_parse(char *line, struct ust_maps_ent *e);

#endif
