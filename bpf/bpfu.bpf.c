// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF unwinder (ust_bpfu): deferred user-stack unwinding for kernels
 * without the ftrace userstacktrace_delay option, giving the same cookies
 * and stacks the kernel series produces (seed 004, patches 6, 8, 9).
 *
 * Each event of a followed task gets the cookie of its kernel entry
 * (bpfu_cookie.bpf.h); the entry's user stack is walked once, by CFI
 * tables where a file has them, by frame pointers where it has none
 * (bpfu_walk.bpf.h), turned into file offset / inode / dev_t per frame as
 * trace_user_unwind_callback() does, and sent as one STACK record.  Where
 * the stack is taken, in the order the kernel's own timing allows:
 *  - an entry by system call: at the system call's exit
 *    (ust_bpfu_sys_exit), after every event of the entry, with the user
 *    registers the task returns with;
 *  - a perf sample that interrupted user code: at the sample;
 *  - anything else (interrupts, faults): by a BPF task_work on the way
 *    back to user space where the kernel lets BPF schedule one, else at
 *    the event (an IMMEDIATE stack, its own cookie).
 * The task_work's walk may fault pages in, as the kernel's deferred
 * unwinder does; the others cannot (UST_BPFU_F_FAULT marks a stack cut
 * by a page not present).
 *
 * The object is built in variants of this one source (bpf/meson.build):
 *   UST_BPFU_CFI  1: the CFI walk; 0: frame pointers only (--unwind fp)
 *   UST_BPFU_TW   0: no task_work; 1: bpf_task_work_schedule_resume_impl()
 *                 with its 6.18 prototype; 2: bpf_task_work_schedule_resume()
 *                 (6.19+, the implicit-argument kfunc)
 * kfuncs are no stable ABI: an object naming one with another prototype
 * than the kernel's does not load at all (libbpf checks it), so user
 * space (lib/record/bpfu_obj.c) picks the variant the running kernel's BTF
 * matches, and falls back to 0 when the verifier refuses task_work (some
 * kernels accept it only from sleepable programs).  Every variant has the
 * same programs, maps and globals, so one skeleton serves them all.
 *
 * System-call events (syscalls:sys_enter_NAME, sys_exit_NAME) are served
 * by two raw programs, ust_bpfu_sys_enter and ust_bpfu_sys_exit, which
 * test the system call's number against a set: a tracepoint program on a
 * system-call event runs inside perf's probe, which first builds the perf
 * record of the event (its fields, a copy of the arguments) only to hand
 * it to the program, and each event is its own program run: with the
 * programs themselves, 30 % of an entry's time.
 *
 * ust_bpfu_event_imm gives every event its own cookie and a stack taken
 * now (tests, and the comparison with the kernel's IMMEDIATE stacks).
 *
 * ust_bpfu_perf does the same for perf sampling events (the backport of
 * perf's defer_callchain, seed 002): the sample's kernel entry gets its
 * cookie, sent as a SAMPLE record with the sample's ip and period so that
 * user space can pair it with perf's own sample.
 */
#include "ust_bpfu_kern.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#ifndef UST_BPFU_TW
#define UST_BPFU_TW 1
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "bpfu_cookie.bpf.h"
#include "bpfu_vma.bpf.h"

/*
 * Set at run time by ust_bpfu_attach(): the system calls whose sys_enter_*
 * / sys_exit_* events get cookies here, a bit per number.
 */
#define UST_BPFU_SC_WORDS	(UST_BPFU_NR_SYSCALLS / 64)
volatile __u64 ust_bpfu_sc_enter[UST_BPFU_SC_WORDS];
volatile __u64 ust_bpfu_sc_exit[UST_BPFU_SC_WORDS];

/* --addr-filter (uses ust_bpfu_vma_cb, ust_bpfu_mm_seq) */
#include "addrfilter.bpf.h"

/* The walk: CFI tables, frame pointers where a file has none. */
#include "bpfu_code.bpf.h"
#include "bpfu_walk.bpf.h"

struct ust_bpfu_work {
	struct bpf_task_work tw;
};

/*
 * The task_work slot.  Not in task storage: the kernel accepts struct
 * bpf_task_work only in hash and array map values.  Keyed by tid, deleted
 * when the thread exits (ust_bpfu_exit).  In every variant, so that all
 * have the same maps.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct ust_bpfu_work);
} ust_bpfu_works SEC(".maps");

typedef int (*ust_bpfu_tw_cb)(struct bpf_map *map, void *key, void *value);

#if UST_BPFU_TW == 1
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw,
					      void *map__map, ust_bpfu_tw_cb callback,
					      void *aux__prog) __ksym;
#define ust_bpfu_tw_schedule(task, tw, map, cb) \
	bpf_task_work_schedule_resume_impl(task, tw, map, cb, 0)
#elif UST_BPFU_TW == 2
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw,
					 void *map__map, ust_bpfu_tw_cb callback) __ksym;
#define ust_bpfu_tw_schedule(task, tw, map, cb) bpf_task_work_schedule_resume(task, tw, map, cb)
#endif

/*
 * Per CPU: a perf sample of a followed task got no SAMPLE record (ring
 * full, no task storage).  User space pairs samples and records by CPU
 * and time; the next record says a gap precedes it, so that an older
 * record is never taken for the missing one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ust_bpfu_sgap SEC(".maps");

static __always_inline void ust_bpfu_sample_gap(void)
{
	__u32 k = 0, *gap = bpf_map_lookup_elem(&ust_bpfu_sgap, &k);

	if (gap)
		*gap = 1;
}

static __always_inline void ust_bpfu_emit_sample(__u64 ts, __u32 cpu, __u64 id, __u64 cookie,
						 __u64 ip, __u64 period)
{
	__u32 k = 0, *gap = bpf_map_lookup_elem(&ust_bpfu_sgap, &k);
	struct ust_bpfu_rec_sample *r;

	r = bpf_ringbuf_reserve(&ust_bpfu_events, sizeof(*r), 0);
	if (!r) {
		UST_COUNT(drops);
		if (gap)
			*gap = 1;
		return;
	}
	r->h.kind = UST_BPFU_REC_SAMPLE;
	r->h.cpu = cpu;
	r->h.ts = ts;
	r->h.tid = (__u32)id;
	r->h.tgid = id >> 32;
	r->h.cookie = cookie;
	r->ip = ip;
	r->period = period;
	r->flags = gap && *gap ? UST_BPFU_S_DROPPED_BEFORE : 0;
	r->pad = 0;
	if (gap)
		*gap = 0;
	bpf_ringbuf_submit(r, ust_bpfu_rb_flags(sizeof(*r)));
	UST_COUNT(samples);
}

/* The event's request: a cookie record, or for a perf sample (@sample) a
 * SAMPLE record carrying the sample's ip and period. */
static __always_inline void ust_bpfu_emit_request(__u64 ts, __u32 cpu, __u64 id, __u64 cookie,
						  __u32 sample, __u64 ip, __u64 period)
{
	if (sample)
		ust_bpfu_emit_sample(ts, cpu, id, cookie, ip, period);
	else
		ust_bpfu_emit_cookie(ts, cpu, id, cookie);
}

/*
 * The walk storage of @task (@st, or looked up) for a walk starting now;
 * NULL if it cannot be had, or a walk of the task is under way (this is
 * an interrupt's).
 */
static __always_inline struct ust_bpfu_walk_task *ust_bpfu_walk_begin(struct task_struct *task,
								      struct ust_bpfu_task *st)
{
	if (!st)
		st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st || st->walk.busy)
		return NULL;
	st->walk.busy = 1;
	return &st->walk;
}

/* Send @t's record, as far as its frames go, and end the walk.  0 or -1. */
static __always_inline int ust_bpfu_walk_send(struct ust_bpfu_walk_task *t, __u64 ts, __u64 id,
					      __u64 cookie)
{
	struct ust_bpfu_rec_stack *r = &t->r;
	__u32 nr = r->nr;
	__u64 size;
	long err;

	if (nr > UST_BPFU_MAX_FRAMES)
		nr = UST_BPFU_MAX_FRAMES;
	/*
	 * The memo's frames are the task's last stack's, which user space
	 * has (unless that record was lost: seq tells): the header alone.
	 */
	if (ust_bpfu_walk_of(t)->served && !t->resend) {
		r->flags |= UST_BPFU_F_AGAIN;
		size = UST_BPFU_STACK_REC_SIZE(0);
	} else {
		size = UST_BPFU_STACK_REC_SIZE(nr);
	}
	r->seq = ++t->sent;
	r->h.kind = UST_BPFU_REC_STACK;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.ts = ts;
	r->h.tid = (__u32)id;
	r->h.tgid = id >> 32;
	r->h.cookie = cookie;
	err = bpf_ringbuf_output(&ust_bpfu_events, r, size, ust_bpfu_rb_flags(size));
	t->busy = 0;
	t->resend = err != 0;
	if (err) {
		UST_COUNT(drops);
		return -1;
	}
	UST_COUNT(stacks);
	return 0;
}

/*
 * The stack of the event's own context, walked now without faulting
 * (no task_work, deferral refused, task exit).
 */
static __always_inline void ust_bpfu_emit_immediate(struct task_struct *task, __u64 id,
						    __u64 cookie, __u32 flags)
{
	__u64 ts = bpf_ktime_get_ns();
	struct ust_bpfu_walk_task *t = ust_bpfu_walk_begin(task, NULL);

	if (!t) {
		UST_COUNT(drops);
		return;
	}
	ust_bpfu_walk_now(t, flags | UST_BPFU_F_IMMEDIATE, 0);
	ust_bpfu_walk_send(t, ts, id, cookie);
}

#if UST_BPFU_TW
struct ust_bpfu_fault_ctx {
	struct ust_bpfu_walk_task *t;
	__u32 pages;
};

/*
 * A frame per round, as ust_bpfu_walk_frame_cb(), but a step that meets a
 * page not present gets it faulted in (this callback runs in the
 * task_work, where that is allowed) and runs again.
 */
static long ust_bpfu_walk_fault_cb(__u32 i __ust_unused, void *data)
{
	struct ust_bpfu_fault_ctx *c = data;
	struct ust_bpfu_walk *w;
	__u8 b;
	int ret;

	ret = ust_bpfu_walk_frame(c->t);
	if (ret == UST_BPFU_WALK_VMA) {
		ust_bpfu_walk_vma_round(c->t);
		return 0;
	}
	if (ret == UST_BPFU_WALK_PARK)
		return ust_bpfu_walk_park_round(c->t);
	if (ret != UST_BPFU_WALK_PAGE)
		return ret != UST_BPFU_WALK_NEXT;
	w = ust_bpfu_walk_of(c->t);
	if (c->pages < UST_BPFU_WALK_MAX_PAGES &&
	    !bpf_copy_from_user(&b, sizeof(b), (void *)w->page)) {
		c->pages++;
		return 0;	/* the same frame again */
	}
	w->g.flags |= UST_BPFU_F_FAULT;
	return 1;
}

static __always_inline void ust_bpfu_emit_deferred(struct task_struct *task, __u64 id,
						   struct ust_bpfu_task *st, __u64 cookie)
{
	__u64 ts = bpf_ktime_get_ns();
	struct ust_bpfu_walk_task *t = ust_bpfu_walk_begin(task, st);
	struct ust_bpfu_fault_ctx c = { .t = t };
	__u32 flags = 0;

	if (!t) {
		UST_COUNT(drops);
		return;
	}
	/*
	 * The work was queued after the task had left (its irq_work ran too
	 * late) and runs at the end of a later entry with no event: these
	 * are that entry's frames.  (An execve() returns to the new
	 * program's first instruction: that is its entry's stack.)
	 */
	if (!ust_bpfu_same_entry(st, (struct pt_regs *)bpf_task_pt_regs(task))) {
		flags = UST_BPFU_F_LATE;
		UST_COUNT(late);
	}
	if (!ust_bpfu_walk_start(t, flags, 0, 1)) {
		bpf_loop(UST_BPFU_WALK_ROUNDS, ust_bpfu_walk_fault_cb, &c, 0);
		ust_bpfu_walk_finish(t, flags);
	}
	ust_bpfu_walk_send(t, ts, id, cookie);
}

/* The task_work: in the task, after the event's kernel work, before user space. */
static int ust_bpfu_work_cb(struct bpf_map *map __ust_unused, void *key __ust_unused,
			    void *value __ust_unused)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_task *st;
	__u64 cookie;

	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	if (st)
		st->pending = 0;
	if (!st || !st->cookie) {
		UST_COUNT(orphan);
		return 0;
	}
	/*
	 * The walk may fault, and the fault's events are of this same entry:
	 * they must get this cookie, not make a new one (in_work).
	 */
	cookie = st->cookie;
	st->in_work = 1;
	ust_bpfu_emit_deferred(task, bpf_get_current_pid_tgid(), st, cookie);
	st->in_work = 0;
	/* unwind_exit_to_user_mode(): the next entry gets a new cookie. */
	if (st->cookie == cookie)
		st->cookie = 0;
	return 0;
}

