/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user-stack walk of bpfu.bpf.c: by CFI tables where a file has one,
 * by frame pointers where it has none.  Included by bpfu.bpf.c after
 * bpfu_cookie.bpf.h (the ring, the counters, the task's storage) and
 * bpfu_vma.bpf.h.
 *
 * Debian builds glibc and its packages without frame pointers, so a walk
 * by frame pointers alone stops in libc.  Every such file still carries
 * .eh_frame; user space turns it into rows sorted by file offset
 * (lib/cfi/, bpf/ust_cfi_abi.h) and stores them in ust_bpfu_cfi_rows.
 * Per frame: the VMA of the ip (a few kept per task: bpf_find_vma() takes
 * the mmap lock), its (inode, dev) -> the file's slice of rows, a bounded
 * binary search for the row of the file offset, then the caller's rip,
 * rsp, rbp and rbx from the row's rules: the step of ust_cfi_step.h, the
 * same code the LTTng provider's walk runs.
 *
 * A file seen for the first time has no entry: the walk asks user space
 * for its table (a NEED_CFI record, once per file, leaving a PENDING entry
 * behind) and parks at that frame (ust_bpfu_walk_park()): the stack from
 * its rsp up goes to user space, which walks on once the table is built.
 * A park refused (the ring short of room) goes on by frame pointers for
 * that frame, marking the stack UST_BPFU_F_NO_TABLE: a stack taken before
 * its table arrived is never silently short.
 *
 * Verification cost, bounded by construction.  The verifier checks a
 * static function at every place it is inlined or called, path by path,
 * and how many paths it explores changes between kernel releases (a
 * stable update once took the walk from 0.9 s to the 1M-instruction limit).
 * So every part with branches is a global function
 * (ust_bpfu_walk_frame(), _row(), _vma(), _start(), _finish(),
 * _recheck()): the kernel verifies each once, on its own, with its
 * arguments unknown, and a call costs one instruction at the caller.
 * Nothing the verifier walks grows with the frames or the table sizes:
 * the frames loop is bpf_loop() with a callback of one call; the row
 * search a fixed number of halving steps.  (The OpenTelemetry profiler
 * bounds its cost with a few frames per tail call instead; global
 * functions need no program array and keep one program per hook.)
 *
 * Reads never fault here (bpf_probe_read_user()): global functions of a
 * non-sleepable program may not sleep.  The task_work's walk, which may
 * fault pages in as the kernel's deferred unwinder does, does it between
 * frames: a step that meets a page not present is undone and asks for it
 * (UST_BPFU_WALK_PAGE, w->page); the task_work's loop faults it in with
 * bpf_copy_from_user() and the step runs again (bpfu.bpf.c).
 *
 * Compiled two ways (bpf/meson.build): UST_BPFU_CFI 1 is the CFI walk,
 * 0 the frame-pointer walk alone (--unwind fp), which then loads no CFI
 * code at all.
 */
#ifndef UST_BPFU_WALK_BPF_H
#define UST_BPFU_WALK_BPF_H

/*
 * The step's rules (ust_cfi_step.h), reading the stack through the
 * window, each word logged for the memo (ust_bpfu_walk_u64(), below).
 */
struct ust_bpfu_walk;
static __always_inline long ust_bpfu_walk_u64(struct ust_bpfu_walk *w, __u64 *val, __u64 addr);
#define UST_CFI_STEP_CTX		struct ust_bpfu_walk
#define UST_CFI_STEP_READ(c, a, v)	ust_bpfu_walk_u64((c), (v), (a))
#define UST_CFI_STEP_FN			static __always_inline
#include "ust_cfi_step.h"

#ifndef UST_BPFU_CFI
#define UST_BPFU_CFI 1
#endif

/*
 * A park's working copy, one per CPU (the recorder sizes the map to the
 * CPUs; 1 entry: parks copy whole): the stack read whole into out's
 * bytes[], the words a walk may use moved down in place, the bitmaps after
 * them (UST_BPFU_PARK_SPARSE, ust_bpfu_abi.h); the record then goes to the
 * ring at its own size, not its size class's.  busy: a program that
 * interrupts a park on this CPU (a sample's, in a system call's exit)
 * copies whole instead; programs on one CPU nest, so a plain flag serves.
 */
#define UST_BPFU_PARK_WORDS	(UST_BPFU_PARK_CAP / 8)
#define UST_BPFU_PARK_MAPS	UST_BPFU_PARK_MAP_BYTES(UST_BPFU_PARK_CAP)

struct ust_bpfu_park_buf {
	__u32 busy;
	__u32 pad;
	__u64 start_code, end_code, brk, task_size;	/* UST_BPFU_PARK_WORD_KEEP()'s */
	__u8 kept_map[UST_BPFU_PARK_MAPS];
	__u8 junk_map[UST_BPFU_PARK_MAPS];
	/* struct ust_bpfu_rec_park and its bytes[]: the stack, then the bitmaps */
	__u8 out[sizeof(struct ust_bpfu_rec_park) + UST_BPFU_PARK_CAP + 2 * UST_BPFU_PARK_MAPS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_bpfu_park_buf);
} ust_bpfu_park_bufs SEC(".maps");

/* Resized by user space (ust_bpfu_opts.cfi_rows), which writes it through mmap(). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_cfi_row);
} ust_bpfu_cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ust_bpfu_cfi_key);
	__type(value, struct ust_bpfu_cfi_file);
} ust_bpfu_cfi_files SEC(".maps");

/* Set before load by lib/record/bpfu.c: 0 walks by frame pointers only. */
const volatile bool ust_cfi_on = true;
/* Set before load: frame 0 on a ret or a function entry (ust_bpfu_walk_ra_at_sp()). */
const volatile bool ust_leaf_ret = true;
/* Set before load: a frame in a file whose table is pending parks the walk (ust_bpfu_walk_park()). */
const volatile bool ust_park_on = true;

/* VMAs kept per task: a stack goes back and forth between a few files. */
#define UST_BPFU_WALK_VMAS	4
/* 2^25 rows: more than libLLVM's 2M. */
#define UST_BPFU_WALK_SEARCH_STEPS	25
/* Pages a task_work's walk faults in, at most. */
#define UST_BPFU_WALK_MAX_PAGES	16

/* ust_bpfu_walk_frame()'s answers. */
#define UST_BPFU_WALK_NEXT	0	/* a frame recorded, go on */
#define UST_BPFU_WALK_END	1	/* the walk ends */
#define UST_BPFU_WALK_PAGE	2	/* fault in w->page and step again */
#define UST_BPFU_WALK_VMA	3	/* look the VMA of w->g.r.ip up, then step again */
#define UST_BPFU_WALK_PARK	4	/* park the walk at this frame (ust_bpfu_walk_park()) */
/*
 * bpf_loop() rounds for a walk: a frame, and the VMA lookup of a frame in
 * a file the task's slots do not hold, each a round; a round per page a
 * task_work's walk faults in; and a park refused (once a walk).
 */
#define UST_BPFU_WALK_ROUNDS	(2 * (UST_BPFU_MAX_FRAMES + 1) + UST_BPFU_WALK_MAX_PAGES + 1)

struct ust_bpfu_walk_vma {
	struct ust_bpfu_vma v;	/* v.found: the slot is used */
	__u32 tstate;		/* enum ust_bpfu_cfi_state; NONE for anonymous memory */
	__u32 tfirst;
	__u32 tnr;
	__u32 tshape;		/* the table's index (struct ust_bpfu_cfi_file) */
	__u32 tidx;
	__u32 vdso;
	__u32 pad;
};

/*
 * What a frame step changes: a step that needs a page not present is
 * undone by putting the copy taken before it back (faultable walks).
 */
struct ust_bpfu_walk_regs {
	struct ust_cfi_regs r;	/* the frame's registers (ust_cfi_step.h) */
	/* Frames by CFI and by frame pointers: counted once per walk, not per frame. */
	__u32 cfi_frames;
	__u32 fp_frames;
	__u32 nr_words;		/* stack words read so far (memo.addr/val) */
	__u32 nr;		/* the record's nr and flags */
	__u32 flags;
};

/*
 * The last walk of the task, as a function of what it read: the registers
 * it started from and every stack word it read, in order (VMAs and tables
 * stand while the mm's sequence does: ust_bpfu_walk_start()).  A walk from
 * the same registers that reads the same words again makes the same
 * frames, which are still in the task's record: a system call made in a
 * loop is walked once, then only checked, a read per word (a few per
 * frame) instead of a VMA, a row and a rule per frame.
 */
#define UST_BPFU_WALK_MEMO_WORDS	128

struct ust_bpfu_walk_memo {
	__u64 ip, sp, bp, bx;
	__u32 bp_used, bx_used;	/* whether its result depends on bp, bx */
	__u32 ok;		/* the record's frames are this walk's */
	__u32 nr;		/* its frames */
	__u32 flags;		/* its UST_BPFU_F_* of the walk */
	__u32 nr_words;
	__u32 cfi_frames;
	__u32 fp_frames;
	__u64 addr[UST_BPFU_WALK_MEMO_WORDS];
	__u64 val[UST_BPFU_WALK_MEMO_WORDS];
};

/*
 * The window: stack bytes read ahead.  A walk reads upward through one
 * stack, a return address (and now and then a saved rbp) per frame; each
 * bpf_probe_read_user() costs far more than the 8 bytes it copies
 * (access_ok, the hardened-usercopy check of the destination, the
 * helper call: 30 % of a walk's time when each read was its own).  So a
 * read outside the window refills it from the address to the end of its
 * page (a page is mapped whole or not at all, so a refill never fails for
 * bytes past the stack's end), up to UST_BPFU_WALK_WIN_U64 words.
 */
#define UST_BPFU_WALK_WIN_U64	128

/* In the record's walk[] (see ust_bpfu_abi.h). */
struct ust_bpfu_walk {
	struct ust_bpfu_walk_regs g;
	struct ust_bpfu_walk_regs saved;	/* g before this step (faultable walks) */
	__u32 tgid;
	__u32 faultable;	/* a read of a page not present asks for it */
	__u64 page;		/* the address asked for (UST_BPFU_WALK_PAGE) */
	__u32 no_memo;		/* the walk read something else: code bytes */
	__u32 vma_asked;	/* the VMA of frame vma_asked - 1 was looked up */
	__u32 vma_next;		/* the slot the next VMA found goes to */
	__u32 vma_refused;	/* the last lookup was refused (not "no VMA there") */
	__u32 served;		/* the memo served this walk: its frames are the last's */
	__u32 park_refused;	/* a park was refused: frame pointers from there, as before parks */
	__u32 pad;
	__u64 win_base;		/* the user address of win[0] */
	__u64 win_len;		/* bytes of win[] read; 0: empty */
	/* Kept from one walk of the task to the next (struct ust_bpfu_walk_task). */
	struct ust_bpfu_walk_vma vmas[UST_BPFU_WALK_VMAS];
	struct ust_bpfu_walk_memo memo;
	__u64 win[UST_BPFU_WALK_WIN_U64];	/* its bytes count only up to win_len */
};

/*
 * Each task walks in its own task storage (struct ust_bpfu_walk_task, in
 * bpfu_cookie.bpf.h's ust_bpfu_tasks, with its cookie): the record it
 * builds and the walk's state, whose VMA slots stay from one walk to the
 * next while they stand (ust_bpfu_mm_seq()): a walk in steady state calls
 * bpf_find_vma() (the mmap lock, a maple-tree walk, a callback) for no
 * frame.  With the table each VMA was seen with: a READY table's rows
 * never change (user space only ever appends rows), a PENDING one is
 * looked up again.
 */
_Static_assert(sizeof(struct ust_bpfu_walk) <= sizeof(((struct ust_bpfu_rec_stack *)0)->walk),
	       "the walk's state fits the record's walk[]");

static __always_inline struct ust_bpfu_walk *ust_bpfu_walk_of(struct ust_bpfu_walk_task *t)
{
	return (struct ust_bpfu_walk *)t->r.walk;
}

/* The 8 bytes at @addr of the stack, through the window.  0 or -EFAULT. */
static __always_inline long ust_bpfu_walk_peek(struct ust_bpfu_walk *w, __u64 *val, __u64 addr)
{
	__u64 d = addr - w->win_base, len;

	if (!(d & 7) && d < w->win_len && w->win_len - d >= 8) {
		*val = w->win[(d >> 3) & (UST_BPFU_WALK_WIN_U64 - 1)];
		return 0;
	}
	len = 4096 - (addr & 4095);
	if (len > sizeof(w->win))
		len = sizeof(w->win);
	if (len < 8)	/* a word across two pages */
		return bpf_probe_read_user(val, sizeof(*val), (void *)addr) ? -14 : 0;
	if (bpf_probe_read_user(w->win, len, (void *)addr)) {
		w->win_len = 0;
		return -14;	/* -EFAULT */
	}
	w->win_base = addr;
	w->win_len = len;
	*val = w->win[0];
	return 0;
}

/*
 * ust_bpfu_walk_peek() for the walk: logged for the memo.  -EFAULT: cannot
 * be read; in a faultable walk w->page says where (the step is undone and
 * asks for that page).
 */
static __always_inline long ust_bpfu_walk_u64(struct ust_bpfu_walk *w, __u64 *val, __u64 addr)
{
	__u32 n, k;

	if (ust_bpfu_walk_peek(w, val, addr)) {
		if (w->faultable)
			w->page = addr;
		return -14;	/* -EFAULT */
	}
	n = w->g.nr_words;
	k = n;
	/* Masked where the verifier sees it: the test below would let clang drop the mask. */
	barrier_var(k);
	k &= UST_BPFU_WALK_MEMO_WORDS - 1;
	if (n < UST_BPFU_WALK_MEMO_WORDS) {
		w->memo.addr[k] = addr;
		w->memo.val[k] = *val;
	}
	w->g.nr_words = n + 1;
	return 0;
}

/*
 * x86: the vDSO is the mapping at mm->context.vdso.  Its table is keyed
 * (UST_BPFU_CFI_VDSO_INO, 0): every process of a kernel maps the same
 * image.
 */
struct mm_context___ust {
	void *vdso;
} __attribute__((preserve_access_index));

struct mm_struct___walk {
	struct mm_context___ust context;
	unsigned long task_size;
	unsigned long start_code;	/* the program's code (an exec's record) */
	unsigned long end_code;
	unsigned long brk;
	unsigned long start_stack;
} __attribute__((preserve_access_index));

/*
 * task->mm read as a number, for the paths a walk seldom takes.  A load
 * of a pointer from a trusted task_struct makes the verifier look up to
 * four "task_struct__safe_*" names in vmlinux's BTF, each a scan of every
 * type, at each state that reaches the load: on 6.18 that was a fifth of
 * a program's verification, most of it here.  Only BPF_CORE_READ() may
 * follow the result.
 */
static __always_inline struct mm_struct___walk *ust_bpfu_mm_of(struct task_struct *task)
{
	return (struct mm_struct___walk *)BPF_CORE_READ(task, mm);
}

static __always_inline bool ust_bpfu_walk_is_vdso(struct task_struct *task, __u64 start)
{
	struct mm_struct___walk *mm = ust_bpfu_mm_of(task);

	if (!bpf_core_field_exists(mm->context.vdso))
		return false;
	return (__u64)BPF_CORE_READ(mm, context.vdso) == start;
}

/*
 * The file's table entry, asking user space for it the first time (@why:
 * UST_BPFU_NEED_WALK, or _MMAP from ust_bpfu_mmap_exec()).
 */
static __always_inline void ust_bpfu_walk_table(__u32 tgid, struct ust_bpfu_walk_vma *s, __u32 why)
{
#if UST_BPFU_CFI
	struct ust_bpfu_cfi_key key = {};
	struct ust_bpfu_cfi_file *f, pending = { .state = UST_BPFU_CFI_PENDING };
	struct ust_bpfu_rec_need *n;

	s->tstate = UST_BPFU_CFI_NONE;
	if (!ust_cfi_on)
		return;
	if (s->vdso) {
		key.ino = UST_BPFU_CFI_VDSO_INO;
	} else if (s->v.ino) {
		key.ino = s->v.ino;
		key.dev = s->v.dev;
	} else {
		return;		/* anonymous memory, JIT: frame pointers */
	}
	f = bpf_map_lookup_elem(&ust_bpfu_cfi_files, &key);
	if (f) {
		s->tstate = f->state;
		s->tfirst = f->first;
		s->tnr = f->nr;
		s->tshape = f->shape;
		s->tidx = f->idx;
		return;
	}
	s->tstate = UST_BPFU_CFI_PENDING;
	/* Whoever inserts the entry asks: once per file, whatever the CPUs do. */
	if (bpf_map_update_elem(&ust_bpfu_cfi_files, &key, &pending, BPF_NOEXIST))
		return;
	n = bpf_ringbuf_reserve(&ust_bpfu_events, sizeof(*n), 0);
	if (!n) {
		/* Nobody will answer: let the next walk ask again. */
		bpf_map_delete_elem(&ust_bpfu_cfi_files, &key);
		UST_COUNT(drops);
		return;
	}
	n->h.kind = UST_BPFU_REC_NEED_CFI;
	n->h.cpu = bpf_get_smp_processor_id();
	n->h.ts = bpf_ktime_get_ns();
	n->h.tid = (__u32)bpf_get_current_pid_tgid();
	n->h.tgid = tgid;
	n->h.cookie = 0;
	n->ino = key.ino;
	n->dev = key.dev;
	n->why = why;
	n->vm_start = s->v.start;
	n->vm_end = s->v.end;
	n->vm_pgoff = s->v.pgoff;
	bpf_ringbuf_submit(n, BPF_RB_FORCE_WAKEUP);
	UST_COUNT(cfi_need);
#else
	(void)tgid, (void)why;
	s->tstate = UST_BPFU_CFI_NONE;
#endif
}

/*
 * Whether this kernel lets a task's walks keep VMAs (mm->mm_lock_seq, 6.13+):
 * there a refused lookup is the exception (a sample just after the process
 * mapped something) and parks; before, refusals are routine at system-call
 * exits and the walk records the address raw and goes on by frame pointers.
 */
static __always_inline bool ust_bpfu_walk_keeps_vmas(void)
{
	struct mm_struct___ust *mm = NULL;

	return bpf_core_field_exists(mm->mm_lock_seq.sequence);
}

/*
 * The VMA holding @addr, into the next slot in turn; its slot, or -1 when
 * no VMA holds it.  A global function: bpf_find_vma() and the table
 * lookup, once per file a task's stacks meet, not once per frame.
 */
__noinline int ust_bpfu_walk_vma(struct ust_bpfu_walk_task *t, __u64 addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_vma v;	/* bpf_find_vma()'s context must be on the stack */
	struct ust_bpfu_walk *w;
	struct ust_bpfu_walk_vma *s;
	long err;
	int i;

	if (!t)
		return -1;
	w = ust_bpfu_walk_of(t);
	__builtin_memset(&v, 0, sizeof(v));
	i = w->vma_next++ & (UST_BPFU_WALK_VMAS - 1);
	s = &w->vmas[i];
	err = bpf_find_vma(task, addr, ust_bpfu_vma_cb, &v, 0);
	w->vma_refused = err && err != -2 /* -ENOENT: no VMA */;
	/*
	 * Refused: the process's code as BPF keeps it (bpfu_code.bpf.h), on
	 * kernels where a refusal is the exception.  Before 6.13 they are
	 * routine at system-call exits, and the address stays raw for the
	 * recorder to place from the process's maps: in the vm lane's guests
	 * (9p root) the table's answer for the program named a file the
	 * recorder could not find, and every deep40 stack of live-cfi-script
	 * parked for a table that never came.
	 */
	if (w->vma_refused && UST_BPFU_CFI && ust_bpfu_walk_keeps_vmas() &&
	    ust_bpfu_code_find(w->tgid, addr, &v)) {
		w->vma_refused = 0;
		UST_COUNT(vma_code);
	}
	if (w->vma_refused) {
		w->g.flags |= UST_BPFU_F_RAW;
		UST_COUNT(vma_fail);
	}
	__builtin_memcpy(&s->v, &v, sizeof(v));
	if (!v.found)
		return -1;
	/* A file's code found: kept for a lookup refused later (6.13+). */
	if (UST_BPFU_CFI && !w->vma_refused && v.exec && v.ino && ust_bpfu_walk_keeps_vmas())
		ust_bpfu_code_add(w->tgid, &v);
	s->vdso = !s->v.ino && ust_bpfu_walk_is_vdso(task, s->v.start);
	ust_bpfu_walk_table(w->tgid, s, UST_BPFU_NEED_WALK);
	return i;
}

/*
 * Row hints: the row a (table, offset) was last found at, per CPU, in a
 * small direct-mapped array.  Programs walk the same few stacks again and
 * again (a system call in a loop); a binary search is a chain of ~15
 * dependent loads for a libc frame, a hint two independent ones.  A hint
 * is only a guess: it is used if the row still brackets the offset (its
 * off <= @off < the next row's off), so a stale or torn one (a perf
 * sample's walk interrupting this one on the same CPU) costs a search,
 * never a wrong row.  (In the frame-pointer variant too, unused: every
 * variant has the same maps.)
 */
#define UST_BPFU_WALK_HINTS	4096

struct ust_bpfu_walk_hints {
	__u32 row[UST_BPFU_WALK_HINTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_bpfu_walk_hints);
} ust_bpfu_walk_hints SEC(".maps");

#if UST_BPFU_CFI

/* Row @k if it is the last of [first, first + nr) whose off is <= @off. */
static __always_inline bool ust_bpfu_walk_row_is(__u32 first, __u32 nr, __u32 k, __u32 off)
{
	const struct ust_cfi_row *row, *next;
	__u32 k1;

	if (k - first >= nr)
		return false;
	row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
	if (!row || row->off > off)
		return false;
	if (k + 1 - first == nr)
		return true;
	k1 = k + 1;
	next = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k1);
	return next && next->off > off;
}

