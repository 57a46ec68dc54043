/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What bpfu.bpf.c sends to user space (lib/record/bpfu.c) through its ring
 * buffer.  Included by both sides: the includer provides __u32/__u64 (BPF:
 * ust_bpfu_kern.h, user space: <linux/types.h>).
 *
 * These records are not the ftrace records: lib/record/bpfu.c turns them
 * into the kernel's user_unwind_cookie / user_unwind_stack bytes.  They
 * carry what the ftrace records cannot (flags, tgid, the CPU of the
 * callback).  A STACK record is as long as its frames (the walk builds it
 * in task storage and copies that much); the others have one fixed size
 * per kind.
 */
#ifndef UST_BPFU_ABI_H
#define UST_BPFU_ABI_H

/* The kernel's deferred unwinder keeps up to 512; ftrace's old userstack
 * and bpf_get_stack() default to 127 (perf_event_max_stack). */
#define UST_BPFU_MAX_FRAMES	127
/* A power of two, so that "& (UST_BPFU_SLOTS - 1)" bounds an index for the verifier. */
#define UST_BPFU_SLOTS		(UST_BPFU_MAX_FRAMES + 1)
#define UST_BPFU_WALK_U64	512
/*
 * System calls whose syscalls:sys_enter_* / sys_exit_* events the raw
 * sys_enter / sys_exit programs give cookies (ust_bpfu_sc_enter/exit, a
 * bit per number): numbers below this only.
 */
#define UST_BPFU_NR_SYSCALLS	512

enum ust_bpfu_rec_kind {
	UST_BPFU_REC_COOKIE = 1,
	UST_BPFU_REC_STACK = 2,
	UST_BPFU_REC_SAMPLE = 3,	/* the cookie of a perf sample (ust_bpfu_sample) */
	UST_BPFU_REC_NEED_CFI = 4,	/* a file without an unwind table (ust_bpfu_rec_need) */
	UST_BPFU_REC_EXEC = 5,		/* a followed process exec()ed (ust_bpfu_rec_exec) */
	UST_BPFU_REC_PARK = 6,		/* a walk parked at a file without a table (ust_bpfu_rec_park) */
	UST_BPFU_REC_MAP = 7,		/* a followed process mapped a file executable (ust_bpfu_rec_map) */
};

/* STACK record flags. */
#define UST_BPFU_F_IMMEDIATE	(1U << 0)	/* taken in the event's context: no task_work */
#define UST_BPFU_F_SCHED_FAIL	(1U << 1)	/* task_work could not be scheduled (with IMMEDIATE) */
#define UST_BPFU_F_EXIT		(1U << 2)	/* task exited with the work pending (with IMMEDIATE) */
#define UST_BPFU_F_TRUNCATED	(1U << 3)	/* more than UST_BPFU_MAX_FRAMES frames */
#define UST_BPFU_F_RAW		(1U << 4)	/* some address left unresolved (mmap lock busy) */
#define UST_BPFU_F_LEAF_RET	(1U << 5)	/* frame 1 read at [sp]: frame 0 on a ret/entry */
#define UST_BPFU_F_LATE		(1U << 6)	/* work ran in a later entry: maybe not this stack */
/* How the walk went (bpf/bpfu_walk.bpf.h); the same bits as UST_ABI_STACK_F_*. */
#define UST_BPFU_F_CFI		(1U << 7)	/* some frames unwound by CFI tables */
#define UST_BPFU_F_FP		(1U << 8)	/* some frames unwound by frame pointers */
#define UST_BPFU_F_BOTTOM	(1U << 9)	/* reached the outermost frame (return address undefined) */
#define UST_BPFU_F_NO_TABLE	(1U << 10)	/* a file's table was not loaded yet */
#define UST_BPFU_F_BAD_CFA	(1U << 11)	/* cut: a CFA below the stack pointer, or a rule unusable */
#define UST_BPFU_F_FAULT	(1U << 12)	/* cut: a stack read failed */
#define UST_BPFU_F_NO_UNWIND	(1U << 13)	/* cut: a frame with no CFI and no frame pointer */
#define UST_BPFU_F_NOT_EXEC	(1U << 16)	/* cut: a return address in no executable mapping */
/*
 * The walk stopped at a frame in a file whose table was not loaded yet
 * and sent what the recorder needs to walk on (a PARK record, just
 * before this one): the stack ends at that frame until the recorder has
 * finished it.  The same bit as UST_ABI_STACK_F_LATER, which the finished
 * stack carries.
 */