static __always_inline int ust_bpfu_schedule(struct task_struct *task, __u32 tid)
{
	struct ust_bpfu_work zero = {}, *w;

	w = bpf_map_lookup_elem(&ust_bpfu_works, &tid);
	if (!w) {
		bpf_map_update_elem(&ust_bpfu_works, &tid, &zero, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&ust_bpfu_works, &tid);
		if (!w)
			return -1;
	}
	return ust_bpfu_tw_schedule(task, &w->tw, &ust_bpfu_works, ust_bpfu_work_cb);
}
#endif /* UST_BPFU_TW */

/*
 * The stack of @st's entry on the way back to user space: by task_work;
 * without one (this variant, or scheduling refused), now, and the cookie
 * is forgotten, so that the entry's next event gets a new one.
 */
static __always_inline void ust_bpfu_stack_later(struct task_struct *task, struct ust_bpfu_task *st,
						 __u64 id, __u64 cookie)
{
#if UST_BPFU_TW
	if (st->pending)
		return;
	if (ust_bpfu_schedule(task, (__u32)id) == 0) {
		st->pending = 1;
		return;
	}
	UST_COUNT(sched_fail);
	st->cookie = 0;
	ust_bpfu_emit_immediate(task, id, cookie, UST_BPFU_F_SCHED_FAIL);
#else
	st->cookie = 0;
	ust_bpfu_emit_immediate(task, id, cookie, 0);
#endif
}