/*
 * Entry @b of the index at element @idx (struct ust_bpfu_cfi_file), or
 * UST_BPFU_CFI_IDX_NONE when it cannot be read.
 */
static __always_inline __u32 ust_bpfu_walk_idx(__u32 idx, __u32 b)
{
	const __u32 *e;
	__u32 k = idx + (b >> 2);

	e = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
	return e ? e[b & 3] : UST_BPFU_CFI_IDX_NONE;
}

/*
 * The index of the last row of rows [first, first + nr) whose off is <=
 * @off, or -1: its hint, or halving steps between the rows its bucket of
 * the table's index (@shape, @idx) brackets (a few), or, without an index,
 * as many as the file has rows (15 for libc's 28k); each step without a
 * branch but the map lookup's and the end test.  A global function of
 * scalars: verified once.
 */
__noinline int ust_bpfu_walk_row(__u32 first, __u32 nr, __u32 off, __u32 shape, __u32 idx)
{
	const struct ust_cfi_row *row;
	struct ust_bpfu_walk_hints *h;
	__u64 lo = 0, hi = nr, mid, ge;
	__u32 k, i, zero = 0, slot, nb, b, e;

	if (!nr || first > 0x7fffffff)
		return -1;
	slot = (((off ^ (first * 0x9e3779b1U)) * 0x9e3779b1U) >> 20) & (UST_BPFU_WALK_HINTS - 1);
	h = bpf_map_lookup_elem(&ust_bpfu_walk_hints, &zero);
	if (h) {
		k = h->row[slot];
		if (ust_bpfu_walk_row_is(first, nr, k, off))
			return (int)(k & 0x7fffffff);
	}
	nb = UST_BPFU_CFI_SHAPE_NB(shape);
	if (nb) {
		b = off >> UST_BPFU_CFI_SHAPE_SHIFT(shape);
		if (b >= nb)
			b = nb - 1;
		e = ust_bpfu_walk_idx(idx, b);
		lo = e == UST_BPFU_CFI_IDX_NONE ? 0 : e;
		if (b + 1 < nb) {
			e = ust_bpfu_walk_idx(idx, b + 1);
			/* None at the next bucket's start: none at or below @off either. */
			hi = e == UST_BPFU_CFI_IDX_NONE ? 1 : (__u64)e + 1;
		}
		if (lo >= hi || hi > nr) {	/* an index that does not fit: all rows */
			lo = 0;
			hi = nr;
		}
	}
	for (i = 0; i < UST_BPFU_WALK_SEARCH_STEPS; i++) {
		if (hi - lo <= 1)
			break;
		mid = (lo + hi) >> 1;
		k = first + (__u32)mid;
		row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
		if (!row)
			return -1;
		/* ge = row->off <= off ? 1 : 0, by the sign of the difference. */
		ge = 1 ^ (((__u64)off - (__u64)row->off) >> 63);
		lo += ge * (mid - lo);
		hi -= (1 - ge) * (hi - mid);
	}
	k = first + (__u32)lo;
	row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
	if (!row || row->off > off)
		return -1;
	if (h)
		h->row[slot] = k;
	return (int)(k & 0x7fffffff);
}
#endif /* UST_BPFU_CFI */

