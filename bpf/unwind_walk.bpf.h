/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user-stack walk of unwind.bpf.c: by CFI tables where a file has one,
 * by frame pointers where it has none.  Included by unwind.bpf.c after
 * ust_bpfu_vma_cb(), UST_COUNT and the ring buffer.
 *
 * Debian builds glibc and its packages without frame pointers, so a walk
 * by frame pointers alone stops in libc.  Every such file still carries
 * .eh_frame; user space turns it into rows sorted by file offset
 * (lib/cfi/, bpf/ust_cfi_abi.h) and stores them in ust_bpfu_cfi_rows.
 * Per frame: the VMA of the ip (a few kept per walk: bpf_find_vma() takes
 * the mmap lock), its (inode, dev) -> the file's slice of rows, a bounded
 * binary search for the row of the file offset, then the caller's rip,
 * rsp and rbp from the row's rules.
 *
 * A file seen for the first time has no entry: the walk asks user space
 * for its table (a NEED_CFI record, once per file, leaving a PENDING entry
 * behind) and goes on by frame pointers for that frame, marking the stack
 * UST_BPFU_F_NO_TABLE: a stack taken before its table arrived is never
 * silently short.
 *
 * Reads go through ust_walk_read(): bpf_copy_from_user() in the task_work
 * (sleepable: pages may be faulted in, as the kernel's deferred unwinder
 * does), bpf_probe_read_user() in the event's own context.  Each caller
 * gets its own bpf_loop() callback with @sleepable a constant, so that
 * the other helper is not even in its code.
 */
#ifndef UST_UNWIND_WALK_BPF_H
#define UST_UNWIND_WALK_BPF_H

#include "ust_cfi_abi.h"

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

/* VMAs kept per walk: a stack goes back and forth between a few files. */
#define UST_WALK_VMAS		4
/* 2^25 rows: more than libLLVM's 2M, and a bound for the verifier. */
#define UST_WALK_SEARCH_STEPS	25

struct ust_walk_vma {
	struct ust_bpfu_vma v;	/* v.found: the slot is used */
	__u32 tstate;		/* enum ust_bpfu_cfi_state; NONE for anonymous memory */
	__u32 tfirst;
	__u32 tnr;
	__u32 vdso;
};

/*
 * Each task walks in its own task storage (in unwind.bpf.c's
 * ust_bpfu_tasks, with its cookie): the record it builds (only its
 * frames are copied to the ring, ust_bpfu_walk_send()) and the walk's state,
 * whose VMA slots stay from one walk to the next while they stand
 * (ust_bpfu_mm_seq()): a walk in steady state calls bpf_find_vma() (the
 * mmap lock, a maple-tree walk, a callback) for no frame, where it did
 * for every file of every stack.  With the table each VMA was seen with:
 * a READY table's rows never change (user space only ever appends rows),
 * a PENDING one is looked up again.  Per task, not per CPU: the sleepable
 * walk of the task_work may sleep, and another task would take over a
 * per-CPU buffer meanwhile.
 */
struct ust_walk_task {
	__u64 mm;		/* the slots are this mm's VMAs, at this */
	__u32 seq;		/* mmap_lock sequence; mm 0: they are not */
	/*
	 * A walk of this task is using r.  Only an interrupt can start
	 * another (a perf sample's program), and it ends before the one it
	 * interrupted goes on: a plain flag is enough.
	 */
	__u32 busy;
	struct ust_bpfu_rec_stack r;
};

/*
 * The window: stack bytes read ahead.  A walk reads upward through one
 * stack, a return address (and now and then a saved rbp) per frame; each
 * bpf_probe_read_user() costs far more than the 8 bytes it copies
 * (access_ok, the hardened-usercopy check of the destination, the
 * helper call: 30 % of a walk's time when each read was its own).  So a
 * read outside the window refills it from the address to the end of its
 * page (a page is mapped whole or not at all, so a refill never fails for
 * bytes past the stack's end), up to UST_WALK_WIN_U64 words.
 */
#define UST_WALK_WIN_U64	128