/*
 * The stack of an entry, walked now without faulting: at its system call's
 * exit (the event's semantics: once per entry, after all its events, the
 * full user stack), or at a sample that interrupted user code.  0:
 * emitted; -1: nothing emitted, the task_work is to take it (a read would
 * have faulted, the mmap lock was busy, or this interrupts a walk of the
 * task).
 */
static __always_inline int ust_bpfu_emit_now(struct task_struct *task, struct ust_bpfu_task *st,
					     __u64 id, __u64 cookie, __u32 flags)
{
	__u64 ts = bpf_ktime_get_ns();
	struct ust_bpfu_walk_task *t = ust_bpfu_walk_begin(task, st);

	if (!t)
		return -1;	/* the interrupted walk's task goes on; this one later */
	ust_bpfu_walk_now(t, flags, 1);
#if UST_BPFU_TW
	/*
	 * A page not present, or a VMA not found because another thread held
	 * the mmap lock for writing (bpf_find_vma() only tries the lock): the
	 * task_work, which may wait for both, does better.
	 */
	if (t->r.flags & (UST_BPFU_F_FAULT | UST_BPFU_F_RAW)) {
		t->busy = 0;
		return -1;
	}
#endif
	ust_bpfu_walk_send(t, ts, id, cookie);
	return 0;	/* a drop included: user space sees it, no second try */
}