/*
 * Is the return address of frame 0 at [sp], with %rbp still the caller's
 * frame?  Then the frame-pointer walk alone would skip the caller.  True
 * when the instruction at @ip is
 *  - a `ret`, alone or after the error check of a syscall wrapper
 *    ("syscall; ret", "syscall; cmp $-4095,%rax; jae err; ret"): every
 *    glibc syscall wrapper, i.e. most syscall events;
 *  - a function's first one, `push %rbp` (after an `endbr64` or not).
 * Only for a frame 0 without a table.  The unwinder of the kernel series
 * does neither (kernel_frames option).
 */
static __always_inline bool ust_bpfu_walk_ra_at_sp(struct ust_bpfu_walk *w, __u64 ip)
{
	__u8 b[9] = {};

	w->no_memo = 1;		/* code, not stack words: the memo cannot tell */

	if (bpf_probe_read_user(b, sizeof(b), (void *)ip)) {
		/* A ret at the very end of the mapping. */
		if (!bpf_probe_read_user(b, 1, (void *)ip))
			return b[0] == 0xc3;
		if (w->faultable)
			w->page = ip;
		return false;
	}
	if (b[0] == 0xc3 || (b[0] == 0xf3 && b[1] == 0xc3))
		return true;
	/* cmp $imm32,%rax; jae/ja rel8; ret */
	if (b[0] == 0x48 && b[1] == 0x3d && (b[6] == 0x73 || b[6] == 0x77) && b[8] == 0xc3)
		return true;
	/* push %rbp, endbr64; push %rbp */
	return b[0] == 0x55 ||
	       (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa && b[4] == 0x55);
}

