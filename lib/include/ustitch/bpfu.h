/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_bpfu: deferred user-stack unwinding through BPF, for kernels without
 * the ftrace userstacktrace_delay option (ask ust_probe_one() for
 * UST_PROBE_FTRACE_DEFERRED first: the kernel's own events are then the
 * better source).
 *
 * A tracepoint program attached to the caller's events gives each event a
 * cookie with the kernel's layout and semantics (one per task per kernel
 * entry), and the entry's user stack is walked once: at the system call's
 * exit, at a sample of user code, else by a BPF task_work before the task
 * returns to user space.  Each result reaches the caller as the exact bytes
 * of the kernel's ftrace/user_unwind_cookie or ftrace/user_unwind_stack
 * record (seed 004, patch 9 layout), ready to be written into a trace.
 *
 * Where the kernel has no task_work for BPF (or refuses it), an event
 * outside a system call and a sample of user code gets its own cookie and
 * a stack taken in the event's context (non-faulting), flagged
 * UST_BPFU_STACK_IMMEDIATE; where it refuses the CFI walk, stacks are
 * walked by frame pointers.  ust_bpfu_notes() says which.
 *
 * Typical use: open, follow the traced tgids, attach the events, then poll
 * until done, then close.  One ust_bpfu per process is the intended use.
 */
#ifndef USTITCH_BPFU_H
#define USTITCH_BPFU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ust_af;
struct ust_bpfu;

struct ust_bpfu_opts {
	uint16_t cookie_type;	/* ftrace type id for user_unwind_cookie records */
	uint16_t stack_type;	/* ftrace type id for user_unwind_stack records */
	size_t ringbuf_bytes;	/* 0: 8 MiB; rounded up to a power of two */
	bool immediate;		/* use the fallback even with task_work (tests) */
	/* ust_bpfu_arm_exit() takes no stacks: every one by task_work (tests). */
	bool no_exit_stacks;
	/*
	 * The kernel's unwinder (seed 004) walks frame pointers only, and
	 * never guesses: set to get its exact frames.  By default the walk
	 * uses CFI tables, and where a frame has none and the user ip sits
	 * on a `ret` (every glibc syscall wrapper) or on a function's first
	 * instruction, it reports the return address at [sp] as frame 1
	 * (UST_BPFU_STACK_LEAF_RET): a frame-pointer walk alone would skip
	 * that function's caller.
	 */
	bool kernel_frames;
	/*
	 * Child processes of followed tgids are followed too, as ftrace's
	 * event-fork option does; set to follow only the tgids given.
	 */
	bool no_children;
	/*
	 * While no tgid is followed (the whole machine): a process left out,
	 * the recorder itself; 0: none.
	 */
	uint32_t ignore_tgid;
	/*
	 * Load the perf_event programs too, for ust_bpfu_attach_perf(): each
	 * sample of a followed task gets the cookie of its kernel entry, as a
	 * UST_BPFU_SAMPLE record.  Deferred only: without task_work there is
	 * no sample program (perf's own callchain is the immediate stack).
	 */
	bool perf;
	/*
	 * What the recording will not ask for, so that the programs for it
	 * stay unloaded: each holds the walk, whose verification costs about
	 * 50 ms of a recording's start on 6.18 (a third of the fixed cost of
	 * recording /bin/true with -g).  ust_bpfu_attach() then refuses
	 * (-EINVAL) what needs them, and ust_bpfu_later_fd() is negative.
	 *   no_events: no ust_bpfu_attach() at all (perf samples alone);
	 *   no_tracepoints: no event but syscalls:sys_enter_* / sys_exit_*;
	 *   no_sys_enter: no syscalls:sys_enter_* event;
	 *   no_later: no lock_held() filter hands its stacks over.
	 */
	bool no_events, no_tracepoints, no_sys_enter, no_later;
	/*
	 * First value of the per-CPU cookie counters.  Two instances writing
	 * into one trace use disjoint ranges, so that their cookies never meet.
	 */
	uint64_t cookie_ctr_base;
	/*
	 * --addr-filter for the perf samples (with .perf): samples outside
	 * its ranges are dropped before they get a cookie.  Borrowed: must
	 * live until ust_bpfu_open() returns.
	 */
	const struct ust_af *af;
	/*
	 * Unwind tables (CFI, from each file's .eh_frame): capacity in rows
	 * shared by every file (0: 2M rows, 32 MiB); no_cfi walks by frame
	 * pointers only, as the kernel's own unwinder does.
	 */
	uint32_t cfi_rows;
	bool no_cfi;
	/*
	 * Only the address filter, for samples whose stacks BPF does not
	 * make: nothing is followed or unwound, and the ring stays empty.
	 */
	bool af_only;
};