/* The stack of @st's entry now (ust_bpfu_emit_now()), else later. */
static __always_inline int ust_bpfu_stack_now(struct task_struct *task, struct ust_bpfu_task *st,
					      __u64 id, __u64 cookie)
{
	if (ust_bpfu_emit_now(task, st, id, cookie, 0) == 0) {
		st->cookie = 0;		/* the next entry gets a new one */
		return 0;
	}
	ust_bpfu_stack_later(task, st, id, cookie);
	return -1;
}

/*
 * One event's request: @sample says it is a perf sample, with its @ip and
 * @period (ust_bpfu_sample), @how what it is (UST_BPFU_TC_*).  @imm:
 * every event its own cookie and stack, taken now.
 */
static __always_inline int ust_bpfu_request(struct task_struct *task, __u64 id, __u32 sample,
					    __u64 ip, __u64 period, __u32 imm, __u32 how)
{
	__u32 cpu = bpf_get_smp_processor_id(), act = UST_BPFU_ACT_NONE;
	__u64 cookie, ts = bpf_ktime_get_ns();
	struct ust_bpfu_task *st = NULL;

	UST_COUNT(events);
	if (imm) {
		cookie = ust_bpfu_new_cookie(cpu);
		if (cookie)
			UST_COUNT(cookies);
	} else {
		st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			UST_COUNT(no_storage);
			cookie = 0;
		} else {
			cookie = ust_bpfu_take_cookie(task, st, cpu, how, &act);
		}
	}
	if (!cookie) {
		if (sample)
			ust_bpfu_sample_gap();
		return 0;
	}
	ust_bpfu_emit_request(ts, cpu, id, cookie, sample, ip, period);
	if (imm) {
		ust_bpfu_emit_immediate(task, id, cookie, 0);
	} else if (st && act == UST_BPFU_ACT_NOW) {
		if (ust_bpfu_stack_now(task, st, id, cookie) == 0)
			UST_COUNT(sample_walks);
		else
			UST_COUNT(sample_faults);
	} else if (st && act == UST_BPFU_ACT_LATER) {
		ust_bpfu_stack_later(task, st, id, cookie);
	}
	return 0;
}