/*
 * The last walk of the task, as a function of what it read: the registers
 * it started from and every stack word it read, in order (VMAs and tables
 * stand while the mm's sequence does: ust_walk()).  A walk from the same
 * registers that reads the same words again makes the same frames, which
 * are still in the task's record: a system call made in a loop is walked
 * once, then only checked, a read per word (a few per frame) instead of a
 * VMA, a row and a rule per frame.
 */
#define UST_WALK_MEMO_WORDS	128

struct ust_walk_memo {
	__u64 ip, sp, bp, bx;
	__u32 bp_used, bx_used;	/* whether its result depends on bp, bx */
	__u32 ok;		/* the record's frames are this walk's */
	__u32 nr;		/* its frames */
	__u32 flags;		/* its UST_BPFU_F_* of the walk */
	__u32 nr_words;
	__u32 cfi_frames;
	__u32 fp_frames;
	__u32 pad;
	__u64 addr[UST_WALK_MEMO_WORDS];
	__u64 val[UST_WALK_MEMO_WORDS];
};

/* In the record's walk[] (see ust_bpfu_abi.h). */
struct ust_walk {
	/* Cleared when a walk starts, up to vmas. */
	__u64 ip, sp, bp, bx;
	/*
	 * Where a rule saved them, rbp and rbx are read only when a rule
	 * needs their value (a CFA from rbp or rbx, a frame-pointer step):
	 * most frames need the return address alone.  *_at: the address of
	 * the saved value, 0 when bp/bx hold it.
	 */
	__u64 bp_at, bx_at;
	__u32 bp_ok;		/* bp is known (every rule so far told it) */
	__u32 bx_ok;		/* bx likewise (only a CFA defined by rbx needs it) */
	__u32 ip_exact;		/* ip is not a return address: frame 0, after a signal frame */
	__u32 tgid;
	/* Frames by CFI and by frame pointers: counted once per walk, not per frame. */
	__u32 cfi_frames;
	__u32 fp_frames;
	__u64 win_base;		/* the user address of win[0] */
	__u64 win_len;		/* bytes of win[] read; 0: empty */
	__u32 nr_words;		/* stack words read so far (memo.addr/val) */
	__u32 no_memo;		/* the walk read something else: code bytes */
	/*
	 * bp (bx) still holds the starting register's value, and whether the
	 * walk used that value: only then does the memo compare it.  (rbx is
	 * often a loop's counter, and the walk rarely needs it.)
	 */
	__u32 bp_reg, bx_reg;
	__u32 bp_used, bx_used;
	/* Kept from one walk of the task to the next (struct ust_walk_task). */
	struct ust_walk_vma vmas[UST_WALK_VMAS];
	struct ust_walk_memo memo;
	__u64 win[UST_WALK_WIN_U64];	/* its bytes count only up to win_len */
};

static __always_inline long ust_walk_read(void *dst, __u32 size, __u64 addr, bool sleepable)
{
	if (sleepable)
		return bpf_copy_from_user(dst, size, (void *)addr);
	return bpf_probe_read_user(dst, size, (void *)addr);
}

/* A word the walk read, for the memo (past UST_WALK_MEMO_WORDS: none kept). */
static __always_inline long ust_walk_logged(struct ust_walk *w, __u64 addr, __u64 val)
{
	__u32 n = w->nr_words, k = n;

	/* Masked where the verifier sees it: the test below would let clang drop the mask. */
	barrier_var(k);
	k &= UST_WALK_MEMO_WORDS - 1;
	if (n < UST_WALK_MEMO_WORDS) {
		w->memo.addr[k] = addr;
		w->memo.val[k] = val;
	}
	w->nr_words = n + 1;
	return 0;
}