enum ust_bpfu_kind {
	UST_BPFU_COOKIE = 1,	/* data: a user_unwind_cookie record */
	UST_BPFU_STACK = 2,	/* data: a user_unwind_stack record */
	UST_BPFU_SAMPLE = 3,	/* a perf sample's cookie; data: a user_unwind_cookie record */
};

/* Stack flags (ust_bpfu_rec.flags). */
#define UST_BPFU_STACK_IMMEDIATE	(1U << 0)	/* taken in the event's context, not deferred */
#define UST_BPFU_STACK_SCHED_FAIL	(1U << 1)	/* task_work could not be scheduled */
#define UST_BPFU_STACK_EXIT		(1U << 2)	/* the task exited with the work pending */
#define UST_BPFU_STACK_TRUNCATED	(1U << 3)	/* cut at UST_BPFU_MAX_STACK frames */
#define UST_BPFU_STACK_RAW		(1U << 4)	/* some address left unresolved */
#define UST_BPFU_STACK_LEAF_RET		(1U << 5)	/* frame 1 came from [sp] (see kernel_frames) */
#define UST_BPFU_STACK_LATE		(1U << 6)	/* unwound in a later kernel entry */
/* How the walk went: the same bits as UST_ABI_STACK_F_* (kernel-bits abi.h). */
#define UST_BPFU_STACK_CFI		(1U << 7)	/* some frames unwound by CFI tables */
#define UST_BPFU_STACK_FP		(1U << 8)	/* some frames unwound by frame pointers */
#define UST_BPFU_STACK_BOTTOM		(1U << 9)	/* reached the outermost frame */
#define UST_BPFU_STACK_NO_TABLE		(1U << 10)	/* a file's table was not loaded yet */
#define UST_BPFU_STACK_BAD_CFA		(1U << 11)	/* cut: a CFA or rule that made no sense */
#define UST_BPFU_STACK_FAULT		(1U << 12)	/* cut: a stack read failed */
#define UST_BPFU_STACK_NO_UNWIND	(1U << 13)	/* cut: a frame with no CFI and no frame pointer */
#define UST_BPFU_STACK_NOT_EXEC		(1U << 16)	/* cut: a return address in no executable mapping */
#define UST_BPFU_STACK_LATER		(1U << 17)	/* walked on by the recorder after recording */
/* The flags a ustitch/stack_flags record carries: UST_ABI_STACK_F_*, same bits. */
#define UST_BPFU_STACK_ABI_MASK		(UST_BPFU_STACK_IMMEDIATE | UST_BPFU_STACK_SCHED_FAIL | \
					 UST_BPFU_STACK_EXIT | UST_BPFU_STACK_TRUNCATED |	\
					 UST_BPFU_STACK_RAW | UST_BPFU_STACK_CFI |		\
					 UST_BPFU_STACK_FP | UST_BPFU_STACK_BOTTOM |		\
					 UST_BPFU_STACK_NO_TABLE | UST_BPFU_STACK_BAD_CFA |	\
					 UST_BPFU_STACK_FAULT | UST_BPFU_STACK_NO_UNWIND |	\
					 UST_BPFU_STACK_NOT_EXEC | UST_BPFU_STACK_LATER)

/* Sample flags (ust_bpfu_rec.flags of UST_BPFU_SAMPLE). */
#define UST_BPFU_SAMPLE_GAP		(1U << 0)	/* an earlier sample on this CPU got no record */

#define UST_BPFU_MAX_STACK		127

struct ust_bpfu_rec {
	enum ust_bpfu_kind kind;
	unsigned int cpu;	/* CPU of the event (cookie) or of the unwind (stack) */
	uint64_t ts;		/* CLOCK_MONOTONIC ns, i.e. ftrace's "mono" clock */
	pid_t tid;		/* also in the record as common_pid */
	pid_t tgid;
	uint64_t cookie;
	unsigned int flags;	/* stacks: UST_BPFU_STACK_*, samples: UST_BPFU_SAMPLE_* */
	unsigned int nr;	/* stacks: frames */
	const void *data;	/* the ftrace record, valid during the callback */
	size_t size;		/* 16 for a cookie, 32 + 20 * nr for a stack */
	uint64_t ip, period;	/* samples: the perf sample's PERF_SAMPLE_IP and _PERIOD */
	/*
	 * Stacks: the @nr frames as the BPF walk gave them (what data encodes),
	 * valid during the callback; NULL for other kinds.  Per frame the file
	 * offset (the address when there is no file), the inode and the kernel
	 * dev_t (0 for none).
	 */
	const uint64_t *offs, *inodes;
	const uint32_t *devs;
};

