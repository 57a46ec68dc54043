/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The first pass's mappings of the trace.dat: their pages dropped while it
 * reads, and what libtracecmd 1.3.1 leaves mapped after tracecmd_close()
 * unmapped (see scan_unmap.c).
 */
#ifndef USTITCH_SCAN_UNMAP_H
#define USTITCH_SCAN_UNMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A file's mappings in this process, in address order. */
struct ust_scan_maps {
	uint32_t kdev;
	uint64_t ino;
	struct ust_scan_range { uint64_t start, end; } *r;
	size_t nr, cap;
	int ok;			/* 0: not all known (maps unreadable, no memory): unmap nothing */
};

/* Note the mappings of (@dev, @ino) there are now. */
void ust_scan_maps_before(struct ust_scan_maps *m, dev_t dev, ino_t ino);

/* Drop the pages of what of the file is mapped now and was not before
 * (the open handle's chunks): they stay mapped, and are read again if used. */
void ust_scan_maps_drop_new(const struct ust_scan_maps *m);

/* Unmap what of the file is mapped now and was not before (after the
 * handle is closed); bytes unmapped. */
uint64_t ust_scan_maps_unmap_new(struct ust_scan_maps *m);

#endif