#define UST_BPFU_F_PARKED	(1U << 17)
/*
 * Not a stack flag: the record is also the request of an event of its
 * task that ran just before (the sys_exit_* event of the system call whose
 * exit took the stack): a COOKIE record with the same header comes first.
 */
#define UST_BPFU_F_REQUEST	(1U << 14)
/*
 * Not a stack flag: the frames are those of the task's last stack (seq -
 * 1), sent again as nothing but this header (the walk's memo served it:
 * bpf/bpfu_walk.bpf.h).  A system call made in a loop sends its frames
 * once: every ring page a record fills costs more than the walk (a TLB
 * miss on the ring's vmalloc mapping, dearer still in a VM).
 */
#define UST_BPFU_F_AGAIN	(1U << 15)

struct ust_bpfu_rec_hdr {
	__u32 kind;		/* enum ust_bpfu_rec_kind */
	__u32 cpu;		/* bpf_get_smp_processor_id() when emitted */
	__u64 ts;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 tid;		/* the kernel's common_pid */
	__u32 tgid;
	__u64 cookie;
};

struct ust_bpfu_rec_cookie {
	struct ust_bpfu_rec_hdr h;
};

/* SAMPLE record flags. */
#define UST_BPFU_S_DROPPED_BEFORE (1U << 0)	/* a sample before this one on its CPU got no record */

/*
 * A perf sample's cookie.  The program runs in the sample's overflow
 * handler, so ip and period are the sample's own: user space pairs the
 * two by CPU, task, ip and period.
 */
struct ust_bpfu_rec_sample {
	struct ust_bpfu_rec_hdr h;
	__u64 ip;		/* the interrupted ip (PERF_SAMPLE_IP) */
	__u64 period;		/* PERF_SAMPLE_PERIOD */
	__u32 flags;		/* UST_BPFU_S_* */
	__u32 pad;
};

struct ust_bpfu_frame {
	__u64 off;		/* file offset, or the address when no VMA */
	__u64 ino;		/* 0: no VMA or anonymous */
	__u32 dev;		/* kernel dev_t, 0 likewise */
	/*
	 * 1: the VMA could not be looked up (UST_BPFU_F_RAW): off is the
	 * address, which user space places in the task's executable mappings
	 * or, failing that, cuts the stack at (lib/record/bpfu_raw.c).
	 */
	__u32 raw;
};

/*
 * What the ring carries is the part up to frames[nr]
 * (UST_BPFU_STACK_REC_SIZE): a dozen frames are some 330 bytes, where the
 * whole struct, written into the ring, was 4 KiB of memory fresh to the
 * CPU's cache for every stack.
 */
struct ust_bpfu_rec_stack {
	struct ust_bpfu_rec_hdr h;
	__u32 flags;		/* UST_BPFU_F_* */
	__u32 nr;		/* frames, <= UST_BPFU_MAX_FRAMES */
	__u64 seq;		/* the task's stacks sent, this one included */
	struct ust_bpfu_frame frames[UST_BPFU_SLOTS];
	/*
	 * The walk's own state (bpf/bpfu_walk.bpf.h), never sent.  Here
	 * because map memory is memory the verifier does not track: on the
	 * BPF stack, every frame's registers and VMAs would be new states to
	 * it, and the walk would not verify.
	 */
	__u64 walk[UST_BPFU_WALK_U64];
};

#define UST_BPFU_STACK_REC_SIZE(nr)						\
	(__builtin_offsetof(struct ust_bpfu_rec_stack, frames) +		\
	 (nr) * sizeof(struct ust_bpfu_frame))

/*
 * The walk met an executable file mapping whose (dev, inode) has no entry
 * in ust_bpfu_cfi_files, or a followed task just mapped one (mmap with
 * PROT_EXEC, as dlopen() maps a library's code): user space builds its
 * table (from /proc/TGID/map_files/START-END, which opens the very file)
 * and stores it.  Sent once per file: the sender leaves a PENDING entry
 * behind.
 */