/*
 * ust_bpfu_request() for the current task, if it is one to follow.
 * Inlined: the chain of calls under a program (here, the walk's) shares
 * 512 bytes of stack on 6.1, a frame of its own each.
 */
static __always_inline int ust_bpfu_event_body(__u32 sample, __u64 ip, __u64 period,
							 __u32 imm, __u32 how)
{
	struct task_struct *task;
	__u64 id;

	task = ust_bpfu_current(&id);
	return task ? ust_bpfu_request(task, id, sample, ip, period, imm, how) : 0;
}

/*
 * A tracepoint program's return value decides whether perf records the
 * event for the perf users of that tracepoint: 1 leaves them unaffected.
 */
SEC("tracepoint")
int ust_bpfu_event(void *ctx __ust_unused)
{
	ust_bpfu_preempt_off();
	ust_bpfu_event_body(0, 0, 0, 0, 0);
	ust_bpfu_preempt_on();
	return 1;
}

SEC("tracepoint")
int ust_bpfu_event_imm(void *ctx __ust_unused)
{
	ust_bpfu_preempt_off();
	ust_bpfu_event_body(0, 0, 0, 1, 0);
	ust_bpfu_preempt_on();
	return 1;
}

/*
 * The lock_held() filter's way to a stack (lockheld.bpf.c): it gives its
 * kept event a cookie by the same rules (bpfu_cookie.bpf.h) and, when the
 * entry's stack is to be taken on the way back to user space, tail-calls
 * this program, which arranges that as for any event.  Returning 1 keeps
 * the filter's sample.
 */
SEC("tracepoint")
int ust_bpfu_later(void *ctx __ust_unused)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_task *st;
	__u64 id = (__u64)(__u32)task->tgid << 32 | (__u32)task->pid;

	ust_bpfu_preempt_off();
	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	if (st && st->cookie && !st->pending && !st->at_exit)
		ust_bpfu_stack_later(task, st, id, st->cookie);
	ust_bpfu_preempt_on();
	return 1;
}

/*
 * Perf sampling events (ust_bpfu_attach_perf()): the sample's kernel
 * entry gets a cookie like any event's.  A sample of a CPU-bound task
 * interrupts user mode: the entry is the interrupt itself, and its stack
 * is the one interrupted.  Returning 1 keeps perf's own sample.
 */
SEC("perf_event")
int ust_bpfu_perf(struct bpf_perf_event_data *ctx)
{
	/* A sample --addr-filter drops needs no stack: no cookie either. */
	if (!ust_af_keep_sample(ctx))
		return 0;
	/* cs's privilege level: 3 is user code. */
	ust_bpfu_event_body(1, ctx->regs.ip, ctx->sample_period, 0,
			    (ctx->regs.cs & 3) == 3 ? UST_BPFU_TC_USER : 0);
	return 1;
}

/* --addr-filter alone, for samples whose stacks BPF does not make. */
SEC("perf_event")
int ust_bpfu_perf_af(struct bpf_perf_event_data *ctx)
{
	return ust_af_keep_sample(ctx);
}

/*
 * A system call ftrace gives syscalls:* events: the 64-bit ones only
 * (ust_bpfu_compat(); x32's numbers have bit 30 set, beyond any set here).
 */
static __always_inline bool ust_bpfu_sc_in(volatile __u64 *set, __u64 nr)
{
	return nr < UST_BPFU_NR_SYSCALLS && ((set[nr >> 6] >> (nr & 63)) & 1);
}

/*
 * The sys_enter_* events of the set: attached after ftrace enabled its
 * events, so that ftrace's probe on this tracepoint runs first and each
 * event's record is written before its cookie, as the kernel writes them.
 * raw_tp sys_enter's arguments: the user registers, the number.
 */