/*
 * One frame-pointer step (ust_cfi_step_fp()), after, for frame 0, a look
 * at its instruction: a return address at [sp] comes first.
 */
static __always_inline int ust_bpfu_walk_fp(struct ust_bpfu_walk *w, __u32 nr,
					    const struct ust_cfi_row *row)
{
	int ret;

	if (nr == 0 && ust_leaf_ret) {
		bool at_sp = ust_bpfu_walk_ra_at_sp(w, w->g.r.ip);
		__u64 ra = 0;

		/* A page not present: ust_bpfu_walk_ret() makes it WALK_PAGE. */
		if (w->page)
			return UST_CFI_STEP_FAULT;
		if (at_sp && !ust_bpfu_walk_u64(w, &ra, w->g.r.sp) && ra) {
			w->g.flags |= UST_BPFU_F_LEAF_RET | UST_BPFU_F_FP;
			w->g.r.ip = ra;
			w->g.r.sp += 8;
			w->g.r.ip_exact = 0;
			return UST_CFI_STEP_NEXT;
		}
		if (w->page)
			return UST_CFI_STEP_FAULT;
	}
	ret = ust_cfi_step_norule(w, &w->g.r, row);
	if (ret == UST_CFI_STEP_NEXT) {
		w->g.flags |= UST_BPFU_F_FP;
		w->g.fp_frames++;
	}
	return ret;
}

#if UST_BPFU_CFI
/* One step by @row, a rule (ust_cfi_step_row()). */
static __always_inline int ust_bpfu_walk_cfi(struct ust_bpfu_walk *w, const struct ust_cfi_row *row)
{
	int ret = ust_cfi_step_row(w, &w->g.r, row);

	/* A signal frame is by CFI whatever its reads gave. */
	if (ret <= UST_CFI_STEP_BOTTOM || row->cfa_type == UST_CFI_CFA_SIGNAL)
		w->g.flags |= UST_BPFU_F_CFI;
	if (ret == UST_CFI_STEP_NEXT || ret == UST_CFI_STEP_END)
		w->g.cfi_frames++;
	return ret;
}
#endif

/*
 * A step's answer (UST_CFI_STEP_*) as the walk's (UST_BPFU_WALK_*), with
 * the flag of how it ended; @bad: the flag of a cut (no CFA, no frame
 * pointer).  A read of a page not present, in a faultable walk, whatever
 * the step made of it: the step again, with that page.
 */
static __always_inline int ust_bpfu_walk_ret(struct ust_bpfu_walk *w, int ret, __u32 bad)
{
	if (w->page)
		return UST_BPFU_WALK_PAGE;
	if (ret == UST_CFI_STEP_NEXT)
		return UST_BPFU_WALK_NEXT;
	if (ret == UST_CFI_STEP_BOTTOM)
		w->g.flags |= UST_BPFU_F_BOTTOM;
	else if (ret == UST_CFI_STEP_BAD)
		w->g.flags |= bad;
	else if (ret == UST_CFI_STEP_FAULT)
		w->g.flags |= UST_BPFU_F_FAULT;
	return UST_BPFU_WALK_END;
}

/*
 * Frame g.nr: record g.ip (as file offset, inode, dev when a VMA holds it),
 * then step to its caller.  UST_BPFU_WALK_NEXT, _END, or (faultable walks)
 * _PAGE with the step undone.
 */