struct ust_bpfu_rec_need {
	struct ust_bpfu_rec_hdr h;
	__u64 ino;
	__u32 dev;
	__u32 why;		/* UST_BPFU_NEED_WALK, _MMAP */
	__u64 vm_start;
	__u64 vm_end;
	__u64 vm_pgoff;
};

/* Who asked: a walk that met the file, or its executable mmap (a dlopen's). */
#define UST_BPFU_NEED_WALK	0
#define UST_BPFU_NEED_MMAP	1

/*
 * A walk parked (UST_BPFU_F_PARKED): the registers of the frame it did
 * not record (frames[nr] of its STACK record, which follows), the VMAs it
 * knew, and the user stack from that frame's rsp up, for the recorder to
 * finish the walk once the file's table is built (lib/record/bpfu_park.c,
 * by the same step, bpf/ust_cfi_step.h).  The ring carries bytes[] at
 * one of four sizes, 4, 8, 16 or 32 KiB (a ring reservation's size is
 * fixed when the program is verified: the smallest that holds the stack
 * up to its VMA's end); len says how much of it is the stack.
 */
#define UST_BPFU_PARK_BP_OK	(1U << 0)	/* bp is the frame's rbp */
#define UST_BPFU_PARK_BX_OK	(1U << 1)	/* bx is the frame's rbx */
#define UST_BPFU_PARK_IP_EXACT	(1U << 2)	/* ip is where the task was, not a return address */
#define UST_BPFU_PARK_SPARSE	(1U << 3)	/* bytes[] holds the stack's words a walk may use (below) */

#define UST_BPFU_PARK_VMAS	4
#define UST_BPFU_PARK_VMA_EXEC	(1U << 0)	/* code may run from it (VM_EXEC) */
#define UST_BPFU_PARK_VMA_VDSO	(1U << 1)	/* the vDSO: its table is (UST_BPFU_CFI_VDSO_INO, 0) */

struct ust_bpfu_park_vma {
	__u64 start;		/* [start, end); end 0: an unused slot */
	__u64 end;
	__u64 pgoff;		/* in pages */
	__u64 ino;		/* 0: anonymous memory, or the vDSO */
	__u32 dev;		/* kernel dev_t */
	__u32 flags;		/* UST_BPFU_PARK_VMA_* */
};

/*
 * How much stack a park copies at most: what the walks finished from
 * copies read, measured (ustitch record -v, "the most any read"): a
 * script of python3, g++ (cc1plus), tar, gzip, find and sort with the
 * table cache off parked 410 walks whose deepest read 20192 bytes above
 * the parked rsp (cfi-prog's deep40: 1.3 KiB); perf's --call-graph dwarf
 * copies 8 KiB and misses deep stacks for it (notes/unwinding.md).  So
 * 32 KiB, a power of two above the deepest seen.  The copy is also bounded
 * by the stack's VMA end and by the ring's room (bpfu_walk.bpf.h).
 */
#define UST_BPFU_PARK_CAP	(32U << 10)

struct ust_bpfu_rec_park {
	struct ust_bpfu_rec_hdr h;
	__u64 seq;		/* the seq of the STACK record it goes with */
	__u32 nr;		/* frames the walk recorded before it parked */
	__u32 regs;		/* UST_BPFU_PARK_BP_OK, _BX_OK, _IP_EXACT */
	__u64 ip, sp, bp, bx;	/* the parked frame's registers */
	__u64 bp_at, bx_at;	/* where its caller's rbp (rbx) is saved, not read yet; 0: in bp (bx) */
	__u64 stack_end;	/* the end of the VMA holding sp; 0: unknown */
	struct ust_bpfu_park_vma vmas[UST_BPFU_PARK_VMAS];
	__u32 len;		/* bytes[] holds the stack's [sp, sp + len) */
	__u32 ptgid;		/* the parent's tgid: a fork child's code before its exec is the parent's */
	__u32 kept;		/* UST_BPFU_PARK_SPARSE: the words bytes[] holds */
	__u32 pad;
	__u8 bytes[];
};

