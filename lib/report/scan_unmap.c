// SPDX-License-Identifier: LGPL-2.1
/*
 * libtracecmd 1.3.1 maps each CPU's data of a trace.dat in chunks as large
 * as the CPU's data, and tracecmd_close() frees its list of chunks without
 * unmapping those still referenced (every chunk the first pass went
 * through stays, with every page it read resident).  The plugin's first
 * pass reads the whole file while trace-cmd's own handle of the same file
 * goes on mapping it: the leftovers doubled the report's peak RSS.
 *
 * Unmapping them is safe because of when it happens: the first pass runs
 * inside a print callback, so trace-cmd's own handle maps nothing between
 * the two snapshots.  What of the file is mapped after our tracecmd_close()
 * and was not before is our closed handle's, which no one refers to any
 * more.  Ranges are compared, not start addresses: the kernel may merge a
 * leftover with an older mapping of the same file next to it.
 *
 * While the handle is open its chunks hold every page read, the file's
 * size by the end of the pass: the first pass drops them as it goes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "ustitch/abi.h"
#include "ustitch/grow.h"
#include "ustitch/maps.h"
#include "scan_unmap.h"

static void note(struct ust_scan_maps *m, uint64_t start, uint64_t end)
{
	void *n = ust_grow(m->r, &m->cap, m->nr + 1, sizeof(*m->r), 16);

	if (!n) {
		m->ok = 0;	/* an unknown mapping could be taken for ours */
		return;
	}
	m->r = n;
	m->r[m->nr++] = (struct ust_scan_range){ start, end };
}

/* The mappings of @m's file into @into (address order, as maps lists them). */
static void collect(const struct ust_scan_maps *m, struct ust_scan_maps *into)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t len = 0;

	into->ok = f != NULL;
	if (!f)
		return;
	while (getline(&line, &len, f) > 0) {
		struct ust_maps_ent e;

		if (!ust_maps_parse(line, &e) && e.ino == m->ino && e.kdev == m->kdev)
			note(into, e.start, e.end);
	}
	free(line);
	fclose(f);
}

void ust_scan_maps_before(struct ust_scan_maps *m, dev_t dev, ino_t ino)
{
	memset(m, 0, sizeof(*m));
	m->kdev = UST_ABI_MKKDEV(major(dev), minor(dev));
	m->ino = ino;
	collect(m, m);
}

/* @fn on [start, end) minus the older mappings inside it; bytes it took. */
static uint64_t new_part(const struct ust_scan_maps *m, uint64_t start, uint64_t end,
			 int (*fn)(void *addr, size_t len))
{
	uint64_t bytes = 0, cur = start;
	size_t i;

	for (i = 0; i < m->nr; i++) {
		const struct ust_scan_range *o = &m->r[i];

		if (o->end <= cur || o->start >= end)
			continue;
		if (o->start > cur && !fn((void *)(uintptr_t)cur, o->start - cur))
			bytes += o->start - cur;
		cur = o->end;
	}
	if (cur < end && !fn((void *)(uintptr_t)cur, end - cur))
		bytes += end - cur;
	return bytes;
}

/* Calls @fn on each piece of the file mapped now that was not before. */
static uint64_t each_new(const struct ust_scan_maps *m, int (*fn)(void *addr, size_t len))
{
	struct ust_scan_maps now = { .kdev = m->kdev, .ino = m->ino };
	uint64_t bytes = 0;
	size_t i;

	/* All read before any is changed: maps is not read while it changes. */
	if (m->ok)
		collect(m, &now);
	for (i = 0; m->ok && now.ok && i < now.nr; i++)
		bytes += new_part(m, now.r[i].start, now.r[i].end, fn);
	free(now.r);
	return bytes;
}

static int drop(void *addr, size_t len)
{
	return madvise(addr, len, MADV_DONTNEED);
}

/*
 * While the handle is open, its chunks are libtracecmd's: they stay mapped,
 * only their pages go.  That is safe for what is in them: a private,
 * read-only mapping of a file nobody writes, faulted in again from the
 * page cache if libtracecmd reads it once more.
 */
void ust_scan_maps_drop_new(const struct ust_scan_maps *m)
{
	each_new(m, drop);
}

static int unmap(void *addr, size_t len)
{
	return munmap(addr, len);
}

uint64_t ust_scan_maps_unmap_new(struct ust_scan_maps *m)
{
	uint64_t bytes = each_new(m, unmap);

	free(m->r);
	memset(m, 0, sizeof(*m));
	return bytes;
}
