// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfu_raw: frames the BPF walk left as addresses (UST_BPFU_F_RAW).
 *
 * The walk finds a frame's file with bpf_find_vma(), which cannot run
 * while the mmap lock's release is still pending from an earlier call in
 * the same interrupt (the release goes through a per-CPU irq_work).  A
 * sample's walk runs in the timer interrupt wherever the kernel offers no
 * BPF task_work; a file the walk's VMA slots do not hold (a fifth one, or
 * one whose slot no longer reads the same) then cannot be named there: its
 * frame is recorded as an address, without file, and the walk ends there
 * (no CFI table for it).
 *
 * The recorder still sees the process alive a few milliseconds later: the
 * address is looked up in the process's executable file mappings, as perf
 * addresses are (lib/perf/perf_maps.c, from /proc/TGID/maps), and the
 * frame gets the file's device, inode and offset, as the walk would have
 * recorded them.  A raw address in none of them (the process was gone
 * before its maps were read, or the walk's step read garbage) is no frame:
 * the stack is cut before it.  Each process's mappings are read once, again when an
 * address misses them (a dlopen since), kept after its exit (its last
 * stacks arrive after it) and forgotten at its exec.  What the BPF side
 * tells of them (the code an exec mapped, each executable mmap) is added
 * as it comes: a process that lived a millisecond (sort in a shell pipe)
 * has its code placed though its maps were never read.
 */
#include <stdlib.h>

#include "ustitch/hmap.h"
#include "ustitch/perf_maps.h"
#include "bpfu_raw.h"

struct ust_bpfu_raw {
	struct ust_perf_maps *maps;
	struct ust_hmap read;	/* tgid -> 1: its maps read since its exec */
	uint64_t resolved;
};

struct ust_bpfu_raw *ust_bpfu_raw_new(void)
{
	struct ust_bpfu_raw *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->maps = ust_perf_maps_new();
	if (!r->maps) {
		free(r);
		return NULL;
	}
	ust_hmap_init(&r->read);
	return r;
}

void ust_bpfu_raw_free(struct ust_bpfu_raw *r)
{
	if (!r)
		return;
	ust_perf_maps_free(r->maps);
	ust_hmap_fini(&r->read);
	free(r);
}

void ust_bpfu_raw_exec(struct ust_bpfu_raw *r, pid_t tgid)
{
	if (!r)
		return;
	ust_perf_maps_forget(r->maps, (uint32_t)tgid);
	ust_hmap_put(&r->read, (uint64_t)tgid, 0);
}

/* A process gone meanwhile keeps what was read before. */
static void read_maps(struct ust_bpfu_raw *r, pid_t tgid)
{
	ust_perf_maps_proc(r->maps, (uint32_t)tgid, 0);
	ust_hmap_put(&r->read, (uint64_t)tgid, 1);
}

unsigned int ust_bpfu_raw_resolve(struct ust_bpfu_raw *r, pid_t tgid, const uint32_t *raw,
				  uint64_t *offs, uint64_t *inodes, uint32_t *devs, unsigned int nr)
{
	bool fresh = false;
	unsigned int i;
	uint64_t v;

	for (i = 0; i < nr; i++) {
		struct ust_dec_frame f;

		if (!raw[i])
			continue;
		if (!fresh && (!ust_hmap_get(&r->read, (uint64_t)tgid, &v) || !v)) {
			read_maps(r, tgid);
			fresh = true;
		}
		if (!ust_perf_maps_resolve(r->maps, (uint32_t)tgid, offs[i], &f) && !fresh) {
			/* Mapped since the last read (a dlopen): once per stack. */
			read_maps(r, tgid);
			fresh = true;
			ust_perf_maps_resolve(r->maps, (uint32_t)tgid, offs[i], &f);
		}
		/* Frame 0 is where the task was; a return address must be in code. */
		if (!f.ino) {
			if (i)
				return i;
			continue;
		}
		offs[i] = f.off;
		inodes[i] = f.ino;
		devs[i] = f.kdev;
		r->resolved++;
	}
	return nr;
}

void ust_bpfu_raw_map(struct ust_bpfu_raw *r, pid_t tgid, uint64_t start, uint64_t end,
		      uint64_t pgoff, uint64_t ino, uint32_t dev)
{
	struct ust_dec_frame f;

	if (!r || end <= start || !ino)
		return;
	/*
	 * A fallback: what /proc/TGID/maps said of that place stands (on
	 * the 6.12 guest's 9p root, its device and inode are the ones the
	 * report finds the file by, where the BPF side's were not), and a
	 * later read replaces this.
	 */
	if (ust_perf_maps_resolve(r->maps, (uint32_t)tgid, start, &f) && f.ino)
		return;
	ust_perf_maps_add(r->maps, (uint32_t)tgid, start, end - start, pgoff << 12, dev, ino);
}

void ust_bpfu_raw_note(struct ust_bpfu_raw *r, pid_t tgid)
{
	uint64_t v;

	if (r && (!ust_hmap_get(&r->read, (uint64_t)tgid, &v) || !v))
		read_maps(r, tgid);
}

void ust_bpfu_raw_reread(struct ust_bpfu_raw *r, pid_t tgid)
{
	if (r)
		read_maps(r, tgid);
}

bool ust_bpfu_raw_place(struct ust_bpfu_raw *r, pid_t tgid, uint64_t addr, uint64_t *off,
			uint64_t *ino, uint32_t *dev)
{
	struct ust_dec_frame f;
	bool fresh = false;
	uint64_t v;

	if (!r)
		return false;
	if (!ust_hmap_get(&r->read, (uint64_t)tgid, &v) || !v) {
		read_maps(r, tgid);
		fresh = true;
	}
	if (!ust_perf_maps_resolve(r->maps, (uint32_t)tgid, addr, &f) || !f.ino) {
		if (fresh)
			return false;
		/* Mapped since the last read (a dlopen). */
		read_maps(r, tgid);
		if (!ust_perf_maps_resolve(r->maps, (uint32_t)tgid, addr, &f) || !f.ino)
			return false;
	}
	*off = f.off;
	*ino = f.ino;
	*dev = f.kdev;
	return true;
}

uint64_t ust_bpfu_raw_count(const struct ust_bpfu_raw *r)
{
	return r ? r->resolved : 0;
}