__noinline int ust_bpfu_walk_frame(struct ust_bpfu_walk_task *t)
{
	struct ust_bpfu_walk *w;
	struct ust_bpfu_walk_vma *s = NULL;
	struct ust_bpfu_frame *f;
	__u32 nr;
	int ret, i;
#if UST_BPFU_CFI
	const struct ust_cfi_row *row = NULL;
	__u64 pc, off;
	__u32 k;
	int ri;
#endif

	if (!t)
		return UST_BPFU_WALK_END;
	w = ust_bpfu_walk_of(t);
	nr = w->g.nr;
	if (nr >= UST_BPFU_MAX_FRAMES) {
		w->g.flags |= UST_BPFU_F_TRUNCATED;
		UST_COUNT(truncated);
		return UST_BPFU_WALK_END;
	}
	if (w->faultable) {
		w->saved = w->g;
		w->page = 0;
	}
	for (i = 0; i < UST_BPFU_WALK_VMAS; i++) {
		if (w->vmas[i].v.found && w->g.r.ip >= w->vmas[i].v.start && w->g.r.ip < w->vmas[i].v.end) {
			s = &w->vmas[i];
			break;
		}
	}
	/*
	 * Not in a slot: the VMA is looked up by the caller's loop, between
	 * two calls of this step, rather than from here, so that no call
	 * chain of the walk holds both frames' stacks (6.1 counts 512 bytes
	 * for the whole chain, bpf_find_vma()'s callback included).
	 */
	if (!s && w->vma_asked != nr + 1)
		return UST_BPFU_WALK_VMA;
	/*
	 * A return address points into code.  One in no VMA, or in one code
	 * cannot run from (the stack, data), is what a wrong step took for
	 * one (a frame pointer that is none, in a file whose table is not
	 * loaded yet): never a caller.  The walk ends before it and says so.
	 * Frame 0 and the ip a signal interrupted are where the task was,
	 * whatever the mapping.  A lookup refused (bpf_find_vma() busy) tells
	 * nothing: the address is recorded raw, for user space to place.
	 */
	if (!w->g.r.ip_exact && (s ? !s->v.exec : !w->vma_refused)) {
		w->g.flags |= UST_BPFU_F_NOT_EXEC;
		return UST_BPFU_WALK_END;
	}
#if UST_BPFU_CFI
	/*
	 * A file whose table is not loaded yet, or an address whose VMA
	 * could not be looked up (a sample's interrupt after the process
	 * mapped something: its slots are gone and it gets one lookup): by
	 * frame pointers, code built without them (Debian's) would end the
	 * stack here.  The walk parks instead, for the recorder to finish
	 * with the process's maps and the file's table (the caller's loop
	 * calls ust_bpfu_walk_park(): not from here, for the call chain's
	 * stack).
	 */
	if (ust_park_on && !w->park_refused &&
	    (s ? s->tstate == UST_BPFU_CFI_PENDING : w->vma_refused && ust_bpfu_walk_keeps_vmas()))
		return UST_BPFU_WALK_PARK;
#endif
	f = &t->r.frames[nr & (UST_BPFU_SLOTS - 1)];
	if (s) {
		f->off = w->g.r.ip - s->v.start + (s->v.pgoff << 12);
		f->ino = s->v.ino;
		f->dev = s->v.dev;
		f->raw = 0;
	} else {
		f->off = w->g.r.ip;
		f->ino = 0;
		f->dev = 0;
		f->raw = w->vma_refused;
	}
	w->g.nr = nr + 1;

#if UST_BPFU_CFI
	pc = ust_cfi_regs_pc(&w->g.r);
	if (s && s->tstate == UST_BPFU_CFI_READY && pc >= s->v.start) {
		off = pc - s->v.start + (s->v.pgoff << 12);
		if (off <= 0xffffffffULL) {
			ri = ust_bpfu_walk_row(s->tfirst, s->tnr, (__u32)off, s->tshape, s->tidx);
			if (ri >= 0) {
				k = (__u32)ri;
				row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
			}
		}
	} else if (s && s->tstate == UST_BPFU_CFI_PENDING) {
		w->g.flags |= UST_BPFU_F_NO_TABLE;
	}
	if (ust_cfi_row_fp(row))
		ret = ust_bpfu_walk_ret(w, ust_bpfu_walk_fp(w, nr, row), UST_BPFU_F_NO_UNWIND);
	else
		ret = ust_bpfu_walk_ret(w, ust_bpfu_walk_cfi(w, row), UST_BPFU_F_BAD_CFA);
#else
	ret = ust_bpfu_walk_ret(w, ust_bpfu_walk_fp(w, nr, NULL), UST_BPFU_F_NO_UNWIND);
#endif
	if (ret == UST_BPFU_WALK_PAGE)
		w->g = w->saved;
	return ret;
}

/*
 * Slot @i of the task's VMAs, found by an earlier walk of this task, when
 * the mm's sequence has moved since (or the kernel has none to tell): 1 if
 * its vm_area_struct still reads as the same mapping (this mm, the same
 * range, offset and file), else 0 and the slot is emptied.
 *
 * Why not just look it up again: a walk in an interrupt (a perf sample's,
 * where BPF cannot defer it) gets one bpf_find_vma() (the mmap lock's
 * release then waits in an irq_work), and a process whose allocator maps
 * and unmaps memory moves the sequence between nearly any two samples: its
 * walks named one file and stopped at the next (python3: 43 % of the
 * stacks complete at 999 Hz).  The reads are probe reads of memory that
 * may have been freed (a VMA goes by RCU, or at once before 6.4) and
 * reused: all five fields matching means the same mapping, as a VMA that
 * was split, merged or moved differs in range or offset.  A change under
 * way on another CPU is caught by the sequence at the walk's end (the
 * slots are then not kept), as for bpf_find_vma()'s own results.
 */
__noinline int ust_bpfu_walk_recheck_vma(struct ust_bpfu_walk_task *t, __u32 i)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_walk_vma *s;
	struct vm_area_struct *vma;
	struct ust_bpfu_walk *w;

	if (!t)
		return 0;
	w = ust_bpfu_walk_of(t);
	s = &w->vmas[i & (UST_BPFU_WALK_VMAS - 1)];
	if (!s->v.found)
		return 0;
	if (!s->v.vma) {
		s->v.found = 0;
		return 0;
	}
	if (bpf_rdonly_cast) {
		/* Six plain loads, not six helper calls (UST_KCAST()). */
		vma = UST_KCAST(struct vm_area_struct, s->v.vma);
		if ((__u64)vma->vm_mm != (__u64)task->mm || vma->vm_start != s->v.start ||
		    vma->vm_end != s->v.end || vma->vm_pgoff != s->v.pgoff ||
		    (__u64)vma->vm_file != s->v.file) {
			s->v.found = 0;
			return 0;
		}
		/* An mprotect() of the whole range (a JIT's W^X) keeps all five. */
		s->v.exec = !!(vma->vm_flags & VM_EXEC);
		return 1;
	}
	vma = (struct vm_area_struct *)s->v.vma;
	if ((__u64)BPF_CORE_READ(vma, vm_mm) != (__u64)task->mm ||
	    BPF_CORE_READ(vma, vm_start) != s->v.start || BPF_CORE_READ(vma, vm_end) != s->v.end ||
	    BPF_CORE_READ(vma, vm_pgoff) != s->v.pgoff ||
	    (__u64)BPF_CORE_READ(vma, vm_file) != s->v.file) {
		s->v.found = 0;
		return 0;
	}
	s->v.exec = !!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC);
	return 1;
}

