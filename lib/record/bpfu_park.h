/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_bpfu_park: stacks the BPF walk parked at a file whose unwind table
 * was not loaded yet (UST_BPFU_F_PARKED), finished by the recorder from
 * the stack copied at the event (a PARK record) once the table is built
 * (bpfu_park.c).  Private to lib/record; lib/record/bpfu.c owns one.
 */
#ifndef UST_BPFU_PARK_H
#define UST_BPFU_PARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "ust_bpfu_abi.h"

struct ust_cfi_table;
struct ust_bpfu_park;

/* What finishing a walk needs from the recorder (the unit test gives its own). */
struct ust_bpfu_park_env {
	/*
	 * The table of file (@dev, @ino) (the vDSO: UST_BPFU_CFI_VDSO_INO,
	 * 0): UST_BPFU_CFI_READY with *@t, _NONE, _PENDING; -ENOENT: nobody
	 * asked for it.
	 */
	int (*table)(void *ctx, uint32_t dev, uint64_t ino, const struct ust_cfi_table **t);
	/*
	 * The executable file mapping of @tgid holding @addr (one the park's
	 * VMAs do not): true with @addr's file offset, inode and kernel
	 * dev_t, false when none holds it.
	 */
	bool (*place)(void *ctx, uint32_t tgid, uint64_t addr, uint64_t *off, uint64_t *ino,
		      uint32_t *dev);
	/*
	 * Optional: ask for the table of the file of @v (start and end 0
	 * when only its file is known), which nobody asked for.
	 */
	void (*need)(void *ctx, uint32_t tgid, const struct ust_bpfu_park_vma *v);
	void *ctx;
};

/* ust_bpfu_park_walk()'s answers besides 0. */
#define UST_BPFU_PARK_WAIT	1	/* a file's table is not built yet: try again later */

/* A PARK record of @size bytes whose fields agree with its length. */
bool ust_bpfu_park_fits(const void *data, size_t size);

/*
 * PARK record @p (ust_bpfu_park_fits()) copied with its whole stack, a
 * sparse one's put back (UST_BPFU_PARK_SPARSE): what
 * ust_bpfu_park_walk() reads.  free() it; NULL: no memory.
 */
struct ust_bpfu_rec_park *ust_bpfu_park_copy(const struct ust_bpfu_rec_park *p);

/*
 * Walk on from park @p (ust_bpfu_park_copy()'s) with the frames of its
 * STACK record, @frames[0..*@nr): frames[*@nr..] and the flags the BPF
 * walk would have made had the tables been there, by the same step
 * (bpf/ust_cfi_step.h), reading the copy.  *@flags: the STACK record's
 * flags in, the stack's out, UST_BPFU_F_PARKED (LATER) kept.  @give_up:
 * a table still pending is walked through by frame pointers (the stack
 * keeps NO_TABLE) instead of waited for.  0, or UST_BPFU_PARK_WAIT with
 * nothing changed.  @frames holds UST_BPFU_MAX_FRAMES.  *@used (if not
 * NULL): the stack bytes the walk read above the parked rsp.  -EINVAL: @p
 * is sparse.
 */
int ust_bpfu_park_walk(const struct ust_bpfu_rec_park *p, const struct ust_bpfu_park_env *env,
		       bool give_up, struct ust_bpfu_frame *frames, uint32_t *nr, uint32_t *flags,
		       uint64_t *used);

/* A finished stack, handed on: @h its record's header. */
typedef int (*ust_bpfu_park_emit_fn)(void *ctx, const struct ust_bpfu_rec_hdr *h, uint32_t flags,
				     const struct ust_bpfu_frame *frames, uint32_t nr);

struct ust_bpfu_park_stats {
	uint64_t later;			/* stacks finished here */
	uint64_t not_in_time;		/* ... by frame pointers: a table did not come in time */
	uint64_t lost;			/* parked stacks whose copy never came */
	uint64_t queued_bytes;		/* memory the waiting stacks hold now */
	/*
	 * Stack bytes the finished walks read (from the parked frame's rsp to
	 * the outermost CFA): the most any used, and the walks that needed
	 * more than their copy held: what UST_BPFU_PARK_CAP is measured by.
	 */
	uint64_t used_max;
	uint64_t beyond_copy;
};

/*
 * @wait_ns: how long a stack waits for its tables before it is finished
 * by frame pointers; @max_bytes: what the waiting stacks may hold, the
 * oldest finished so when more.
 */
struct ust_bpfu_park *ust_bpfu_park_new(const struct ust_bpfu_park_env *env, uint64_t wait_ns,
					size_t max_bytes);
void ust_bpfu_park_free(struct ust_bpfu_park *k);
/* A PARK record (ust_bpfu_park_fits()), copied: its task's parked STACK record takes it. */
int ust_bpfu_park_keep(struct ust_bpfu_park *k, const struct ust_bpfu_rec_park *p, size_t size);
/*
 * STACK record @s with UST_BPFU_F_PARKED, its frames @frames (an AGAIN
 * record's are its task's last): finished and emitted now if its tables
 * are there, else queued.  Without its PARK record it is emitted as the
 * walk left it (ending at the parked frame, NO_TABLE).  Returns what
 * @emit returned, or 0 (-ENOMEM: not kept).
 */
int ust_bpfu_park_stack(struct ust_bpfu_park *k, const struct ust_bpfu_rec_stack *s,
			const struct ust_bpfu_frame *frames, uint64_t now_ns,
			ust_bpfu_park_emit_fn emit, void *ctx);
/*
 * The queued stacks whose tables came, and those that waited longer than
 * wait_ns (by frame pointers), in the order they came; @all: every one
 * (the recording ends).  Stops at the first nonzero @emit return.
 */
int ust_bpfu_park_serve(struct ust_bpfu_park *k, uint64_t now_ns, bool all,
			ust_bpfu_park_emit_fn emit, void *ctx);
void ust_bpfu_park_stats(const struct ust_bpfu_park *k, struct ust_bpfu_park_stats *st);

#endif
