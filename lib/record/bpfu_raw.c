// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfu_raw: frames the BPF walk left as addresses (UST_BPFU_F_RAW).
 *
 * The walk finds a frame's file with bpf_find_vma(), which cannot run
 * while the mmap lock's release is still pending from an earlier call in
 * the same interrupt (the release goes through a per-CPU irq_work).  A
 * sample's walk runs in the timer interrupt wherever the kernel offers no
 * BPF task_work, and a task's VMA slots are dropped whenever its mm's lock
 * sequence moves (every mmap, munmap or brk of an allocator), so such a
 * walk meets a second file it cannot name: its frame is recorded as an
 * address, without file, and the walk ends there (no CFI table for it).
 * In Debian's python3, sampled, that was the bottom frame of half the
 * stacks (__libc_start_call_main in libc).
 *
 * The recorder still sees the process alive a few milliseconds later: the
 * address is looked up in /proc/TGID/maps and the frame gets the file's
 * device, inode and offset, as the walk would have recorded them.  Each
 * process's file mappings are read once, again when an address misses
 * them (a dlopen since), and forgotten at its exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/maps.h"
#include "bpfu_raw.h"

struct raw_map {
	uint64_t start, end, off, ino;
	uint32_t kdev;
};

struct raw_proc {
	struct raw_map *m;
	size_t nr, cap;
	bool read;		/* m holds the maps as last read */
};

struct ust_bpfu_raw {
	struct ust_hmap procs;	/* tgid -> struct raw_proc * */
	uint64_t resolved;
	char buf[8192];		/* ust_maps_each()'s */
};

struct ust_bpfu_raw *ust_bpfu_raw_new(void)
{
	struct ust_bpfu_raw *r = calloc(1, sizeof(*r));

	if (r)
		ust_hmap_init(&r->procs);
	return r;
}

void ust_bpfu_raw_free(struct ust_bpfu_raw *r)
{
	uint64_t k, v;
	size_t pos = 0;

	if (!r)
		return;
	while (ust_hmap_next(&r->procs, &pos, &k, &v)) {
		struct raw_proc *p = (struct raw_proc *)(uintptr_t)v;

		free(p->m);
		free(p);
	}
	ust_hmap_fini(&r->procs);
	free(r);
}

static struct raw_proc *proc_of(struct ust_bpfu_raw *r, pid_t tgid, bool create)
{
	struct raw_proc *p;
	uint64_t v;

	if (ust_hmap_get(&r->procs, (uint64_t)tgid, &v))
		return (struct raw_proc *)(uintptr_t)v;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	if (ust_hmap_put(&r->procs, (uint64_t)tgid, (uint64_t)(uintptr_t)p)) {
		free(p);
		return NULL;
	}
	return p;
}

void ust_bpfu_raw_exec(struct ust_bpfu_raw *r, pid_t tgid)
{
	struct raw_proc *p = r ? proc_of(r, tgid, false) : NULL;

	if (p) {
		p->nr = 0;
		p->read = false;
	}
}

static int add_map(struct ust_maps_ent *e, void *ctx)
{
	struct raw_proc *p = ctx;
	void *n;

	if (!e->ino)		/* anonymous, the vDSO, a JIT: no file to name */
		return 0;
	n = ust_grow(p->m, &p->cap, p->nr + 1, sizeof(*p->m), 32);
	if (!n)
		return -ENOMEM;
	p->m = n;
	p->m[p->nr++] = (struct raw_map){ .start = e->start, .end = e->end, .off = e->off,
					  .ino = e->ino, .kdev = e->kdev };
	return 0;
}

/*
 * (Re)read @tgid's file mappings.  A process gone meanwhile keeps what was
 * read before: its last stacks arrive after its exit, and its mappings
 * did not change after its last look but by its exec (then forgotten).
 */
static void read_maps(struct ust_bpfu_raw *r, pid_t tgid, struct raw_proc *p)
{
	char path[64];
	int fd;

	p->read = true;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	p->nr = 0;
	if (ust_maps_each(fd, r->buf, sizeof(r->buf), add_map, p))
		p->nr = 0;	/* a partial table could name a frame wrongly: none */
	close(fd);
}

static const struct raw_map *find(const struct raw_proc *p, uint64_t addr)
{
	size_t i;

	/* A few dozen files: a scan costs less than keeping them sorted. */
	for (i = 0; i < p->nr; i++)
		if (addr >= p->m[i].start && addr < p->m[i].end)
			return &p->m[i];
	return NULL;
}

bool ust_bpfu_raw_resolve(struct ust_bpfu_raw *r, pid_t tgid, uint64_t *offs, uint64_t *inodes,
			  uint32_t *devs, unsigned int nr)
{
	struct raw_proc *p = NULL;
	bool fresh = false, all = true;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		const struct raw_map *m;

		if (inodes[i] || devs[i])
			continue;
		if (!p && !(p = proc_of(r, tgid, true)))
			return false;
		if (!p->read) {
			read_maps(r, tgid, p);
			fresh = true;
		}
		m = find(p, offs[i]);
		if (!m && !fresh) {
			/* Mapped since the last read (a dlopen): once per stack. */
			read_maps(r, tgid, p);
			fresh = true;
			m = find(p, offs[i]);
		}
		if (!m) {
			all = false;
			continue;
		}
		offs[i] = offs[i] - m->start + m->off;
		inodes[i] = m->ino;
		devs[i] = m->kdev;
		r->resolved++;
	}
	return all;
}

uint64_t ust_bpfu_raw_count(const struct ust_bpfu_raw *r)
{
	return r ? r->resolved : 0;
}