/* Slot @i of the task's VMAs: its table looked up again if PENDING. */
static __always_inline void ust_bpfu_walk_refresh(struct ust_bpfu_walk *w, struct ust_bpfu_walk_vma *s)
{
	if (s->v.found && s->tstate == UST_BPFU_CFI_PENDING)
		ust_bpfu_walk_table(w->tgid, s, UST_BPFU_NEED_WALK);
}

/*
 * Words 4i .. 4i + 3 of the memo's walk, read again: 1 if one changed (or
 * cannot be read), the memo then no longer holds.
 */
__noinline int ust_bpfu_walk_recheck(struct ust_bpfu_walk_task *t, __u32 i)
{
	struct ust_bpfu_walk *w;
	__u32 j, k;
	__u64 v;

	if (!t)
		return 1;
	w = ust_bpfu_walk_of(t);
	for (j = 0; j < 4; j++) {
		k = i * 4 + j;
		if (k >= w->memo.nr_words || k >= UST_BPFU_WALK_MEMO_WORDS)
			return 0;
		/* Masked where the verifier sees it (clang hoists the address otherwise). */
		barrier_var(k);
		k &= UST_BPFU_WALK_MEMO_WORDS - 1;
		v = 0;
		/* Not logged: these are the memo's own words. */
		if (ust_bpfu_walk_peek(w, &v, w->memo.addr[k]) || v != w->memo.val[k]) {
			w->memo.ok = 0;
			return 1;
		}
	}
	return 0;
}

struct ust_bpfu_walk_ctx {
	struct ust_bpfu_walk_task *t;
};

static long ust_bpfu_walk_recheck_cb(__u32 i, void *data)
{
	return ust_bpfu_walk_recheck(((struct ust_bpfu_walk_ctx *)data)->t, i) ? 1 : 0;
}

/*
 * The start of a walk of the current task from @regs' user registers into
 * @t's record: 1 when the memo serves it (@memo: asked for; the record
 * then holds its frames), 0 to walk (ust_bpfu_walk_frame() per frame, then
 * ust_bpfu_walk_finish()).  @flags: the record's flags so far.
 */
__noinline int ust_bpfu_walk_start(struct ust_bpfu_walk_task *t, __u32 flags, int memo,
				   int faultable)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct ust_bpfu_walk_ctx c = { .t = t };
	struct ust_bpfu_walk *w;
	__u64 mm = 0;
	__u32 seq = 0;
	bool seq_ok, kept;
	int i;

	if (!t)
		return 0;
	w = ust_bpfu_walk_of(t);
	seq_ok = ust_bpfu_mm_seq(task, &mm, &seq);
	kept = seq_ok && t->mm == mm && t->seq == seq;
	__builtin_memset(&w->g, 0, sizeof(w->g));
	w->tgid = task->tgid;	/* ust_bpfu_walk_table() asks with it */
	w->faultable = faultable;
	w->page = 0;
	w->no_memo = 0;
	w->served = 0;
	w->park_refused = 0;
	w->vma_asked = 0;
	w->vma_refused = 0;
	w->win_len = 0;
	for (i = 0; i < UST_BPFU_WALK_VMAS; i++) {
		if (!kept && !ust_bpfu_walk_recheck_vma(t, (__u32)i))
			continue;
		ust_bpfu_walk_refresh(w, &w->vmas[i]);
	}
	ust_cfi_regs_init(&w->g.r, regs->ip, regs->sp, regs->bp, regs->bx);
	w->g.flags = flags;
	if (memo && kept && w->memo.ok && w->memo.ip == w->g.r.ip && w->memo.sp == w->g.r.sp &&
	    (!w->memo.bp_used || w->memo.bp == w->g.r.bp) && (!w->memo.bx_used || w->memo.bx == w->g.r.bx)) {
		bpf_loop((w->memo.nr_words + 3) / 4, ust_bpfu_walk_recheck_cb, &c, 0);
		if (w->memo.ok) {
			t->r.nr = w->memo.nr;
			t->r.flags = flags | w->memo.flags;
			w->g.cfi_frames = w->memo.cfi_frames;
			w->g.fp_frames = w->memo.fp_frames;
			if (w->memo.flags & UST_BPFU_F_TRUNCATED)
				UST_COUNT(truncated);
			UST_COUNT(memo_walks);
			w->served = 1;
			ust_bpfu_walk_count(w->g.cfi_frames, w->g.fp_frames);
			return 1;
		}
	}
	w->memo.ok = 0;
	/*
	 * The slots are (mm, seq)'s from here on (cleared above if they were
	 * not): ust_bpfu_walk_finish() keeps them if the sequence holds.
	 */
	t->mm = seq_ok ? mm : 0;
	t->seq = seq;
	w->memo.ip = w->g.r.ip;
	w->memo.sp = w->g.r.sp;
	w->memo.bp = w->g.r.bp;
	w->memo.bx = w->g.r.bx;
	return 0;
}

/*
 * The end of a walk: its frames and flags into the record, the counters,
 * and the memo kept for the next walk when it can serve one.  @flags0:
 * the caller's flags, not the walk's.
 */
__noinline int ust_bpfu_walk_finish(struct ust_bpfu_walk_task *t, __u32 flags0)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_walk *w;
	__u64 mm = 0;
	__u32 seq = 0;

	if (!t)
		return 0;
	w = ust_bpfu_walk_of(t);
	t->r.nr = w->g.nr;
	t->r.flags = w->g.flags;
	ust_bpfu_walk_count(w->g.cfi_frames, w->g.fp_frames);
	/* The slots stand for the next walk only if no VMA changed meanwhile. */
	if (!t->mm || !ust_bpfu_mm_seq(task, &mm, &seq) || mm != t->mm || seq != t->seq) {
		t->mm = 0;
		return 0;
	}
	/* A walk that only read stack words, all of them logged, and ended by itself. */
	if (w->no_memo || w->g.nr_words > UST_BPFU_WALK_MEMO_WORDS ||
	    (w->g.flags & (UST_BPFU_F_FAULT | UST_BPFU_F_RAW | UST_BPFU_F_NO_TABLE)))
		return 0;
	w->memo.bp_used = w->g.r.bp_used;
	w->memo.bx_used = w->g.r.bx_used;
	w->memo.nr = w->g.nr;
	w->memo.flags = w->g.flags & ~flags0;
	w->memo.nr_words = w->g.nr_words;
	w->memo.cfi_frames = w->g.cfi_frames;
	w->memo.fp_frames = w->g.fp_frames;
	w->memo.ok = 1;
	return 0;
}

#if UST_BPFU_CFI
/* What a park of stack class @bytes takes of the ring: the record and bytes[]. */
#define UST_BPFU_PARK_REC_SIZE(bytes)	(sizeof(struct ust_bpfu_rec_park) + (bytes))

/*
 * A ring reservation's size must be a constant to the verifier, so a park
 * reserves one of four sizes: the smallest class (4, 8, 16 or 32 KiB of
 * stack) that holds @want bytes.  Most parked stacks are shallow (a main
 * thread's from rsp to its VMA's end, environment included, 5-12 KiB; a
 * thread's a few KiB), so a ring that held 32 KiB per park now holds
 * about four times as many.  *@cap: the class's bytes, a constant on
 * each path the verifier follows.
 */