/* Return 0 to go on, a negative errno to stop the poll (it returns it). */
typedef int (*ust_bpfu_rec_fn)(const struct ust_bpfu_rec *rec, void *ctx);

struct ust_bpfu_stats {
	/* user space */
	uint64_t records;	/* handed to the callback */
	uint64_t cookie_records;
	uint64_t stack_records;
	uint64_t bad_records;	/* malformed ring-buffer samples (never expected) */
	/* BPF side, summed over CPUs */
	uint64_t events;	/* events of followed user tasks */
	uint64_t cookies;	/* cookies allocated */
	uint64_t stacks;	/* stacks emitted */
	uint64_t drops;		/* ring-buffer reservations that failed */
	uint64_t no_storage;	/* events ignored: no task storage */
	uint64_t sched_fail;	/* task_work refused: immediate stack instead */
	uint64_t late;		/* stacks unwound in a later entry (flag LATE) */
	uint64_t stale;		/* cookies left without a stack: work too late */
	uint64_t orphan;	/* task_work runs without a cookie */
	uint64_t truncated;	/* stacks cut at UST_BPFU_MAX_STACK */
	uint64_t vma_fail;	/* bpf_find_vma() errors (mmap lock busy) */
	uint64_t vma_code;	/* refused lookups the process's code table in BPF answered (not in vma_fail) */
	uint64_t exit_stacks;	/* immediate stacks at task exit */
	uint64_t children;	/* child processes followed */
	uint64_t filter_full;	/* child processes missed: tgid map full */
	uint64_t samples;	/* perf samples given a cookie */
	uint64_t cfi_frames;	/* frames unwound by CFI tables */
	uint64_t fp_frames;	/* frames unwound by frame pointers */
	uint64_t cfi_need;	/* files the walk asked tables for */
	uint64_t exit_walks;	/* stacks taken at the system call's exit */
	uint64_t exit_faults;	/* ... that would have faulted: task_work instead */
	uint64_t sample_walks;	/* stacks of samples in user code, taken at the sample */
	uint64_t sample_faults;	/* ... that would have faulted: task_work instead */
	uint64_t memo_walks;	/* stacks that were their task's last walk (words unchanged) */
	/*
	 * Walks that met a file without its table and parked: the stack copied
	 * for the recorder to finish (UST_BPFU_STACK_LATER); the bytes copied
	 * (a sparse park's kept words and bitmaps) and the stack they cover;
	 * parks copied whole (a CPU's working copy was taken); parks refused for the ring's room (the walk then goes on by frame
	 * pointers); copies cut short of the stack's end.
	 */
	uint64_t parks, park_bytes, park_span, park_whole, park_no_room, park_short;
	/*
	 * The recorder's side: stacks it finished, those of them whose table
	 * did not come in time (by frame pointers over the copy), and parked
	 * stacks whose copy never arrived (they end where the walk parked).
	 */
	uint64_t later, later_not_in_time, park_lost;
	/* Stack bytes a finished walk read at most; walks that wanted more than their copy. */
	uint64_t park_used_max, park_beyond_copy;
	/*
	 * Runs of the programs the kernel skipped: a program still running
	 * on that CPU (preempted, on a faultable system-call tracepoint)
	 * when another task reached it.  Each is an event without its
	 * cookie, or an entry whose exit took no stack (stale).
	 */
	uint64_t missed;
	/*
	 * Stacks the walk sent again as their task's last one (no frames in
	 * the ring: the memo served them), and those of them whose last one
	 * was lost (then lost too).
	 */
	uint64_t repeats, repeats_lost;
	char missed_by[64];	/* the program skipped most often, "" if none */
	struct ust_bpfu_cfi_stats {
		uint32_t asked;		/* files the walk asked for, seen by user space */
		uint32_t asked_mmap;	/* ... of them when mapped executable (a dlopen) */
		uint32_t files;		/* tables in the BPF maps */
		uint32_t files_none;	/* files with no usable table (frame pointers) */
		uint32_t failed;	/* loads that failed (last_error says why) */
		uint32_t full;		/* tables that did not fit cfi_rows */
		uint32_t rows;		/* rows used */
		uint32_t cap;		/* rows available */
		uint32_t builds;	/* tables built from ELF files */
		uint32_t disk_loads;	/* tables read from the disk cache */
		double load_ms;		/* time spent building and loading tables, summed over threads */
		double longest_ms;	/* the longest one table took */
		uint32_t threads;	/* the worker threads that load them */
		char last_error[256];
	} cfi;
};

