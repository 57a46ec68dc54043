// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_maps: per process, its mappings sorted by start and never
 * overlapping (an insert trims or splits what it covers), found by binary
 * search.  perf reports no munmap(): a later mapping over the same range
 * replaces the old one, which is all a sampled address can observe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "ustitch/abi.h"
#include "ustitch/hmap.h"
#include "ustitch/maps.h"
#include "ustitch/perf_maps.h"

struct vma {
	uint64_t start, end, pgoff, ino;
	uint32_t kdev;
};

struct proc {
	struct vma *v;
	size_t nr, cap;
	uint64_t read_at;	/* /proc/PID/maps read at this time, or 0 */
};

struct ust_perf_maps {
	struct ust_hmap by_pid;		/* pid -> index in procs */
	struct proc *procs;
	size_t nr, cap;
};

struct ust_perf_maps *ust_perf_maps_new(void)
{
	struct ust_perf_maps *m = calloc(1, sizeof(*m));

	if (m)
		ust_hmap_init(&m->by_pid);
	return m;
}

void ust_perf_maps_free(struct ust_perf_maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++)
		free(m->procs[i].v);
	free(m->procs);
	ust_hmap_fini(&m->by_pid);
	free(m);
}

static struct proc *find(const struct ust_perf_maps *m, uint32_t pid)
{
	uint64_t i;

	return ust_hmap_get(&m->by_pid, pid, &i) ? &m->procs[i] : NULL;
}

static struct proc *get(struct ust_perf_maps *m, uint32_t pid)
{
	struct proc *p = find(m, pid);

	if (p)
		return p;
	if (m->nr == m->cap) {
		void *n = ust_grow(m->procs, &m->cap, m->nr + 1, sizeof(*m->procs), 16);

		if (!n)
			return NULL;
		m->procs = n;
	}
	if (ust_hmap_put(&m->by_pid, pid, m->nr))
		return NULL;
	p = &m->procs[m->nr++];
	memset(p, 0, sizeof(*p));
	return p;
}

static int push(struct proc *p, const struct vma *v)
{
	if (p->nr == p->cap) {
		void *n = ust_grow(p->v, &p->cap, p->nr + 1, sizeof(*p->v), 16);

		if (!n)
			return -1;
		p->v = n;
	}
	p->v[p->nr++] = *v;
	return 0;
}

static int cmp_vma(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int ust_perf_maps_add(struct ust_perf_maps *m, uint32_t pid, uint64_t start, uint64_t len,
		      uint64_t pgoff, uint32_t kdev, uint64_t ino)
{
	struct vma nv = { .start = start, .end = start + len, .pgoff = pgoff, .ino = ino,
			  .kdev = kdev };
	struct proc *p = get(m, pid), old;
	size_t i;

	if (!p)
		return -ENOMEM;
	if (!len || nv.end < start)
		return 0;	/* empty or wrapping: nothing an address can be in */
	old = *p;
	memset(p, 0, sizeof(*p));
	for (i = 0; i < old.nr; i++) {
		struct vma v = old.v[i];

		if (v.end <= nv.start || v.start >= nv.end) {
			if (push(p, &v))
				goto oom;
			continue;
		}
		if (v.start < nv.start) {
			struct vma left = v;

			left.end = nv.start;
			if (push(p, &left))
				goto oom;
		}
		if (v.end > nv.end) {
			struct vma right = v;

			right.pgoff += nv.end - v.start;
			right.start = nv.end;
			if (push(p, &right))
				goto oom;
		}
	}
	if (push(p, &nv))
		goto oom;
	free(old.v);
	qsort(p->v, p->nr, sizeof(*p->v), cmp_vma);
	return 0;
oom:
	free(p->v);
	*p = old;
	return -ENOMEM;
}

void ust_perf_maps_forget(struct ust_perf_maps *m, uint32_t pid)
{
	struct proc *p = find(m, pid);

	if (p)
		p->nr = 0;
}

static int copy_maps(struct ust_perf_maps *m, uint32_t from, uint32_t to)
{
	struct proc *src, *dst;
	size_t i;

	ust_perf_maps_forget(m, to);
	if (!find(m, from))
		return 0;
	dst = get(m, to);	/* may move the array: look the source up after */
	src = find(m, from);
	if (!dst || !src)
		return -ENOMEM;
	for (i = 0; i < src->nr; i++) {
		struct vma v = src->v[i];

		if (push(dst, &v))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Was @pid's /proc/PID/maps read after @ev?  Then what it read is newer
 * than the image @ev (an exec, a fork) started from: the records of that
 * image's mappings may have been lost, the file read has them all.
 */
static bool read_later(struct ust_perf_maps *m, uint32_t pid, const struct ust_perf_event *ev)
{
	const struct proc *p = find(m, pid);

	return p && p->read_at && (ev->id.has & UST_PERF_ID_TIME) && ev->id.time < p->read_at;
}

int ust_perf_maps_apply(struct ust_perf_maps *m, const struct ust_perf_event *ev)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP2:
		return ust_perf_maps_add(m, ev->u.mmap2.pid, ev->u.mmap2.addr, ev->u.mmap2.len,
					 ev->u.mmap2.pgoff,
					 UST_ABI_MKKDEV(ev->u.mmap2.maj, ev->u.mmap2.min),
					 ev->u.mmap2.ino);
	case PERF_RECORD_FORK:
		/* A thread shares its process's maps (keyed by the tgid). */
		if (ev->u.task.pid == ev->u.task.ppid || read_later(m, ev->u.task.pid, ev))
			return 0;
		return copy_maps(m, ev->u.task.ppid, ev->u.task.pid);
	case PERF_RECORD_COMM:
		if (ev->u.comm.exec && !read_later(m, ev->u.comm.pid, ev))
			ust_perf_maps_forget(m, ev->u.comm.pid);
		return 0;
	default:
		return 0;
	}
}

int ust_perf_maps_proc(struct ust_perf_maps *m, uint32_t pid, uint64_t now)
{
	char path[64], line[4096 + 256];
	struct proc *p;
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct ust_maps_ent e;

		if (ust_maps_parse(line, &e) || !e.ino || !e.exec)
			continue;
		if (ust_perf_maps_add(m, pid, e.start, e.end - e.start, e.off, e.kdev, e.ino))
			ret = -ENOMEM;
	}
	fclose(f);
	if ((p = get(m, pid)))
		p->read_at = now;
	return ret;
}

bool ust_perf_maps_resolve(const struct ust_perf_maps *m, uint32_t pid, uint64_t addr,
			   struct ust_dec_frame *f)
{
	const struct proc *p = find(m, pid);
	size_t lo = 0, hi = p ? p->nr : 0;

	f->off = addr;
	f->ino = 0;
	f->kdev = 0;
	while (lo < hi) {	/* the last mapping starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->v[lo - 1].end || !p->v[lo - 1].ino)
		return false;
	f->off = addr - p->v[lo - 1].start + p->v[lo - 1].pgoff;
	f->ino = p->v[lo - 1].ino;
	f->kdev = p->v[lo - 1].kdev;
	return true;
}
