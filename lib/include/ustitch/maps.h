/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_maps: one line of /proc/PID/maps, the one parser of that format for
 * the resolver, the perf address maps, the recorder's mapping records and
 * its unwind tables, and the LTTng provider's loaded-object table.
 *
 * Async-signal-safe and allocation-free (no stdio, no locale, no malloc):
 * the LTTng provider refreshes its table from inside the application, on
 * whatever thread hits an address it does not know.
 */
#ifndef USTITCH_MAPS_H
#define USTITCH_MAPS_H

#include <stdbool.h>
#include <stddef.h>
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

/*
 * Every line of the maps file open at @fd, parsed, to @fn, in order; read
 * with read(2) into @buf (@size bytes, the caller's: static storage is
 * fine), so a line longer than @size - 1 is skipped.  Lines that are not
 * maps lines are skipped too.  A nonzero return of @fn stops the walk and
 * is returned; otherwise 0, or -errno when read() failed.
 */
int ust_maps_each(int fd, char *buf, size_t size,
		  int (*fn)(struct ust_maps_ent *e, void *ctx), void *ctx);

#endif