static __always_inline struct ust_bpfu_rec_park *ust_bpfu_park_reserve(__u64 want, __u64 *cap)
{
	if (want <= (4U << 10)) {
		*cap = 4U << 10;
		return bpf_ringbuf_reserve(&ust_bpfu_events, UST_BPFU_PARK_REC_SIZE(4U << 10), 0);
	}
	if (want <= (8U << 10)) {
		*cap = 8U << 10;
		return bpf_ringbuf_reserve(&ust_bpfu_events, UST_BPFU_PARK_REC_SIZE(8U << 10), 0);
	}
	if (want <= (16U << 10)) {
		*cap = 16U << 10;
		return bpf_ringbuf_reserve(&ust_bpfu_events, UST_BPFU_PARK_REC_SIZE(16U << 10), 0);
	}
	*cap = UST_BPFU_PARK_CAP;
	return bpf_ringbuf_reserve(&ust_bpfu_events, UST_BPFU_PARK_REC_SIZE(UST_BPFU_PARK_CAP), 0);
}

/* The PARK record but its copy: the parked frame, the VMAs the walk knew. */
static __always_inline void ust_bpfu_park_head(struct ust_bpfu_rec_park *r, struct ust_bpfu_walk_task *t,
					      struct ust_bpfu_walk *w, struct task_struct *task,
					      __u64 stack_end)
{
	__u32 k;

	r->h.kind = UST_BPFU_REC_PARK;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.ts = bpf_ktime_get_ns();
	r->h.tid = (__u32)bpf_get_current_pid_tgid();
	r->h.tgid = w->tgid;
	r->h.cookie = 0;
	r->seq = t->sent + 1;		/* ust_bpfu_walk_send()'s for the STACK record */
	r->nr = w->g.nr;
	r->regs = (w->g.r.bp_ok ? UST_BPFU_PARK_BP_OK : 0) | (w->g.r.bx_ok ? UST_BPFU_PARK_BX_OK : 0) |
		  (w->g.r.ip_exact ? UST_BPFU_PARK_IP_EXACT : 0);
	r->ip = w->g.r.ip;
	r->sp = w->g.r.sp;
	r->bp = w->g.r.bp;
	r->bx = w->g.r.bx;
	r->bp_at = w->g.r.bp_at;
	r->bx_at = w->g.r.bx_at;
	r->stack_end = stack_end;
	for (k = 0; k < UST_BPFU_PARK_VMAS && k < UST_BPFU_WALK_VMAS; k++) {
		struct ust_bpfu_walk_vma *s = &w->vmas[k];
		struct ust_bpfu_park_vma *pv = &r->vmas[k];

		pv->start = s->v.found ? s->v.start : 0;
		pv->end = s->v.found ? s->v.end : 0;
		pv->pgoff = s->v.pgoff;
		pv->ino = s->v.ino;
		pv->dev = s->v.dev;
		pv->flags = (s->v.exec ? UST_BPFU_PARK_VMA_EXEC : 0) | (s->vdso ? UST_BPFU_PARK_VMA_VDSO : 0);
	}
	r->ptgid = (__u32)BPF_CORE_READ(task, real_parent, tgid);
}

/*
 * Room in the ring for a park of @size, while the ring keeps half its
 * room: a reader busy with a burst of records must still find room there
 * for every other record.
 */
static __always_inline bool ust_bpfu_park_room(__u64 size)
{
	__u64 ring = bpf_ringbuf_query(&ust_bpfu_events, BPF_RB_RING_SIZE);
	__u64 avail = ring - bpf_ringbuf_query(&ust_bpfu_events, BPF_RB_AVAIL_DATA);

	if (avail < size || avail - size < ring / 2) {
		UST_COUNT(park_no_room);
		return false;
	}
	return true;
}

/* A park sent: @len bytes of it for @span bytes of stack; @whole: not sparse. */
static __always_inline void ust_bpfu_park_sent(struct ust_bpfu_walk *w, __u64 len, __u64 span,
					       bool whole)
{
	__u32 zero = 0;
	struct ust_bpfu_counters *c = bpf_map_lookup_elem(&ust_bpfu_stats, &zero);

	w->g.flags |= UST_BPFU_F_PARKED | UST_BPFU_F_NO_TABLE;
	UST_COUNT(parks);
	if (whole)
		UST_COUNT(park_whole);
	if (c) {
		__sync_fetch_and_add(&c->park_bytes, len);
		__sync_fetch_and_add(&c->park_span, span);
	}
}

/*
 * Read @want bytes of stack from @sp into @dst (@cap at most): all or
 * nothing, as bpf_probe_read_user() copies (a page not present zeroes it
 * all), so a copy that fails is tried at half the length, then a quarter,
 * then to the end of rsp's page.  The length read, 0: none.
 */
static __always_inline __u64 ust_bpfu_park_read(void *dst, __u64 sp, __u64 want, __u64 cap)
{
	__u64 len = want;
	__u32 i;

	for (i = 0; i < 4; i++) {
		if (i == 3)
			len = 4096 - (sp & 4095);
		barrier_var(len);
		if (len > cap)
			len = cap;
		if (!bpf_probe_read_user(dst, len, (void *)sp))
			break;
		len >>= 1;
	}
	if (i == 4) {
		UST_COUNT(park_short);
		return 0;
	}
	if (len < want)
		UST_COUNT(park_short);
	return len;
}

struct ust_bpfu_park_sparse {
	struct ust_bpfu_park_buf *b;
	__u32 words;	/* the stack's */
	__u32 kept;
};

/*
 * Word @i of the stack copied whole into b->out's bytes[]: moved down to
 * the kept ones if a walk may use it, its bits set.  The rounds run to a
 * whole bitmap word, clearing what the last park left there.
 */
static long ust_bpfu_park_sparse_cb(__u32 i, void *data)
{
	struct ust_bpfu_park_sparse *x = data;
	struct ust_bpfu_park_buf *b = x->b;
	__u8 *bytes = b->out + sizeof(struct ust_bpfu_rec_park);
	__u32 k = x->kept;
	__u64 v;

	if (i >= UST_BPFU_PARK_WORDS || k >= UST_BPFU_PARK_WORDS)
		return 1;
	/* Bounds the verifier keeps through the shifts (a power of two). */
	barrier_var(i);
	barrier_var(k);
	i &= UST_BPFU_PARK_WORDS - 1;
	k &= UST_BPFU_PARK_WORDS - 1;
	if (!(i & 7)) {
		b->kept_map[i >> 3] = 0;
		b->junk_map[i >> 3] = 0;
	}
	if (i >= x->words)
		return 0;
	v = *(__u64 *)(bytes + i * 8);
	if (UST_BPFU_PARK_WORD_KEEP(v, b->start_code, b->end_code, b->brk, b->task_size)) {
		*(__u64 *)(bytes + k * 8) = v;
		x->kept = k + 1;
		b->kept_map[i >> 3] |= (__u8)(1U << (i & 7));
	} else if (v) {
		b->junk_map[i >> 3] |= (__u8)(1U << (i & 7));
	}
	return 0;
}

/*
 * The park through this CPU's working copy, sent at its own size
 * (UST_BPFU_PARK_SPARSE): 0 parked, -1 refused.
 */