SEC("raw_tp/sys_enter")
int ust_bpfu_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task;
	__u64 id;

	ust_bpfu_preempt_off();		/* first: see bpfu_cookie.bpf.h */
	if (ust_bpfu_sc_in(ust_bpfu_sc_enter, ctx->args[1])) {
		task = ust_bpfu_current(&id);
		if (task && !ust_bpfu_compat(task))
			ust_bpfu_request(task, id, 0, 0, 0, 0, UST_BPFU_TC_ENTRY);
	}
	ust_bpfu_preempt_on();
	return 0;
}

static __always_inline void ust_bpfu_rec_head(struct ust_bpfu_rec_hdr *h, __u32 kind, __u64 id)
{
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->ts = bpf_ktime_get_ns();
	h->tid = (__u32)id;
	h->tgid = id >> 32;
	h->cookie = 0;
}

#if UST_BPFU_CFI
/* @v (found) as the records describe a mapping. */
static __always_inline void ust_bpfu_rec_vma(struct ust_bpfu_park_vma *pv, const struct ust_bpfu_vma *v)
{
	pv->start = v->start;
	pv->end = v->end;
	pv->pgoff = v->pgoff;
	pv->ino = v->ino;
	pv->dev = v->dev;
	pv->flags = v->exec ? UST_BPFU_PARK_VMA_EXEC : 0;
}

/*
 * A followed task mapped a file executable: dlopen() maps a library's
 * code with mmap(PROT_EXEC), as ld.so does at exec.  Its table is asked
 * for now, as a walk meeting the file would (ust_bpfu_walk_table(): the
 * same PENDING entry, the same record), so that user space builds it
 * while the library starts rather than after the first walk parked on it.
 * A MAP record first says where it is, for the recorder's view of the
 * process's code.  A global function: verified once, on its own.
 */
__noinline int ust_bpfu_mmap_exec(__u64 id, __u64 addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ust_bpfu_walk_vma s;	/* bpf_find_vma()'s context must be on the stack */
	struct ust_bpfu_rec_map *m;

	__builtin_memset(&s, 0, sizeof(s));
	if (bpf_find_vma(task, addr, ust_bpfu_vma_cb, &s.v, 0) || !s.v.found || !s.v.exec ||
	    !s.v.ino)
		return 0;
	m = bpf_ringbuf_reserve(&ust_bpfu_events, sizeof(*m), 0);
	if (m) {
		ust_bpfu_rec_head(&m->h, UST_BPFU_REC_MAP, id);
		ust_bpfu_rec_vma(&m->vma, &s.v);
		bpf_ringbuf_submit(m, 0);
	} else {
		UST_COUNT(drops);
	}
	ust_bpfu_code_add(id >> 32, &s.v);
	ust_bpfu_walk_table(id >> 32, &s, UST_BPFU_NEED_MMAP);
	return 0;
}

/*
 * The code an exec() mapped (process context: bpf_find_vma() may take the
 * mmap lock): the program's, at mm->start_code, and the one its first
 * instruction is in, the dynamic loader's (a static program's own again).
 */
__noinline int ust_bpfu_exec_code(struct ust_bpfu_rec_exec *r)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct mm_struct___walk *mm = ust_bpfu_mm_of(task);
	struct ust_bpfu_walk_vma s;
	__u64 at[UST_BPFU_EXEC_VMAS];
	int i;

	if (!r || !mm)
		return 0;
	at[0] = BPF_CORE_READ(mm, start_code);
	at[1] = regs->ip;
	for (i = 0; i < UST_BPFU_EXEC_VMAS; i++) {
		__builtin_memset(&s, 0, sizeof(s));
		if (bpf_find_vma(task, at[i], ust_bpfu_vma_cb, &s.v, 0) || !s.v.found || !s.v.exec ||
		    !s.v.ino)
			continue;
		if (i && r->code[0].start == s.v.start)
			break;		/* static: no loader */
		ust_bpfu_rec_vma(&r->code[i], &s.v);
	}
	return 0;
}
#endif

#define UST_NR_MMAP	9	/* x86-64 */
#define UST_NR_MPROTECT	10
#define UST_NR_MUNMAP	11
#define UST_NR_MREMAP	25
#define UST_NR_EXECVE	59
#define UST_NR_EXECVEAT	322
#define UST_PROT_EXEC	0x4

#if UST_BPFU_CFI
/*
 * A new program's code, at its execve()'s exit, into the code table
 * (6.13+, where the table answers refused lookups): the kernel mapped it
 * and the loader, no mmap() told us, and the first samples of a short
 * process get one lookup each (a shell loop's wc, tr: 29 of 56 parks).
 * Not at sched_process_exec: in the vm lane's 9p guests what a lookup
 * finds there is keyed otherwise than what later lookups find.
 */