/*
 * For every BPF object writing the unwinder's ring (rodata
 * ust_rb_wake_bytes): how many bytes a CPU writes before it wakes the
 * reader.
 */
uint64_t ust_bpfu_wake_bytes(size_t ring_bytes);

/* Load the programs.  NULL with @err set when BPF is unusable. */
struct ust_bpfu *ust_bpfu_open(const struct ust_bpfu_opts *opts, char *err, size_t errlen);
/* Attach to one more tracepoint, e.g. ("syscalls", "sys_enter_getppid"). */
int ust_bpfu_attach(struct ust_bpfu *u, const char *system, const char *event);
/*
 * Attach to a perf sampling event (opened by the caller, one per CPU or
 * task; opts.perf must be set).  The program keeps every sample; perf's
 * ring gets the sample, ust_bpfu the cookie and, later, the stack.
 */
int ust_bpfu_attach_perf(struct ust_bpfu *u, int perf_fd);
/*
 * Once a tgid is followed, only followed tgids (and, unless no_children,
 * their child processes) get cookies; none followed: every user task.
 * A tgid leaves the filter when its last thread exits.
 */
int ust_bpfu_follow(struct ust_bpfu *u, pid_t tgid);
int ust_bpfu_unfollow(struct ust_bpfu *u, pid_t tgid);
/* Deliver records, waiting up to @timeout_ms (-1: forever) for the first.
 * Returns the number delivered or a negative errno. */
int ust_bpfu_poll(struct ust_bpfu *u, int timeout_ms, ust_bpfu_rec_fn fn, void *ctx);
/* Deliver what is there without waiting. */
int ust_bpfu_consume(struct ust_bpfu *u, ust_bpfu_rec_fn fn, void *ctx);
/*
 * The recording ends: what is there, then every stack still waiting for
 * an unwind table to be finished (UST_BPFU_STACK_LATER), walked on by
 * frame pointers where the table did not come.  Call it once, last.
 */
int ust_bpfu_flush(struct ust_bpfu *u, ust_bpfu_rec_fn fn, void *ctx);
/* An epoll fd that becomes readable when records wait. */
int ust_bpfu_fd(const struct ust_bpfu *u);
/*
 * Told of each followed process's exec(), from the consume/flush that
 * reads it: the program's path, checked to be the file the kernel mapped
 * (@kdev, @ino), found even when the process is gone by then (a command a
 * script runs lives a millisecond): the recorder's mapping records name it.
 */
typedef void (*ust_bpfu_exec_fn)(pid_t tgid, const char *path, uint32_t kdev, uint64_t ino,
				 void *ctx);
void ust_bpfu_on_exec(struct ust_bpfu *u, ust_bpfu_exec_fn fn, void *ctx);
/*
 * The fd of the unwinder's map @name ("ust_bpfu_tasks", ...), for another
 * BPF object that gives cookies from the same sequence (lock_held()
 * filters, lib/record/lh_bpf.c); negative if none.
 */
int ust_bpfu_map_fd(const struct ust_bpfu *u, const char *name);
/*
 * Attach the system calls' exit program: it gives the sys_exit_* events
 * attached (ust_bpfu_attach) their cookies, which they get from nothing
 * else, and takes the stacks of events inside a system call at its exit,
 * where the user stack is the same, instead of by task_work: no irq_work,
 * no self-IPI.  Call it after every program that gives cookies is
 * attached (ust_bpfu_attach, lock_held() filters), before the traced
 * code runs: it must run after them at the system call's exit.  Deferred
 * only (0 and nothing done otherwise).  0 or -errno; on failure, the
 * sys_exit_* events get their cookies from tracepoint programs instead.
 */
int ust_bpfu_arm_exit(struct ust_bpfu *u);

/*
 * Unwind tables loaded before they are needed, so that the first stacks
 * are already complete: a program with the libraries the dynamic loader
 * will map for it (before it runs), or what a live process maps.  Files
 * missed here are loaded when mapped or when the walk first meets them.
 * Loaded by worker threads: ust_bpfu_tables_wait() waits until they are
 * in the maps.  0 or -errno.
 */