/*
 * UST_BPFU_PARK_SPARSE: a walk reads from the stack return addresses and
 * saved registers, which are addresses of code or of the stack itself;
 * a compiler's stack is mostly other words (zeros, small numbers, its heap
 * and data), 60 % of them in make -j2's parks.  So the copy keeps only the
 * words that may be an address of code or stack (UST_BPFU_PARK_WORD_KEEP),
 * in order, then two bitmaps of the stack's len / 8 words, a bit per word
 * (UST_BPFU_PARK_MAP_BYTES each): kept (the word is in bytes[]), and junk
 * (a word not kept that was not 0).  The recorder puts the stack back with
 * 0 for a word neither, and for junk an address no walk can use
 * (UST_BPFU_PARK_JUNK): a walk that reads it stops there, as it would have
 * at the word itself, and never takes it for the end of a stack.
 */
#define UST_BPFU_PARK_MAP_BYTES(len)	((((len) / 8 + 63) / 64) * 8)
#define UST_BPFU_PARK_JUNK		0xdead0000deadbeefULL

/*
 * A word that may be an address a walk uses: in the program's code
 * [start_code, end_code), or in user space (at least 64 KiB, below
 * task_size) outside the program's data and heap [end_code, brk): code of
 * libraries and the loader, the vDSO, the stack.  Any layout of the
 * address space (top-down or legacy) keeps every code address this way.
 */
#define UST_BPFU_PARK_WORD_KEEP(v, start_code, end_code, brk, task_size)			\
	(((v) >= (start_code) && (v) < (end_code)) ||						\
	 ((v) >= (64ULL << 10) && (v) < (task_size) && !((v) >= (end_code) && (v) < (brk))))

/*
 * A followed process exec()ed: its new program's code and the dynamic
 * loader's (the VMAs holding mm->start_code and the entry ip; one slot
 * unused for a static program), which the kernel mapped, with no mmap()
 * a MAP record would tell of.  With the MAP records of what the loader
 * maps after, the recorder knows where a process's code is without its
 * /proc/TGID/maps: a short-lived one (sort in a shell pipe) is gone before
 * the recorder gets to read them, and its parked walks, finished after,
 * need them to place their return addresses (lib/record/bpfu_raw.c).
 */
#define UST_BPFU_EXEC_VMAS	2
/*
 * And the file name exec() was given (the sched_process_exec event's
 * filename, as execve() got it: maybe relative, a script's rather than
 * its interpreter's), so that a recorder that reads the record after the
 * process is gone still finds the program by path: the recorder trusts it
 * only where the file there is code[0]'s (dev, inode).
 */
#define UST_BPFU_EXEC_PATH	256

struct ust_bpfu_rec_exec {
	struct ust_bpfu_rec_hdr h;
	struct ust_bpfu_park_vma code[UST_BPFU_EXEC_VMAS];
	char path[UST_BPFU_EXEC_PATH];	/* NUL-terminated; "" when unread */
};

/* A followed process's mmap() with PROT_EXEC of a file (a library the
 * loader or dlopen() maps), whether or not its table is loaded. */
struct ust_bpfu_rec_map {
	struct ust_bpfu_rec_hdr h;
	struct ust_bpfu_park_vma vma;
};

/*
 * Unwind tables as the BPF walk finds them: ust_bpfu_cfi_files maps a
 * file's (inode, dev) to its rows, a slice of the one array
 * ust_bpfu_cfi_rows (struct ust_cfi_row, bpf/ust_cfi_abi.h).  User space
 * writes the rows first, then the file entry.  The vDSO, which has no
 * file, is keyed (UST_BPFU_CFI_VDSO_INO, 0).
 */
struct ust_bpfu_cfi_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

#define UST_BPFU_CFI_VDSO_INO	(~0ULL)

enum ust_bpfu_cfi_state {
	UST_BPFU_CFI_PENDING = 0,	/* asked for; frame pointers meanwhile */
	UST_BPFU_CFI_READY = 1,		/* rows [first, first + nr) */
	UST_BPFU_CFI_NONE = 2,		/* no table can be had: frame pointers */
};

struct ust_bpfu_cfi_file {
	__u32 state;		/* enum ust_bpfu_cfi_state */
	__u32 first;
	__u32 nr;
	__u32 shape;		/* the rows' index: UST_BPFU_CFI_SHAPE(), 0: none */
	__u32 idx;		/* the index's first element in ust_bpfu_cfi_rows */
	__u32 pad;
};