/* The 8 bytes at @addr of the stack, through the window. */
static __always_inline long ust_walk_word(struct ust_walk *w, __u64 *val, __u64 addr,
					  bool sleepable)
{
	__u64 d = addr - w->win_base, len;

	if (!(d & 7) && d < w->win_len && w->win_len - d >= 8) {
		*val = w->win[(d >> 3) & (UST_WALK_WIN_U64 - 1)];
		return 0;
	}
	len = 4096 - (addr & 4095);
	if (len > sizeof(w->win))
		len = sizeof(w->win);
	if (len < 8)	/* a word across two pages */
		return ust_walk_read(val, sizeof(*val), addr, sleepable);
	if (ust_walk_read(w->win, len, addr, sleepable)) {
		w->win_len = 0;
		return -14;	/* -EFAULT */
	}
	w->win_base = addr;
	w->win_len = len;
	*val = w->win[0];
	return 0;
}

/* ust_walk_word() for the walk: every word it reads is logged for the memo. */
static __always_inline long ust_walk_u64(struct ust_walk *w, __u64 *val, __u64 addr,
					 bool sleepable)
{
	if (ust_walk_word(w, val, addr, sleepable))
		return -14;	/* -EFAULT */
	return ust_walk_logged(w, addr, *val);
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
} __attribute__((preserve_access_index));

static __always_inline bool ust_walk_is_vdso(struct task_struct *task, __u64 start)
{
	struct mm_struct___walk *mm = (void *)task->mm;

	if (!bpf_core_field_exists(mm->context.vdso))
		return false;
	return (__u64)BPF_CORE_READ(mm, context.vdso) == start;
}

/* The file's table entry, asking user space for it the first time. */
static __always_inline void ust_walk_table(struct ust_walk *w, struct ust_walk_vma *s)
{
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
	n->h.tgid = w->tgid;
	n->h.cookie = 0;
	n->ino = key.ino;
	n->dev = key.dev;
	n->pad = 0;
	n->vm_start = s->v.start;
	n->vm_end = s->v.end;
	n->vm_pgoff = s->v.pgoff;
	bpf_ringbuf_submit(n, BPF_RB_FORCE_WAKEUP);
	UST_COUNT(cfi_need);
}

/*
 * The VMA holding @addr, from the walk's slots or bpf_find_vma(); NULL if
 * none.  A new VMA goes into slot 0 and the others move down: slots are
 * only ever named by constants, because a slot index that changes from
 * frame to frame would make every frame a new state to the verifier.
 */
static __always_inline struct ust_walk_vma *ust_walk_vma(struct ust_bpfu_rec_stack *r,
							 struct ust_walk *w, __u64 addr)
{
	struct task_struct *task;
	struct ust_bpfu_vma v;	/* bpf_find_vma()'s context must be on the stack */
	struct ust_walk_vma *s;
	__u32 i;
	long err;

	for (i = 0; i < UST_WALK_VMAS; i++) {
		s = &w->vmas[i];
		if (s->v.found && addr >= s->v.start && addr < s->v.end)
			return s;
	}
	/* Only here: every helper call and return costs (retpolines, safe RET). */
	task = bpf_get_current_task_btf();
	__builtin_memset(&v, 0, sizeof(v));
	for (i = UST_WALK_VMAS - 1; i > 0; i--)
		w->vmas[i] = w->vmas[i - 1];
	s = &w->vmas[0];
	err = bpf_find_vma(task, addr, ust_bpfu_vma_cb, &v, 0);
	if (err && err != -2 /* -ENOENT: no VMA */) {
		r->flags |= UST_BPFU_F_RAW;
		UST_COUNT(vma_fail);
	}
	s->v = v;
	if (!v.found)
		return NULL;
	s->vdso = !s->v.ino && ust_walk_is_vdso(task, s->v.start);
	ust_walk_table(w, s);
	return s;
}

/*
 * Row hints: the row a (table, offset) was last found at, per CPU, in a
 * small direct-mapped array.  Programs walk the same few stacks again and
 * again (a system call in a loop); a binary search is a chain of ~15
 * dependent loads for a libc frame, a hint two independent ones.  A hint
 * is only a guess: it is used if the row still brackets the offset (its
 * off <= @off < the next row's off), so a stale or torn one (a perf
 * sample's walk interrupting this one on the same CPU) costs a search,
 * never a wrong row.
 */
#define UST_WALK_HINTS		4096