int ust_bpfu_tables_program(struct ust_bpfu *u, const char *path);
int ust_bpfu_tables_pid(struct ust_bpfu *u, pid_t pid);
void ust_bpfu_tables_wait(struct ust_bpfu *u);
/* Stacks are walked by CFI tables (not opts.no_cfi), for objects that share the maps. */
bool ust_bpfu_has_tables(const struct ust_bpfu *u);

/* true: cookies per kernel entry, stacks deferred; false: opts.immediate. */
bool ust_bpfu_deferred(const struct ust_bpfu *u);
/* Why every event gets an immediate stack (one line), "" when deferred. */
const char *ust_bpfu_why_immediate(const struct ust_bpfu *u);
/* Stacks outside system calls are taken by BPF task_work (else at the event). */
bool ust_bpfu_task_work(const struct ust_bpfu *u);
/*
 * A task's walks keep the VMAs they found while its mm's mappings stand
 * (the kernel's mmap_lock sequence, 6.13+): samples, which can look up only
 * one VMA each, then resolve whole stacks, task_work or not.
 */
bool ust_bpfu_keeps_vmas(const struct ust_bpfu *u);
/*
 * Programs on system-call tracepoints turn preemption off (the kernel runs
 * them preemptible: faultable tracepoints), for the objects that follow
 * the unwinder's rules; @u NULL: what the kernel's BTF says.
 */
bool ust_bpfu_preempt_off(const struct ust_bpfu *u);
/*
 * What the kernel did not allow and what is used instead, "; "-separated
 * lines ("no BPF task_work: ...", "no CFI walk, frame pointers instead:
 * ..."), "" when the full unwinder loaded.
 */
const char *ust_bpfu_notes(const struct ust_bpfu *u);
/* Which notes ust_bpfu_notes() holds, so that a caller can say them short. */
enum {
	UST_BPFU_NOTE_TW_ABSENT = 1 << 0,	/* no task_work kfunc (or none known) */
	UST_BPFU_NOTE_TW_REFUSED = 1 << 1,	/* refused now, by this kernel's verifier */
	UST_BPFU_NOTE_TW_REMEMBERED = 1 << 2,	/* refused earlier this boot (remembered) */
	UST_BPFU_NOTE_NO_CFI = 1 << 3,		/* CFI walk refused: frame pointers */
	UST_BPFU_NOTE_PREEMPTIBLE = 1 << 4,	/* system-call programs left preemptible */
};
unsigned int ust_bpfu_note_kinds(const struct ust_bpfu *u);
struct ust_bpfload_report;
/* How loading went: each program, its verification (see ustitch/bpfload.h). */
const struct ust_bpfload_report *ust_bpfu_load_report(const struct ust_bpfu *u);
/*
 * The fd of ust_bpfu_later, the program a lock_held() filter tail-calls
 * for the stack of a kept event (lib/record/lh_bpf.c); negative if none.
 */
int ust_bpfu_later_fd(const struct ust_bpfu *u);
/*
 * Can the unwinder be tried here: kernel BTF, and tracepoint programs
 * load?  What the recorder checks before it sets anything up; whether
 * the unwinder's own programs pass this kernel's verifier is known when
 * ust_bpfu_open() loads them, once (loading them to check, then again to
 * record, was a third of a short recording's CPU), and a refusal there
 * still degrades (notes) or says why.  @why: a line either way.
 */
bool ust_bpfu_usable(char *why, size_t len);
/*
 * Does the unwinder load here (its real programs, loaded and unloaded),
 * and with @task_work its variant that schedules BPF task_work?  @why: a
 * line saying which variant, or what the kernel refused.
 */
bool ust_bpfu_probe(bool task_work, char *why, size_t len);
/*
 * Load the programs @o asks for with their verification measured, the
 * variant of this kernel with the CFI walk (@cfi) or frame pointers, into
 * @rep, then unload them (`ustitch probe`).  @what: which variant.  0, or
 * -1 with @err.
 */
int ust_bpfu_verify(const struct ust_bpfu_opts *o, bool cfi, struct ust_bpfload_report *rep,
		    char *what, size_t whatlen, char *err, size_t errlen);
int ust_bpfu_get_stats(const struct ust_bpfu *u, struct ust_bpfu_stats *st);
/* Detach everything and free; NULL is fine. */
void ust_bpfu_close(struct ust_bpfu *u);

/* ustitch was built with BPF support. */
bool ust_bpfu_built(void);

#endif