/*
 * A large table's index, so that a frame's row is searched for among a
 * few rows, not all of them: cc1plus's 700,000 rows took 20 dependent
 * loads a frame, each a cache miss.  File offsets are cut into buckets of
 * 1 << shift bytes (from offset 0); bucket b's entry is the row (counted
 * from .first) of the last row whose off is <= b << shift, or
 * UST_BPFU_CFI_IDX_NONE.  The row of an offset in bucket b lies between
 * the entries of b and b + 1 (the table's end for the last bucket).
 * Entries are __u32s, four to an element of ust_bpfu_cfi_rows, from
 * element .idx on (right after the table's rows).
 */
#define UST_BPFU_CFI_IDX_NONE		0xffffffffU
#define UST_BPFU_CFI_SHAPE_NB_BITS	27
#define UST_BPFU_CFI_SHAPE(shift, nb)	((__u32)(shift) << UST_BPFU_CFI_SHAPE_NB_BITS | (__u32)(nb))
#define UST_BPFU_CFI_SHAPE_SHIFT(s)	((s) >> UST_BPFU_CFI_SHAPE_NB_BITS)
#define UST_BPFU_CFI_SHAPE_NB(s)	((s) & ((1U << UST_BPFU_CFI_SHAPE_NB_BITS) - 1))

/*
 * The recorder's switches, set at run time by user space (map ust_bpfu_run,
 * one entry, shared by fd between the unwinder and the lock_held filter).
 */
struct ust_bpfu_run {
	__u32 filter_on;	/* only the tgids of ust_bpfu_tgids are followed */
	__u32 exit_armed;	/* ust_bpfu_sys_exit runs after every event program */
};

/* Per-CPU counters (map ust_bpfu_stats), summed by user space. */
struct ust_bpfu_counters {
	__u64 events;		/* events seen for followed user tasks */
	__u64 cookies;		/* cookies allocated (first event of an entry) */
	__u64 stacks;		/* STACK records emitted */
	__u64 drops;		/* ring-buffer reservations that failed */
	__u64 no_storage;	/* task storage unavailable: event ignored */
	__u64 sched_fail;	/* task_work not scheduled: immediate stack instead */
	__u64 late;		/* works that ran in a later kernel entry */
	__u64 stale;		/* cookies dropped: no stack came by the next entry (a work queued late, an exit missed) */
	__u64 orphan;		/* callback found no cookie */
	__u64 truncated;	/* stacks cut at UST_BPFU_MAX_FRAMES */
	__u64 vma_fail;		/* bpf_find_vma() errors other than "no VMA" */
	__u64 exit_stacks;	/* immediate stacks taken at task exit */
	__u64 children;		/* child processes followed (fork of a followed tgid) */
	__u64 filter_full;	/* child processes not followed: tgid map full */
	__u64 samples;		/* perf samples given a cookie (SAMPLE records) */
	__u64 cfi_frames;	/* frames unwound by CFI tables */
	__u64 fp_frames;	/* frames unwound by frame pointers */
	__u64 cfi_need;		/* files asked for (NEED_CFI records) */
	__u64 exit_walks;	/* stacks taken at the system call's exit (no task_work) */
	__u64 exit_faults;	/* ... that would have faulted: task_work instead */
	__u64 sample_walks;	/* stacks of samples in user code, taken at the sample */
	__u64 sample_faults;	/* ... that would have faulted: task_work instead */
	__u64 memo_walks;	/* stacks that were the task's last walk, its words unchanged */
	__u64 parks;		/* walks parked for the recorder to finish (PARK records) */
	__u64 park_bytes;	/* bytes of stack those sent (a sparse one's kept words and bitmaps) */
	__u64 park_span;	/* bytes of stack those covered */
	__u64 park_whole;	/* parks copied whole: this CPU's working copy was taken */
	__u64 park_no_room;	/* parks refused: the ring had not the room (frame pointers instead) */
	__u64 park_short;	/* parks whose copy stopped at an unreadable page or the cap */
	__u64 vma_code;		/* lookups refused, answered by the process's code table */
};

#endif /* UST_BPFU_ABI_H */