struct ust_walk_hints {
	__u32 row[UST_WALK_HINTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ust_walk_hints);
} ust_walk_hints SEC(".maps");

/* Row @k if it is the last of [first, first + nr) whose off is <= @off. */
static __always_inline const struct ust_cfi_row *ust_walk_row_at(__u32 first, __u32 nr, __u32 k,
								  __u32 off)
{
	const struct ust_cfi_row *row, *next;
	__u32 k1;

	if (k - first >= nr)
		return NULL;
	row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
	if (!row || row->off > off)
		return NULL;
	if (k + 1 - first == nr)
		return row;
	k1 = k + 1;
	next = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k1);
	return next && next->off > off ? row : NULL;
}

/*
 * The last row of rows [first, first + nr) whose off is <= @off: its hint,
 * or as many halving steps as the file has rows (15 for libc's 28k), each
 * without a branch but the map lookup's and the end test.
 */
static __always_inline const struct ust_cfi_row *ust_walk_row(__u32 first, __u32 nr, __u32 off)
{
	const struct ust_cfi_row *row;
	struct ust_walk_hints *h;
	__u64 lo = 0, hi = nr, mid, ge;
	__u32 k, i, zero = 0, slot;

	if (!nr)
		return NULL;
	slot = (((off ^ (first * 0x9e3779b1U)) * 0x9e3779b1U) >> 20) & (UST_WALK_HINTS - 1);
	h = bpf_map_lookup_elem(&ust_walk_hints, &zero);
	if (h) {
		row = ust_walk_row_at(first, nr, h->row[slot], off);
		if (row)
			return row;
	}
	for (i = 0; i < UST_WALK_SEARCH_STEPS; i++) {
		if (hi - lo <= 1)
			break;
		mid = (lo + hi) >> 1;
		k = first + (__u32)mid;
		row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
		if (!row)
			return NULL;
		/* ge = row->off <= off ? 1 : 0, by the sign of the difference. */
		ge = 1 ^ (((__u64)off - (__u64)row->off) >> 63);
		lo += ge * (mid - lo);
		hi -= (1 - ge) * (hi - mid);
	}
	k = first + (__u32)lo;
	row = bpf_map_lookup_elem(&ust_bpfu_cfi_rows, &k);
	if (!row || row->off > off)
		return NULL;
	if (h)
		h->row[slot] = k;
	return row;
}

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
static __always_inline bool ust_walk_ra_at_sp(struct ust_walk *w, __u64 ip, bool sleepable)
{
	__u8 b[9] = {};

	w->no_memo = 1;		/* code, not stack words: the memo cannot tell */

	if (ust_walk_read(b, sizeof(b), ip, sleepable)) {
		/* A ret at the very end of the mapping. */
		return !ust_walk_read(b, 1, ip, sleepable) && b[0] == 0xc3;
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

/* rbp's value, read from where it was saved if it is not here yet; false: unknown. */
static __always_inline bool ust_walk_bp(struct ust_walk *w, bool sleepable)
{
	if (w->bp_ok && w->bp_at) {
		w->bp_ok = !ust_walk_u64(w, &w->bp, w->bp_at, sleepable);
		w->bp_at = 0;
	}
	if (w->bp_reg)
		w->bp_used = 1;
	return w->bp_ok;
}

static __always_inline bool ust_walk_bx(struct ust_walk *w, bool sleepable)
{
	if (w->bx_ok && w->bx_at) {
		w->bx_ok = !ust_walk_u64(w, &w->bx, w->bx_at, sleepable);
		w->bx_at = 0;
	}
	if (w->bx_reg)
		w->bx_used = 1;
	return w->bx_ok;
}

/*
 * One frame-pointer step, the kernel's unwind_user walk (x86-64): CFA =
 * rbp + 16, return address at CFA - 8, the caller's rbp at CFA - 16; stop
 * when the CFA does not grow or is misaligned.  1: the walk ends.
 */
static __always_inline long ust_walk_fp(struct ust_bpfu_rec_stack *r, struct ust_walk *w,
				       __u32 nr, bool sleepable)
{
	__u64 cfa, frame[2];

	if (nr == 0 && ust_leaf_ret && ust_walk_ra_at_sp(w, w->ip, sleepable)) {
		__u64 ra = 0;

		if (!ust_walk_u64(w, &ra, w->sp, sleepable) && ra) {
			r->flags |= UST_BPFU_F_LEAF_RET | UST_BPFU_F_FP;
			w->ip = ra;
			w->sp += 8;
			w->ip_exact = 0;
			return 0;
		}
	}
	ust_walk_bp(w, sleepable);
	cfa = w->bp + 16;
	/*
	 * rbp 0 marks the outermost frame (the x86-64 ABI; the kernel starts
	 * a program with it, and _start clears it): ld.so's own _start has
	 * no CFI, and this is how its stacks end.
	 */
	if (w->bp_ok && !w->bp) {
		r->flags |= UST_BPFU_F_BOTTOM;
		return 1;
	}
	if (!w->bp_ok || cfa <= w->sp || (cfa & 7)) {
		r->flags |= UST_BPFU_F_NO_UNWIND;	/* no frame pointer here either */
		return 1;
	}
	if (ust_walk_u64(w, &frame[0], w->bp, sleepable) ||
	    ust_walk_u64(w, &frame[1], w->bp + 8, sleepable)) {
		r->flags |= UST_BPFU_F_FAULT;
		return 1;
	}
	if (!frame[1])
		return 1;
	r->flags |= UST_BPFU_F_FP;
	w->fp_frames++;
	w->ip = frame[1];
	w->sp = cfa;
	w->bp = frame[0];
	w->bp_at = 0;
	w->bp_reg = 0;
	w->bx_ok = 0;		/* whatever the callee did with it, nothing tells */
	w->bx_reg = 0;
	w->ip_exact = 0;
	return 0;
}

/* The rt_sigreturn trampoline: the interrupted registers, from the ucontext. */
static __always_inline long ust_walk_signal(struct ust_bpfu_rec_stack *r, struct ust_walk *w,
					   bool sleepable)
{
	__u64 ip = 0, sp = 0, bp = 0, bx = 0, uc = w->sp;

	if (ust_walk_u64(w, &ip, uc + UST_CFI_SIGFRAME_RIP, sleepable) ||
	    ust_walk_u64(w, &sp, uc + UST_CFI_SIGFRAME_RSP, sleepable) ||
	    ust_walk_u64(w, &bp, uc + UST_CFI_SIGFRAME_RBP, sleepable) ||
	    ust_walk_u64(w, &bx, uc + UST_CFI_SIGFRAME_RBX, sleepable)) {
		r->flags |= UST_BPFU_F_FAULT;
		return 1;
	}
	if (!ip)
		return 1;
	w->ip = ip;
	w->sp = sp;
	w->bp = bp;
	w->bx = bx;
	w->bp_at = 0;
	w->bx_at = 0;
	w->bp_reg = 0;
	w->bx_reg = 0;
	w->bp_ok = 1;
	w->bx_ok = 1;
	w->ip_exact = 1;	/* the interrupted instruction itself */
	w->cfi_frames++;
	return 0;
}

/* One CFI step by @row; 1: the walk ends. */
static __always_inline long ust_walk_cfi(struct ust_bpfu_rec_stack *r, struct ust_walk *w,
					 const struct ust_cfi_row *row, bool sleepable)
{
	__u64 cfa, ra = 0;
	__s64 off = row->cfa_off;

	switch (row->cfa_type) {
	case UST_CFI_CFA_RSP:
		cfa = w->sp + off;
		break;
	case UST_CFI_CFA_RBP:
		if (!ust_walk_bp(w, sleepable))
			goto bad;
		cfa = w->bp + off;
		break;
	case UST_CFI_CFA_RBX:
		if (!ust_walk_bx(w, sleepable))
			goto bad;
		cfa = w->bx + off;
		break;
	case UST_CFI_CFA_PLT:
		cfa = w->sp + off + ((__s64)(w->ip & 15) >= row->rbp_off ? 8 : 0);
		break;
	case UST_CFI_CFA_DEREF_RBP:
		if (!ust_walk_bp(w, sleepable))
			goto bad;
		if (ust_walk_u64(w, &cfa, w->bp + off, sleepable))
			goto fault;
		break;
	default:
		goto bad;
	}
	/* The caller's frame is above this one: anything else is garbage. */
	if (cfa <= w->sp || cfa - w->sp > (1ULL << 30))
		goto bad;
	if (ust_walk_u64(w, &ra, cfa - 8, sleepable))
		goto fault;
	/*
	 * The caller's rbx and rbp: where they are saved, read when needed.
	 * rbx first: its rule may name this frame's rbp, which rbp's changes.
	 */
	if (row->rbx_type == UST_CFI_RBP_CFA) {
		w->bx_at = cfa + row->rbx_off;
		w->bx_ok = 1;
		w->bx_reg = 0;
	} else if (row->rbx_type == UST_CFI_RBP_DEREF_RBP) {
		if (ust_walk_bp(w, sleepable))
			w->bx_at = w->bp + row->rbx_off;
		else
			w->bx_ok = 0;
		w->bx_reg = 0;
	} else if (row->rbx_type != UST_CFI_RBP_SAME) {
		w->bx_ok = 0;
		w->bx_reg = 0;
	}
	if (row->rbp_type == UST_CFI_RBP_CFA) {
		w->bp_at = cfa + row->rbp_off;
		w->bp_ok = 1;
		w->bp_reg = 0;
	} else if (row->rbp_type == UST_CFI_RBP_DEREF_RBP) {
		if (ust_walk_bp(w, sleepable))
			w->bp_at = w->bp + row->rbp_off;
		w->bp_reg = 0;
	} else if (row->rbp_type != UST_CFI_RBP_SAME) {
		w->bp_ok = 0;
		w->bp_reg = 0;
	}
	r->flags |= UST_BPFU_F_CFI;
	w->cfi_frames++;
	if (!ra)
		return 1;
	w->ip = ra;
	w->sp = cfa;
	w->ip_exact = 0;
	return 0;
bad:
	r->flags |= UST_BPFU_F_BAD_CFA;
	return 1;
fault:
	r->flags |= UST_BPFU_F_FAULT;
	return 1;
}

/*
 * Frame r->nr: record w->ip (as file offset, inode, dev when a VMA holds
 * it), then step to its caller.  A bpf_loop() callback body; 1 ends the
 * walk.  The frame count lives in r->nr, in map memory the verifier does
 * not track, so one verified round covers every frame.
 */
static __always_inline long ust_walk_one(struct ust_bpfu_rec_stack *r, bool sleepable)
{
	struct ust_walk *w = (struct ust_walk *)r->walk;
	const struct ust_cfi_row *row = NULL;
	struct ust_bpfu_frame *f;
	struct ust_walk_vma *s;
	__u32 nr = r->nr;
	__u64 pc, off;

	if (nr >= UST_BPFU_MAX_FRAMES) {
		r->flags |= UST_BPFU_F_TRUNCATED;
		UST_COUNT(truncated);
		return 1;
	}
	f = &r->frames[nr & (UST_BPFU_SLOTS - 1)];
	s = ust_walk_vma(r, w, w->ip);
	if (s) {
		f->off = w->ip - s->v.start + (s->v.pgoff << 12);
		f->ino = s->v.ino;
		f->dev = s->v.dev;
	} else {
		f->off = w->ip;
		f->ino = 0;
		f->dev = 0;
	}
	f->pad = 0;
	r->nr = nr + 1;

	/* A return address is after the call: the call itself is at ip - 1. */
	pc = w->ip - (w->ip_exact ? 0 : 1);
	if (s && s->tstate == UST_BPFU_CFI_READY && pc >= s->v.start) {
		off = pc - s->v.start + (s->v.pgoff << 12);
		if (off <= 0xffffffffULL)
			row = ust_walk_row(s->tfirst, s->tnr, (__u32)off);
	} else if (s && s->tstate == UST_BPFU_CFI_PENDING) {
		r->flags |= UST_BPFU_F_NO_TABLE;
	}
	if (!row || row->cfa_type == UST_CFI_CFA_NONE || row->cfa_type == UST_CFI_CFA_UNSUPPORTED)
		return ust_walk_fp(r, w, nr, sleepable);
	if (row->cfa_type == UST_CFI_CFA_END) {
		r->flags |= UST_BPFU_F_CFI | UST_BPFU_F_BOTTOM;
		return 1;
	}
	if (row->cfa_type == UST_CFI_CFA_SIGNAL) {
		r->flags |= UST_BPFU_F_CFI;
		return ust_walk_signal(r, w, sleepable);
	}
	return ust_walk_cfi(r, w, row, sleepable);
}

/* Slot @i (a constant) of the task's VMAs: its table looked up again if PENDING. */
static __always_inline void ust_walk_refresh(struct ust_walk *w, const __u32 i)
{
	if (w->vmas[i].v.found && w->vmas[i].tstate == UST_BPFU_CFI_PENDING)
		ust_walk_table(w, &w->vmas[i]);
}

struct ust_walk_ctx {
	struct ust_bpfu_rec_stack *r;
};

/*
 * A frame per round.  (Two per round saved a call and a return per two
 * frames, but doubled the time the verifier takes over every program
 * that walks: loading went from 0.8 to 1.8 s.)
 */
static long ust_walk_one_sleepable(__u32 i __ust_unused, void *data)
{
	return ust_walk_one(((struct ust_walk_ctx *)data)->r, true);
}

static long ust_walk_one_nofault(__u32 i __ust_unused, void *data)
{
	return ust_walk_one(((struct ust_walk_ctx *)data)->r, false);
}

/* Word @k of the memo's walk, read again: 1 if it changed (or cannot be read). */
static __always_inline long ust_walk_recheck_word(struct ust_walk *w, __u32 k)
{
	__u64 v = 0;

	if (k >= w->memo.nr_words)
		return 0;
	k &= UST_WALK_MEMO_WORDS - 1;
	if (ust_walk_word(w, &v, w->memo.addr[k], false) || v != w->memo.val[k]) {
		w->memo.ok = 0;
		return 1;
	}
	return 0;
}

/*
 * Four words per round: a round costs a call and a return, more than a
 * word; a plain loop instead made the verifier's work over every program
 * that walks twice as long.
 */
static long ust_walk_recheck(__u32 i, void *data)
{
	struct ust_walk *w = (struct ust_walk *)((struct ust_walk_ctx *)data)->r->walk;

	return ust_walk_recheck_word(w, i * 4) || ust_walk_recheck_word(w, i * 4 + 1) ||
	       ust_walk_recheck_word(w, i * 4 + 2) || ust_walk_recheck_word(w, i * 4 + 3);
}

/* Was the memo's walk made from these registers, and do the words it read stand? */
static __always_inline bool ust_walk_memo_holds(struct ust_walk *w, struct ust_walk_ctx *c)
{
	struct ust_walk_memo *m = &w->memo;

	if (!m->ok || m->ip != w->ip || m->sp != w->sp || (m->bp_used && m->bp != w->bp) ||
	    (m->bx_used && m->bx != w->bx))
		return false;
	bpf_loop((m->nr_words + 3) / 4, ust_walk_recheck, c, 0);
	return m->ok;
}

/*
 * The walk's frame counts into the per-CPU counters: a locked add each
 * per walk, not one per frame.
 */
static __always_inline void ust_walk_count(const struct ust_walk *w)
{
	__u32 k = 0;
	struct ust_bpfu_counters *c = bpf_map_lookup_elem(&ust_bpfu_stats, &k);

	if (!c)
		return;
	if (w->cfi_frames)
		__sync_fetch_and_add(&c->cfi_frames, w->cfi_frames);
	if (w->fp_frames)
		__sync_fetch_and_add(&c->fp_frames, w->fp_frames);
}

_Static_assert(sizeof(struct ust_walk) <= sizeof(((struct ust_bpfu_rec_stack *)0)->walk),
	       "the walk's state fits the record's walk[]");

/*
 * Walk the user stack of the current task @task from @regs (its user registers)
 * into @t's record, up to UST_BPFU_MAX_FRAMES frames: r.nr, r.frames and
 * the UST_BPFU_F_* of how it went (or'ed into r.flags).  @memo: the last
 * walk's frames may serve (ust_walk_memo_holds()); only the walks of the
 * hot paths ask, as each asking place is more for the verifier.
 */
static __always_inline void ust_walk(struct ust_walk_task *t, struct task_struct *task,
				     struct pt_regs *regs, bool sleepable, bool memo)
{
	struct ust_bpfu_rec_stack *r = &t->r;
	struct ust_walk *w = (struct ust_walk *)r->walk;
	struct ust_walk_ctx c = { .r = r };
	__u64 mm = 0, mm2 = 0;
	__u32 seq = 0, seq2 = 0, flags0 = r->flags;	/* the caller's, not the walk's */
	bool seq_ok = ust_bpfu_mm_seq(task, &mm, &seq);
	/* The slots stand, and so do the memo's VMAs and tables. */
	bool kept = seq_ok && t->mm == mm && t->seq == seq;

	__builtin_memset(r->walk, 0, __builtin_offsetof(struct ust_walk, vmas));
	w->tgid = task->tgid;	/* ust_walk_table() asks with it */
	if (kept) {
		ust_walk_refresh(w, 0);
		ust_walk_refresh(w, 1);
		ust_walk_refresh(w, 2);
		ust_walk_refresh(w, 3);
	} else {
		w->vmas[0].v.found = 0;
		w->vmas[1].v.found = 0;
		w->vmas[2].v.found = 0;
		w->vmas[3].v.found = 0;
	}
	w->ip = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	w->bx = regs->bx;
	w->bp_ok = 1;
	w->bx_ok = 1;
	w->bp_reg = 1;
	w->bx_reg = 1;
	w->ip_exact = 1;
	if (memo && !sleepable && kept && ust_walk_memo_holds(w, &c)) {
		r->nr = w->memo.nr;
		r->flags |= w->memo.flags;
		w->cfi_frames = w->memo.cfi_frames;
		w->fp_frames = w->memo.fp_frames;
		if (w->memo.flags & UST_BPFU_F_TRUNCATED)
			UST_COUNT(truncated);
		UST_COUNT(memo_walks);
		ust_walk_count(w);
		return;
	}
	w->memo.ok = 0;
	w->nr_words = 0;
	r->nr = 0;
	/* One more round than frames, to see whether the stack was cut. */
	if (sleepable)
		bpf_loop(UST_BPFU_MAX_FRAMES + 1, ust_walk_one_sleepable, &c, 0);
	else
		bpf_loop(UST_BPFU_MAX_FRAMES + 1, ust_walk_one_nofault, &c, 0);
	ust_walk_count(w);
	/* The slots stand for the next walk only if no VMA changed meanwhile. */
	if (!seq_ok || !ust_bpfu_mm_seq(task, &mm2, &seq2) || mm2 != mm || seq2 != seq) {
		t->mm = 0;
		return;
	}
	t->mm = mm;
	t->seq = seq;
	/* A walk that only read stack words, all of them logged, and ended by itself. */
	if (w->no_memo || w->nr_words > UST_WALK_MEMO_WORDS ||
	    (r->flags & (UST_BPFU_F_FAULT | UST_BPFU_F_RAW | UST_BPFU_F_NO_TABLE)))
		return;
	w->memo.ip = regs->ip;
	w->memo.sp = regs->sp;
	w->memo.bp = regs->bp;
	w->memo.bx = regs->bx;
	w->memo.bp_used = w->bp_used;
	w->memo.bx_used = w->bx_used;
	w->memo.nr = r->nr;
	w->memo.flags = r->flags & ~flags0;
	w->memo.nr_words = w->nr_words;
	w->memo.cfi_frames = w->cfi_frames;
	w->memo.fp_frames = w->fp_frames;
	w->memo.ok = 1;
}

#endif /* UST_UNWIND_WALK_BPF_H */