static __always_inline void ust_bpfu_exec_fill(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct mm_struct___walk *mm = ust_bpfu_mm_of(task);
	struct ust_bpfu_vma v;
	__u64 at[2];
	int i;

	if (!mm)
		return;
	at[0] = BPF_CORE_READ(mm, start_code);
	at[1] = regs->ip;
	for (i = 0; i < 2; i++) {
		__builtin_memset(&v, 0, sizeof(v));
		if (!bpf_find_vma(task, at[i], ust_bpfu_vma_cb, &v, 0))
			ust_bpfu_code_add(tgid, &v);
	}
}

/*
 * A system call that changed the mappings, at its exit: an execve()'s new
 * program goes into the process's code table (above); what any other
 * covered leaves it (bpfu_code.bpf.h), and an mmap() that mapped
 * something executable tells its file (ust_bpfu_mmap_exec()).
 * The arguments are still in the registers the call took them in (rdi,
 * rsi, rdx: x86-64 system calls leave them); the result in rax.
 */
static __always_inline void ust_bpfu_sys_exit_mm(__u64 id, struct pt_regs *regs)
{
	__u64 nr = regs->orig_ax, ret = regs->ax;

	if ((nr == UST_NR_EXECVE || nr == UST_NR_EXECVEAT) && !ret) {
		if (ust_bpfu_walk_keeps_vmas())
			ust_bpfu_exec_fill(id >> 32);
		return;
	}

	if (nr == UST_NR_MMAP && !(ret & 4095)) {
		ust_bpfu_code_forget(id >> 32, ret, regs->si);
		if (regs->dx & UST_PROT_EXEC)
			ust_bpfu_mmap_exec(id, ret);
	} else if ((nr == UST_NR_MUNMAP || nr == UST_NR_MREMAP) && !(ret & 4095)) {
		ust_bpfu_code_forget(id >> 32, regs->di, regs->si);
	} else if (nr == UST_NR_MPROTECT && !ret && !(regs->dx & UST_PROT_EXEC)) {
		ust_bpfu_code_forget(id >> 32, regs->di, regs->si);
	}
}
#endif

/*
 * Every system call's exit, attached after every event program (so it
 * runs after the sys_exit events of the entry): first the cookie of this
 * system call's own sys_exit_* event if it is in the set, then the stack
 * of the entries that asked for it (at_exit).
 */
static __always_inline void ust_bpfu_sys_exit_body(void)
{
	struct task_struct *task;
	struct ust_bpfu_task *st;
	struct pt_regs *regs;
	__u64 cookie, id;
	bool event, both;

	task = ust_bpfu_current(&id);
	if (!task)
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
#if UST_BPFU_CFI
	/*
	 * mmap(addr, len, prot, ...) that mapped something executable: its
	 * result a page (an error is -4095..-1), prot still in rdx.
	 */
	if (ust_cfi_on && !ust_bpfu_compat(task))
		ust_bpfu_sys_exit_mm(id, regs);
#endif
	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	/* syscall_get_nr(), as ftrace's own sys_exit probe takes it. */
	event = ust_bpfu_sc_in(ust_bpfu_sc_exit, regs->orig_ax) && !ust_bpfu_compat(task);
	/*
	 * This system call's sys_exit_* event, and its entry's stack due
	 * here: one record says both, the cookie record and the stack record
	 * the kernel writes one after the other (UST_BPFU_F_REQUEST).
	 * Otherwise the event's request first, then the stack.
	 */
	both = event && st && st->cookie && st->at_exit && !st->in_work &&
	       ust_bpfu_same_entry(st, regs);
	if (event && !both) {
		ust_bpfu_request(task, id, 0, 0, 0, 0, 0);
		if (!st)	/* the request may have made it */
			st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	}
	if (!st || !st->cookie || !st->at_exit)
		return;
	cookie = st->cookie;
	st->at_exit = 0;
	/*
	 * Another entry's exit: the one that asked was missed (the kernel
	 * skipped this program there).  Its stack is gone; this is not it.
	 */
	if (!st->in_work && !ust_bpfu_same_entry(st, regs)) {
		UST_COUNT(stale);
		st->cookie = 0;
		return;
	}
	if (both)
		UST_COUNT(events);
	if (ust_bpfu_emit_now(task, st, id, cookie, both ? UST_BPFU_F_REQUEST : 0) == 0) {
		st->cookie = 0;		/* the next entry gets a new one */
		UST_COUNT(exit_walks);
		return;
	}
	/* Not now: the request alone, the stack later. */
	if (both)
		ust_bpfu_emit_cookie(bpf_ktime_get_ns(), bpf_get_smp_processor_id(), id, cookie);
	ust_bpfu_stack_later(task, st, id, cookie);
	UST_COUNT(exit_faults);
}