static __always_inline int ust_bpfu_park_sparse(struct ust_bpfu_walk_task *t, struct ust_bpfu_walk *w,
						struct task_struct *task, struct ust_bpfu_park_buf *b,
						__u64 want, __u64 stack_end)
{
	struct ust_bpfu_rec_park *r = (void *)b->out;
	struct mm_struct___walk *mm = ust_bpfu_mm_of(task);
	struct ust_bpfu_park_sparse x = { .b = b };
	__u64 len, nb, off, size;

	len = ust_bpfu_park_read(r->bytes, w->g.r.sp, want, UST_BPFU_PARK_CAP);
	if (!len)
		return -1;
	x.words = (__u32)(len / 8);
	b->start_code = BPF_CORE_READ(mm, start_code);
	b->end_code = BPF_CORE_READ(mm, end_code);
	b->brk = BPF_CORE_READ(mm, brk);
	b->task_size = BPF_CORE_READ(mm, task_size);
	nb = UST_BPFU_PARK_MAP_BYTES(len);
	bpf_loop((__u32)nb * 8, ust_bpfu_park_sparse_cb, &x, 0);
	off = (__u64)x.kept * 8;
	if (off > UST_BPFU_PARK_CAP || nb > UST_BPFU_PARK_MAPS)
		return -1;
	bpf_probe_read_kernel(r->bytes + off, nb, b->kept_map);
	bpf_probe_read_kernel(r->bytes + off + nb, nb, b->junk_map);
	size = sizeof(*r) + off + 2 * nb;
	if (size > sizeof(b->out) || !ust_bpfu_park_room(size))
		return -1;
	ust_bpfu_park_head(r, t, w, task, stack_end);
	r->regs |= UST_BPFU_PARK_SPARSE;
	r->len = x.words * 8;
	r->kept = x.kept;
	r->pad = 0;
	if (bpf_ringbuf_output(&ust_bpfu_events, r, size, ust_bpfu_rb_flags(size))) {
		UST_COUNT(park_no_room);
		return -1;
	}
	ust_bpfu_park_sent(w, off + 2 * nb, r->len, false);
	return 0;
}

/*
 * Park the walk at frame g.nr (ust_bpfu_walk_frame() said
 * UST_BPFU_WALK_PARK): a PARK record with its registers, the task's VMA
 * slots and the user stack from its rsp up, for the recorder to walk on
 * once the file's table is built (lib/record/bpfu_park.c); the STACK
 * record that follows says UST_BPFU_F_PARKED.  0: parked, the walk ends;
 * -1: refused, it goes on by frame pointers as it did before parks.
 *
 * How much stack: up to the end of the stack's VMA, at most
 * UST_BPFU_PARK_CAP (ust_bpfu_abi.h says why that much), only the words
 * a walk may use (ust_bpfu_park_sparse()), and only while the ring keeps
 * half its room.  Parks are the first walks through a file only.  Where
 * this CPU's working copy is taken, the stack goes whole into a ring
 * reservation of the size class above it (ust_bpfu_park_reserve()).
 */
__noinline int ust_bpfu_walk_park(struct ust_bpfu_walk_task *t)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_park_buf *b;
	struct ust_bpfu_rec_park *r;
	struct ust_bpfu_vma v;	/* bpf_find_vma()'s context must be on the stack */
	struct ust_bpfu_walk *w;
	__u64 sp, want, len, cap = 0;
	__u32 cpu;

	if (!t)
		return -1;
	w = ust_bpfu_walk_of(t);
	sp = w->g.r.sp;
	__builtin_memset(&v, 0, sizeof(v));
	bpf_find_vma(task, sp, ust_bpfu_vma_cb, &v, 0);
	want = v.found && v.end > sp ? v.end - sp : 0;
	/*
	 * The main thread's frames all lie below mm->start_stack, where
	 * argc is (_start's own frame has no caller to read): the
	 * arguments, environment and auxiliary vector above it are 2-4 KiB
	 * of every park of a compiler's stack, and no walk reads them.
	 */
	if (want) {
		struct mm_struct___walk *mm = ust_bpfu_mm_of(task);
		__u64 top = (__u64)BPF_CORE_READ(mm, start_stack) + 16;

		if (top > sp && top < v.end)
			want = top - sp;
	}
	if (!want) {
		/*
		 * Refused: in a sample's interrupt the walk's own lookups took
		 * the one irq_work that releases the mmap lock.  The main
		 * thread's stack ends in the page that holds its start
		 * (argc, argv, the environment above it: all present); other
		 * threads' take the cap and the halving below.
		 */
		struct mm_struct___walk *mm = ust_bpfu_mm_of(task);
		__u64 top = (__u64)BPF_CORE_READ(mm, start_stack);

		top = (top | 4095) + 1;
		want = top > sp && top - sp <= UST_BPFU_PARK_CAP ? top - sp : UST_BPFU_PARK_CAP;
	}
	if (want > UST_BPFU_PARK_CAP)
		want = UST_BPFU_PARK_CAP;
	cpu = bpf_get_smp_processor_id();
	b = bpf_map_lookup_elem(&ust_bpfu_park_bufs, &cpu);
	if (b && !b->busy) {
		int ret;

		b->busy = 1;
		ret = ust_bpfu_park_sparse(t, w, task, b, want, v.found ? v.end : 0);
		b->busy = 0;
		return ret;
	}
	if (!ust_bpfu_park_room(UST_BPFU_PARK_REC_SIZE(want)))
		return -1;
	r = ust_bpfu_park_reserve(want, &cap);
	if (!r) {
		UST_COUNT(park_no_room);
		return -1;
	}
	len = ust_bpfu_park_read(r->bytes, sp, want, cap);
	if (!len) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return -1;
	}
	ust_bpfu_park_head(r, t, w, task, v.found ? v.end : 0);
	r->len = (__u32)len;
	r->kept = 0;
	r->pad = 0;
	bpf_ringbuf_submit(r, ust_bpfu_rb_flags(UST_BPFU_PARK_REC_SIZE(cap)));
	ust_bpfu_park_sent(w, len, len, true);
	return 0;
}
#endif

/*
 * A walk that parked ends; one whose park was refused takes the frame
 * again, by frame pointers.  1: the walk ends, 0: go on.
 */
static __always_inline long ust_bpfu_walk_park_round(struct ust_bpfu_walk_task *t)
{
#if UST_BPFU_CFI
	if (ust_bpfu_walk_park(t) == 0)
		return 1;
	ust_bpfu_walk_of(t)->park_refused = 1;
#else
	(void)t;
#endif
	return 0;
}

/*
 * A frame's VMA not in the task's slots, into one; the step then runs
 * again.  (No VMA holds it: the step goes on without one.)
 */
static __always_inline void ust_bpfu_walk_vma_round(struct ust_bpfu_walk_task *t)
{
	struct ust_bpfu_walk *w = ust_bpfu_walk_of(t);

	w->vma_asked = w->g.nr + 1;
	ust_bpfu_walk_vma(t, w->g.r.ip);
}

/* A frame per round, or its VMA's lookup. */
static long ust_bpfu_walk_frame_cb(__u32 i __ust_unused, void *data)
{
	struct ust_bpfu_walk_task *t = ((struct ust_bpfu_walk_ctx *)data)->t;
	int ret = ust_bpfu_walk_frame(t);

	if (ret == UST_BPFU_WALK_VMA) {
		ust_bpfu_walk_vma_round(t);
		return 0;
	}
	if (ret == UST_BPFU_WALK_PARK)
		return ust_bpfu_walk_park_round(t);
	return ret != UST_BPFU_WALK_NEXT;
}

/*
 * Walk the current task's user stack into @t's record, without faulting:
 * r.nr, r.frames and the UST_BPFU_F_* of how it went, or'ed into @flags.
 * @memo: the task's last walk may serve (only the walks of the hot paths
 * ask: a sample's walk would replace the memo of its task's system calls).
 */
__noinline int ust_bpfu_walk_now(struct ust_bpfu_walk_task *t, __u32 flags, int memo)
{
	struct ust_bpfu_walk_ctx c = { .t = t };

	if (!t)
		return 0;
	if (ust_bpfu_walk_start(t, flags, memo, 0))
		return 0;
	bpf_loop(UST_BPFU_WALK_ROUNDS, ust_bpfu_walk_frame_cb, &c, 0);
	return ust_bpfu_walk_finish(t, flags);
}

#endif /* UST_BPFU_WALK_BPF_H */