SEC("raw_tp/sys_exit")
int ust_bpfu_sys_exit(struct bpf_raw_tracepoint_args *ctx __ust_unused)
{
	ust_bpfu_preempt_off();
	ust_bpfu_sys_exit_body();
	ust_bpfu_preempt_on();
	return 0;
}

/*
 * ftrace's event-fork for the tgid filter: a followed process's new child
 * processes are followed from their first instruction.
 */
SEC("raw_tp/sched_process_fork")
int ust_bpfu_fork(struct bpf_raw_tracepoint_args *ctx)
{
	ust_bpfu_follow_child((struct task_struct *)ctx->args[1]);
#if UST_BPFU_CFI
	if (ust_cfi_on)
		ust_bpfu_code_fork((struct task_struct *)ctx->args[1]);
#endif
	return 0;
}

/*
 * A followed process runs a new program: user space loads the tables of
 * the program and the libraries ld.so will map for it while ld.so does
 * so, before the program's own first events, instead of when the walk
 * first meets each file.  This and ust_bpfu_exit return 1: a tracepoint
 * program's 0 drops the event for every perf user of that tracepoint
 * (perf record, another recording's lock_held() filter), not just ours.
 */
SEC("tracepoint/sched/sched_process_exec")
int ust_bpfu_exec(void *ctx)
{
	struct ust_bpfu_rec_exec *r;
	__u64 id;

	if (!ust_cfi_on || !ust_bpfu_current(&id))
		return 1;
	r = bpf_ringbuf_reserve(&ust_bpfu_events, sizeof(*r), 0);
	if (!r) {
		UST_COUNT(drops);
		return 1;
	}
	ust_bpfu_rec_head(&r->h, UST_BPFU_REC_EXEC, id);
	__builtin_memset(r->code, 0, sizeof(r->code));
	/*
	 * The event's filename: a __data_loc at offset 8 of the record (after
	 * the common fields; the same from 2.6 to 7.x), its low 16 bits the
	 * string's offset in the record.
	 */
	{
		__u64 rec = (__u64)ctx;	/* an address to read from, not a context access */
		__u32 loc = 0;

		r->path[0] = '\0';
		if (!bpf_probe_read_kernel(&loc, sizeof(loc), (void *)(rec + 8)) && (loc & 0xffff))
			bpf_probe_read_kernel_str(r->path, sizeof(r->path), (void *)(rec + (loc & 0xffff)));
	}
#if UST_BPFU_CFI
	{
		__u32 tgid = id >> 32;

		/* A new program: none of the old code table stands. */
		bpf_map_delete_elem(&ust_bpfu_code, &tgid);
	}
	ust_bpfu_exec_code(r);
#endif
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 1;
}

/*
 * A thread exiting with its stack still due (exit_group, exit) never
 * returns to user space: report that entry's stack now (empty if the mm
 * is already gone); deleting the slot cancels a pending task_work.  The
 * last thread of a group also takes its tgid out of the filter: the
 * number may come back as another process.
 */
SEC("tracepoint/sched/sched_process_exit")
int ust_bpfu_exit(void *ctx __ust_unused)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = (__u64)(__u32)task->tgid << 32 | (__u32)task->pid;
	struct ust_bpfu_task *st;
	__u32 tid = (__u32)id;

	st = bpf_task_storage_get(&ust_bpfu_tasks, task, 0, 0);
	if (st)
		st->pending = 0;	/* cancelled by the delete below */
	if (st && st->cookie) {
		__u64 cookie = st->cookie;

		st->cookie = 0;
		UST_COUNT(exit_stacks);
		ust_bpfu_emit_immediate(task, id, cookie, UST_BPFU_F_EXIT);
	}
	bpf_map_delete_elem(&ust_bpfu_works, &tid);
#if UST_BPFU_CFI
	if (task->signal->live.counter == 0) {
		__u32 tgid = id >> 32;

		bpf_map_delete_elem(&ust_bpfu_code, &tgid);
	}
#endif
	ust_bpfu_unfollow_exiting(task);
	return 1;
}
