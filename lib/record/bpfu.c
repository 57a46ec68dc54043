// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfu: load the BPF unwinder (bpf/bpfu.bpf.c, in the variant the
 * kernel takes: bpfu_variant.c), attach it, and turn what its ring buffer
 * carries into the kernel's own ftrace records (seed 004 patch 9 layout),
 * so that a trace recorded this way reads exactly like one recorded on a
 * kernel with userstacktrace_delay.
 *
 * What the kernel refuses is degraded, never fatal while something smaller
 * still works: task_work refused (or absent) -> the variant without it
 * (stacks outside system calls taken at the event); the CFI walk refused ->
 * the frame-pointer walk.  Each step is said in one line
 * (ust_bpfu_notes()), the verifier's log in a file that line names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "ustitch/bpfload.h"
#include "ustitch/bpfu.h"
#include "ustitch/encode.h"
#include "ustitch/hmap.h"
#include "ustitch/kbits.h"
#include "ustitch/resolve.h"

#ifdef UST_HAVE_BPF

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* libbpf 1.1 skeletons may name these without defining them. */
typedef __u32 u32;
typedef __u64 u64;
#include "ust_bpfu.skel.h"
#include "ust_bpfu_abi.h"
#include "bpfu_cfi.h"
#include "bpfu_variant.h"
#include "bpfu_raw.h"
#include "bpfu_park.h"
#include "kbtf.h"

_Static_assert(UST_BPFU_STACK_IMMEDIATE == UST_BPFU_F_IMMEDIATE &&
	       UST_BPFU_STACK_SCHED_FAIL == UST_BPFU_F_SCHED_FAIL &&
	       UST_BPFU_STACK_EXIT == UST_BPFU_F_EXIT &&
	       UST_BPFU_STACK_TRUNCATED == UST_BPFU_F_TRUNCATED &&
	       UST_BPFU_STACK_RAW == UST_BPFU_F_RAW &&
	       UST_BPFU_STACK_LEAF_RET == UST_BPFU_F_LEAF_RET &&
	       UST_BPFU_STACK_LATE == UST_BPFU_F_LATE &&
	       UST_BPFU_STACK_CFI == UST_BPFU_F_CFI && UST_BPFU_STACK_FP == UST_BPFU_F_FP &&
	       UST_BPFU_STACK_BOTTOM == UST_BPFU_F_BOTTOM &&
	       UST_BPFU_STACK_NO_TABLE == UST_BPFU_F_NO_TABLE &&
	       UST_BPFU_STACK_BAD_CFA == UST_BPFU_F_BAD_CFA &&
	       UST_BPFU_STACK_FAULT == UST_BPFU_F_FAULT &&
	       UST_BPFU_STACK_NO_UNWIND == UST_BPFU_F_NO_UNWIND &&
	       UST_BPFU_STACK_NOT_EXEC == UST_BPFU_F_NOT_EXEC &&
	       UST_BPFU_STACK_LATER == UST_BPFU_F_PARKED,
	       "public stack flags follow the BPF ones");
_Static_assert(UST_BPFU_MAX_STACK == UST_BPFU_MAX_FRAMES, "one frame limit");
_Static_assert(UST_BPFU_STACK_IMMEDIATE == UST_ABI_STACK_F_IMMEDIATE &&
	       UST_BPFU_STACK_SCHED_FAIL == UST_ABI_STACK_F_SCHED_FAIL &&
	       UST_BPFU_STACK_EXIT == UST_ABI_STACK_F_EXIT &&
	       UST_BPFU_STACK_TRUNCATED == UST_ABI_STACK_F_TRUNCATED &&
	       UST_BPFU_STACK_RAW == UST_ABI_STACK_F_RAW &&
	       UST_BPFU_STACK_CFI == UST_ABI_STACK_F_CFI && UST_BPFU_STACK_FP == UST_ABI_STACK_F_FP &&
	       UST_BPFU_STACK_BOTTOM == UST_ABI_STACK_F_BOTTOM &&
	       UST_BPFU_STACK_NO_TABLE == UST_ABI_STACK_F_NO_TABLE &&
	       UST_BPFU_STACK_BAD_CFA == UST_ABI_STACK_F_BAD_CFA &&
	       UST_BPFU_STACK_FAULT == UST_ABI_STACK_F_FAULT &&
	       UST_BPFU_STACK_NO_UNWIND == UST_ABI_STACK_F_NO_UNWIND &&
	       UST_BPFU_STACK_NOT_EXEC == UST_ABI_STACK_F_NOT_EXEC &&
	       UST_BPFU_STACK_LATER == UST_ABI_STACK_F_LATER,
	       "stack_flags records carry the public stack flags as they are");

#define UST_BPFU_RB_DEFAULT	(8u << 20)
/*
 * Rows for every file's unwind table, 16 bytes each (32 MiB): libc has
 * 28k, python3 and its libraries 105k, libLLVM-14 950k, everything a
 * 2-core VM's processes map about 900k.
 */
#define UST_BPFU_CFI_ROWS	(2u << 20)
/* user_unwind_stack: header, then unsigned long stack[], inodes[], u32 dev[]. */
#define UST_BPFU_FRAME_BYTES	(8 + 8 + 4)
#define UST_BPFU_STACK_MAX_SIZE	(UST_ABI_STACK_HDR_SIZE + UST_BPFU_MAX_FRAMES * UST_BPFU_FRAME_BYTES)
/*
 * A parked stack waits this long for its tables, then walks on by frame
 * pointers: a table is built in 0.5-1200 ms (cc1plus cold, unloaded), and
 * several times that when the workload takes the CPUs (`make -j2`: cc1's
 * tables came after 2 s, and 237 of 550 parked stacks gave up); the
 * recorder writes its spool sorted at the end, so waiting costs memory
 * only, which UST_BPFU_PARK_QUEUE bounds.  The end of a recording waits
 * as long for builds in flight (a progress line shows a long one).
 */
#define UST_BPFU_PARK_WAIT_NS	(30ULL * 1000 * 1000 * 1000)
#define UST_BPFU_PARK_QUEUE	(64u << 20)

struct ust_bpfu {
	struct ust_bpfu_skel *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	size_t nr_links;
	struct ust_bpfu_cfi *cfi;	/* NULL: frame pointers only */
	bool deferred;		/* cookies per kernel entry (not opts.immediate) */
	bool task_work;		/* the variant with task_work loaded */
	bool walk_cfi;		/* the variant with the CFI walk loaded */
	bool keeps_vmas;	/* walks keep VMAs from one to the next (ust_bpfu_keeps_vmas()) */
	bool preempt_off;	/* programs on system-call tracepoints turn preemption off */
	struct ust_bpfu_run run;	/* what ust_bpfu_run holds */
	bool af_only;		/* opts.af_only */
	bool no_exit_stacks;	/* opts.no_exit_stacks */
	bool sc_enter_on;	/* ust_bpfu_sys_enter is attached */
	/* sys_exit_* events left to ust_bpfu_sys_exit, attached by ust_bpfu_arm_exit() */
	char **sc_exits;
	size_t nr_sc_exits;
	char note[256];		/* why immediate (opts.immediate, af_only) */
	char notes[768];	/* what the kernel refused, and what instead */
	unsigned int note_kinds;	/* UST_BPFU_NOTE_*: which of them */
	struct ust_bpfload_report load;	/* the loaded variant's */
	uint16_t cookie_type;
	uint16_t stack_type;
	ust_bpfu_rec_fn fn;
	void *fn_ctx;
	uint64_t records;
	uint64_t cookie_records;
	uint64_t stack_records;
	uint64_t bad_records;
	struct ust_hmap last;	/* tid -> struct ust_bpfu_last * */
	struct ust_bpfu_raw *raw;	/* frames left as addresses, named from /proc */
	ust_bpfu_exec_fn exec_fn;	/* ust_bpfu_on_exec() */
	void *exec_ctx;
	struct ust_bpfu_park *park;	/* parked walks finished here (NULL: no CFI) */
	uint64_t repeats;	/* stacks sent again as their task's last */
	uint64_t repeats_lost;	/* ... whose last stack never arrived */
	/* One record at a time: the callback gets it before the next is made. */
	unsigned char out[UST_BPFU_STACK_MAX_SIZE] __attribute__((aligned(8)));
};

bool ust_bpfu_built(void)
{
	return true;
}

static size_t ust_bpfu_make_cookie(struct ust_bpfu *u, const struct ust_bpfu_rec_hdr *h)
{
	return (size_t)ust_enc_unwind_cookie(u->out, sizeof(u->out), u->cookie_type,
					     (int)h->tid, h->cookie);
}

/*
 * trace_user_unwind_callback() of patch 9, byte for byte (layout: ust_enc),
 * into u->out; @rec's arrays point at the record's.
 */
static size_t ust_bpfu_make_stack(struct ust_bpfu *u, const struct ust_bpfu_rec_hdr *h,
				  uint32_t flags, const struct ust_bpfu_frame *frames,
				  unsigned int nr, struct ust_bpfu_rec *rec)
{
	uint64_t o[UST_BPFU_MAX_FRAMES], in[UST_BPFU_MAX_FRAMES], *offs, *inodes;
	uint32_t d[UST_BPFU_MAX_FRAMES], raw[UST_BPFU_MAX_FRAMES], *devs;
	struct ust_enc_stack_arrays a;
	unsigned int i, keep;
	int len;

	if (nr > UST_BPFU_MAX_FRAMES)
		nr = UST_BPFU_MAX_FRAMES;
	for (i = 0; i < nr; i++) {
		o[i] = frames[i].off;
		in[i] = frames[i].ino;
		d[i] = frames[i].dev;
		raw[i] = frames[i].raw;
	}
	/*
	 * The walk could not name some frame's file: the process can, or the
	 * stack ends before that frame (an address nothing placed in code is
	 * no caller).
	 */
	if ((flags & UST_BPFU_F_RAW) && u->raw) {
		keep = ust_bpfu_raw_resolve(u->raw, (pid_t)h->tgid, raw, o, in, d, nr);
		/* Cut: how the walk went on from there is no longer this stack's end. */
		if (keep < nr)
			rec->flags = (rec->flags & ~(UST_BPFU_STACK_BOTTOM | UST_BPFU_STACK_BAD_CFA |
						     UST_BPFU_STACK_FAULT | UST_BPFU_STACK_NO_UNWIND |
						     UST_BPFU_STACK_TRUNCATED)) |
				     UST_BPFU_STACK_NOT_EXEC;
		rec->flags &= ~UST_BPFU_STACK_RAW;
		for (i = 0; i < keep; i++)
			if (raw[i] && !in[i])
				rec->flags |= UST_BPFU_STACK_RAW;	/* frame 0 left an address */
		nr = keep;
	}
	rec->nr = nr;
	len = ust_enc_unwind_stack(u->out, sizeof(u->out), u->stack_type, (int)h->tid,
				   h->cookie, nr, &a);
	/* u->out holds UST_BPFU_MAX_FRAMES frames, and nr is capped there. */
	if (len < 0)
		return 0;
	/* The arrays are 8-byte aligned: u->out is, and so are their offsets. */
	offs = (void *)a.offs;
	inodes = (void *)a.inodes;
	devs = (void *)a.devs;
	memcpy(offs, o, nr * sizeof(*o));
	memcpy(inodes, in, nr * sizeof(*in));
	memcpy(devs, d, nr * sizeof(*d));
	rec->offs = offs;
	rec->inodes = inodes;
	rec->devs = devs;
	return (size_t)len;
}

/* A STACK record is as long as its frames (UST_BPFU_STACK_REC_SIZE), an AGAIN one has none. */
static bool ust_bpfu_stack_fits(const void *data, size_t size)
{
	const struct ust_bpfu_rec_stack *s = data;

	return size >= UST_BPFU_STACK_REC_SIZE(0) && s->nr <= UST_BPFU_MAX_FRAMES &&
	       (size >= UST_BPFU_STACK_REC_SIZE(s->nr) || (s->flags & UST_BPFU_F_AGAIN));
}

/* A task's last stack, for the records that send it again (UST_BPFU_F_AGAIN). */
struct ust_bpfu_last {
	uint64_t seq;
	uint32_t nr;
	uint32_t cap;
	struct ust_bpfu_frame frames[];
};

/*
 * The frames of stack record @s: its own, kept as its task's last; or, for
 * one that sends the task's last stack again, that one's.  NULL when that
 * one never arrived (its record was lost: seq says) or memory ran out.
 */
static const struct ust_bpfu_frame *ust_bpfu_frames(struct ust_bpfu *u,
						    const struct ust_bpfu_rec_stack *s)
{
	struct ust_bpfu_last *l = NULL;
	uint64_t v;

	if (ust_hmap_get(&u->last, s->h.tid, &v))
		l = (struct ust_bpfu_last *)(uintptr_t)v;
	if (s->flags & UST_BPFU_F_AGAIN) {
		if (!l || l->seq + 1 != s->seq || l->nr != s->nr) {
			u->repeats_lost++;
			return NULL;
		}
		l->seq = s->seq;
		u->repeats++;
		return l->frames;
	}
	if (!l || l->cap < s->nr) {
		uint32_t cap = s->nr < 32 ? 32 : s->nr;
		struct ust_bpfu_last *n = realloc(l, sizeof(*l) + cap * sizeof(l->frames[0]));

		if (!n)
			return s->frames;	/* this one is whole; the next again may be lost */
		n->cap = cap;
		l = n;
		if (ust_hmap_put(&u->last, s->h.tid, (uint64_t)(uintptr_t)l)) {
			free(l);
			return s->frames;
		}
	}
	l->seq = s->seq;
	l->nr = s->nr;
	memcpy(l->frames, s->frames, s->nr * sizeof(l->frames[0]));
	return s->frames;
}

/* A stack's record for the callback, from its walk's header, flags and frames. */
static int ust_bpfu_emit_stack(void *ctx, const struct ust_bpfu_rec_hdr *h, uint32_t flags,
			       const struct ust_bpfu_frame *frames, uint32_t nr)
{
	struct ust_bpfu *u = ctx;
	struct ust_bpfu_rec rec = { 0 };

	rec.kind = UST_BPFU_STACK;
	rec.cpu = h->cpu;
	rec.ts = h->ts;		/* the walk's: the spool puts a stack finished later in its place */
	rec.tid = (pid_t)h->tid;
	rec.tgid = (pid_t)h->tgid;
	rec.cookie = h->cookie;
	rec.data = u->out;
	rec.flags = flags & ~(UST_BPFU_F_REQUEST | UST_BPFU_F_AGAIN);
	rec.nr = nr;
	rec.size = ust_bpfu_make_stack(u, h, flags, frames, rec.nr, &rec);
	u->stack_records++;
	u->records++;
	return u->fn ? u->fn(&rec, u->fn_ctx) : 0;
}

static uint64_t ust_bpfu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The program an EXEC record is of, into @buf: /proc/TGID/exe while the
 * process lives, else the record's file name where the file there is the
 * one the kernel mapped (code[0]'s dev and inode; a relative name or a
 * script's is not).  false: neither.
 */
static bool exec_path(const struct ust_bpfu_rec_exec *x, char *buf, size_t len)
{
	char link[64];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/exe", x->h.tgid);
	n = readlink(link, buf, len - 1);
	if (n > 0) {
		buf[n] = '\0';
		return true;
	}
	if (x->path[0] != '/' || memchr(x->path, '\0', sizeof(x->path)) == NULL ||
	    stat(x->path, &st) || st.st_ino != x->code[0].ino ||
	    ust_res_dev_to_kdev(st.st_dev) != x->code[0].dev)
		return false;
	snprintf(buf, len, "%s", x->path);
	return true;
}

static int ust_bpfu_sample(void *ctx, void *data, size_t size)
{
	struct ust_bpfu *u = ctx;
	const struct ust_bpfu_rec_hdr *h = data;
	struct ust_bpfu_rec rec = { 0 };

	if (size < sizeof(*h)) {
		u->bad_records++;
		return 0;
	}
	rec.cpu = h->cpu;
	rec.ts = h->ts;
	rec.tid = (pid_t)h->tid;
	rec.tgid = (pid_t)h->tgid;
	rec.cookie = h->cookie;
	rec.data = u->out;
	if (h->kind == UST_BPFU_REC_COOKIE) {
		rec.kind = UST_BPFU_COOKIE;
		rec.size = ust_bpfu_make_cookie(u, h);
		u->cookie_records++;
	} else if (h->kind == UST_BPFU_REC_SAMPLE && size >= sizeof(struct ust_bpfu_rec_sample)) {
		const struct ust_bpfu_rec_sample *sm = data;

		/* The sample's cookie, as the cookie record the kernel would write. */
		rec.kind = UST_BPFU_SAMPLE;
		rec.size = ust_bpfu_make_cookie(u, h);
		rec.ip = sm->ip;
		rec.period = sm->period;
		rec.flags = sm->flags & UST_BPFU_S_DROPPED_BEFORE ? UST_BPFU_SAMPLE_GAP : 0;
		u->cookie_records++;
	} else if (h->kind == UST_BPFU_REC_NEED_CFI && size >= sizeof(struct ust_bpfu_rec_need)) {
		/*
		 * Ours, not the caller's: the walk wants a file's table, or
		 * the process just mapped it.  Its walks park meanwhile: the
		 * process's maps, read again now while it lives (that file is
		 * new in them), place the frames their copies lead to.
		 */
		if (u->cfi) {
			ust_bpfu_raw_reread(u->raw, (pid_t)h->tgid);
			ust_bpfu_cfi_need(u->cfi, data);
		}
		return 0;
	} else if (h->kind == UST_BPFU_REC_PARK && ust_bpfu_park_fits(data, size)) {
		/* Ours too: the copy its task's next STACK record (parked) goes on from. */
		if (u->park) {
			ust_bpfu_raw_note(u->raw, (pid_t)h->tgid);
			ust_bpfu_park_keep(u->park, data, size);
		}
		return 0;
	} else if (h->kind == UST_BPFU_REC_MAP && size >= sizeof(struct ust_bpfu_rec_map)) {
		const struct ust_bpfu_park_vma *v = &((const struct ust_bpfu_rec_map *)data)->vma;

		ust_bpfu_raw_map(u->raw, (pid_t)h->tgid, v->start, v->end, v->pgoff, v->ino, v->dev);
		return 0;
	} else if (h->kind == UST_BPFU_REC_EXEC && size >= sizeof(struct ust_bpfu_rec_exec)) {
		const struct ust_bpfu_rec_exec *x = data;
		char prog[4096];

		ust_bpfu_raw_exec(u->raw, (pid_t)h->tgid);
		/* The code the kernel mapped, which no MAP record tells of. */
		for (unsigned int i = 0; i < UST_BPFU_EXEC_VMAS; i++)
			ust_bpfu_raw_map(u->raw, (pid_t)h->tgid, x->code[i].start, x->code[i].end,
					 x->code[i].pgoff, x->code[i].ino, x->code[i].dev);
		/*
		 * The new program's maps, read first, while it surely lives: a
		 * walk that parks in a library it maps later is finished
		 * through the program's own frames, which the walk need not
		 * have looked up (a short-lived process is gone by then).
		 */
		if (u->cfi)
			ust_bpfu_raw_note(u->raw, (pid_t)h->tgid);
		if (exec_path(x, prog, sizeof(prog))) {
			if (u->cfi)
				ust_bpfu_cfi_exec(u->cfi, prog);
			if (u->exec_fn)
				u->exec_fn((pid_t)h->tgid, prog, x->code[0].dev, x->code[0].ino,
					   u->exec_ctx);
		}
		return 0;
	} else if (h->kind == UST_BPFU_REC_STACK && ust_bpfu_stack_fits(data, size)) {
		const struct ust_bpfu_rec_stack *s = data;

		if (s->flags & UST_BPFU_F_REQUEST) {
			/* First the request it carries: the cookie record of its event. */
			struct ust_bpfu_rec ck = rec;
			int ret;

			ck.kind = UST_BPFU_COOKIE;
			ck.size = ust_bpfu_make_cookie(u, h);
			u->cookie_records++;
			u->records++;
			ret = u->fn ? u->fn(&ck, u->fn_ctx) : 0;
			if (ret)
				return ret;
		}
		const struct ust_bpfu_frame *frames = ust_bpfu_frames(u, s);

		/* A stack whose frames went with a lost record: lost with it. */
		if (!frames)
			return 0;
		/* Parked: finished here, now or once its tables are built. */
		if ((s->flags & UST_BPFU_F_PARKED) && u->park)
			return ust_bpfu_park_stack(u->park, s, frames, ust_bpfu_now_ns(),
						   ust_bpfu_emit_stack, u);
		return ust_bpfu_emit_stack(u, h, s->flags & ~UST_BPFU_F_PARKED, frames, s->nr);
	} else {
		u->bad_records++;
		return 0;
	}
	u->records++;
	return u->fn ? u->fn(&rec, u->fn_ctx) : 0;
}

/* An environment switch set to anything but "" or "0". */
static bool ust_bpfu_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static size_t ust_bpfu_rb_size(size_t want)
{
	size_t sz = 4096;

	if (!want)
		want = UST_BPFU_RB_DEFAULT;
	while (sz < want && sz < ((size_t)1 << 30))
		sz <<= 1;
	return sz;
}

uint64_t ust_bpfu_wake_bytes(size_t ring_bytes)
{
	int ncpu = libbpf_num_possible_cpus();

	/* The ring an eighth full at most when no CPU has woken the reader. */
	return ring_bytes / 8 / (uint64_t)(ncpu > 0 ? ncpu : 1);
}

/* Every CPU's counter of ust_bpfu_ctr starts at @base. */
static int ust_bpfu_set_ctr(struct ust_bpfu_skel *skel, uint64_t base)
{
	int ncpu = libbpf_num_possible_cpus(), ret, i;
	__u32 key = 0;
	__u64 *v;

	if (ncpu <= 0) {
		errno = EINVAL;
		return -1;
	}
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < ncpu; i++)
		v[i] = base;
	ret = bpf_map__update_elem(skel->maps.ust_bpfu_ctr, &key, sizeof(key), v,
				   (size_t)ncpu * sizeof(*v), BPF_ANY);
	free(v);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* What the sample filter of bpf/addrfilter.bpf.h tests, before load. */
static void ust_bpfu_set_af(struct ust_bpfu_skel *skel, const struct ust_af *af)
{
	int i;

	if (!af || !af->nr)
		return;
	skel->rodata->ust_af_samples = true;
	skel->rodata->ust_af_nr = (__u32)af->nr;
	for (i = 0; i < af->nr; i++) {
		if (af->r[i].action != UST_AF_FILTER)
			skel->rodata->ust_af_sample_switch = true;
		else if (af->r[i].kernel)
			skel->rodata->ust_af_sample_filters = true;
		else
			skel->rodata->ust_af_sample_filters = skel->rodata->ust_af_sample_files = true;
	}
}

/* The kernel's own walk (kernel_frames) is by frame pointers only. */
static bool ust_bpfu_want_cfi(const struct ust_bpfu_opts *o)
{
	return !o->no_cfi && !o->kernel_frames && !o->af_only;
}

/*
 * Open and load the variant (@cfi, @tw) with what @o asks for; @stats:
 * measure each program's verification (ust_bpfu_verify()).  @rep: the
 * load's report.  NULL with @err set (one line) when the kernel refuses.
 */
static struct ust_bpfu_skel *ust_bpfu_load(bool cfi, enum ust_bpfu_tw tw, bool imm, bool preempt,
					   const struct ust_bpfu_opts *o, bool stats,
					   struct ust_bpfload_report *rep, char *err, size_t errlen)
{
	struct ust_bpfu_skel *skel = ust_bpfu_variant_open(cfi, tw);
	bool tp = !o->af_only && !o->no_events && !o->no_tracepoints;
	struct ust_bpfload l;
	char what[96];
	size_t rb;
	int ret;

	if (!skel) {
		snprintf(err, errlen, "opening the BPF object: %s", strerror(errno));
		return NULL;
	}
	/* One event program of the two, or only the sample filter. */
	bpf_program__set_autoload(skel->progs.ust_bpfu_event, !imm && tp);
	/* Without task_work every event, system calls too, is this one's. */
	bpf_program__set_autoload(skel->progs.ust_bpfu_event_imm, imm && !o->af_only && !o->no_events);
	bpf_program__set_autoload(skel->progs.ust_bpfu_later,
				  !imm && !o->af_only && !o->no_events && !o->no_later);
	bpf_program__set_autoload(skel->progs.ust_bpfu_fork, !o->no_children && !o->af_only);
	bpf_program__set_autoload(skel->progs.ust_bpfu_exit, !o->af_only);
	bpf_program__set_autoload(skel->progs.ust_bpfu_exec, cfi && ust_bpfu_want_cfi(o));
	bpf_program__set_autoload(skel->progs.ust_bpfu_sys_exit, !imm && !o->af_only);
	bpf_program__set_autoload(skel->progs.ust_bpfu_sys_enter,
				  !imm && !o->af_only && !o->no_events && !o->no_sys_enter);
	bpf_program__set_autoload(skel->progs.ust_bpfu_perf, o->perf && !imm && !o->af_only);
	bpf_program__set_autoload(skel->progs.ust_bpfu_perf_af, o->perf && o->af_only);
	/* Attached by lib/record/af_bpf.c for start/stop ranges. */
	bpf_program__set_autoload(skel->progs.ust_af_start, o->af && o->af->nr);
	bpf_program__set_autoload(skel->progs.ust_af_stop, o->af && o->af->nr);
	skel->rodata->ust_leaf_ret = !o->kernel_frames;
	skel->rodata->ust_preempt_off = preempt;
	skel->rodata->ust_ignore_tgid = o->ignore_tgid;
	skel->rodata->ust_cfi_on = cfi && ust_bpfu_want_cfi(o);
	/* Walks park at a file without its table, for bpfu_park.c to finish (test aid: USTITCH_NO_PARK=1). */
	skel->rodata->ust_park_on = skel->rodata->ust_cfi_on && !ust_bpfu_env_on("USTITCH_NO_PARK");
	/*
	 * A park's working copy per CPU (33 KiB each); without one, parks
	 * copy the stack whole (test aid: USTITCH_PARK_WHOLE=1).
	 */
	if (skel->rodata->ust_park_on && !ust_bpfu_env_on("USTITCH_PARK_WHOLE") &&
	    libbpf_num_possible_cpus() > 0)
		bpf_map__set_max_entries(skel->maps.ust_bpfu_park_bufs, (__u32)libbpf_num_possible_cpus());
	bpf_map__set_max_entries(skel->maps.ust_bpfu_cfi_rows, !skel->rodata->ust_cfi_on ? 1 :
				 o->cfi_rows ? o->cfi_rows : UST_BPFU_CFI_ROWS);
	/* Task_work slots only where a variant schedules them. */
	if (tw == UST_BPFU_TW_NONE)
		bpf_map__set_max_entries(skel->maps.ust_bpfu_works, 1);
	ust_bpfu_set_af(skel, o->perf ? o->af : NULL);
	rb = ust_bpfu_rb_size(o->ringbuf_bytes);
	skel->rodata->ust_rb_wake_bytes = ust_bpfu_wake_bytes(rb);
	bpf_map__set_max_entries(skel->maps.ust_bpfu_events, (__u32)rb);
	snprintf(what, sizeof(what), "the unwinder (%s)", ust_bpfu_variant_name(cfi, tw));
	ret = ust_bpfload_begin(&l, skel->obj, stats);
	if (!ret)
		ret = ust_bpfu_skel__load(skel);
	ret = ust_bpfload_end(&l, ret, what, rep, err, errlen);
	if (ret) {
		ust_bpfu_skel__destroy(skel);
		errno = -ret;
		return NULL;
	}
	if (o->cookie_ctr_base && ust_bpfu_set_ctr(skel, o->cookie_ctr_base)) {
		snprintf(err, errlen, "setting the cookie counters: %s", strerror(errno));
		ust_bpfu_skel__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Appends a line to u->notes. */
__attribute__((format(printf, 2, 3)))
static void ust_bpfu_note(struct ust_bpfu *u, const char *fmt, ...)
{
	size_t len = strlen(u->notes);
	va_list ap;

	if (len && len + 2 < sizeof(u->notes))
		u->notes[len++] = ';', u->notes[len++] = ' ', u->notes[len] = '\0';
	va_start(ap, fmt);
	vsnprintf(u->notes + len, sizeof(u->notes) - len, fmt, ap);
	va_end(ap);
}

/*
 * The variant the kernel takes, degrading step by step: without
 * task_work, then by frame pointers.  Sets u->skel, u->task_work,
 * u->walk_cfi, u->notes; 0, or -1 with @err when nothing loads.
 */
static int ust_bpfu_load_best(struct ust_bpfu *u, const struct ust_bpfu_opts *o, char *err,
			      size_t errlen)
{
	bool imm = !u->deferred;
	bool cfi = ust_bpfu_want_cfi(o);
	char why[512];
	enum ust_bpfu_tw tw = imm || o->af_only ? UST_BPFU_TW_NONE : ust_bpfu_variant_tw(why, sizeof(why));

	u->preempt_off = ust_bpfu_variant_faultable();
	if (!imm && !o->af_only && tw == UST_BPFU_TW_NONE) {
		ust_bpfu_note(u, "no BPF task_work: %s", why);
		u->note_kinds |= UST_BPFU_NOTE_TW_ABSENT;
	}
	if (tw != UST_BPFU_TW_NONE && ust_bpfu_variant_refused(cfi, tw, why, sizeof(why))) {
		ust_bpfu_note(u, "no BPF task_work: %s", why);
		u->note_kinds |= UST_BPFU_NOTE_TW_REMEMBERED;
		tw = UST_BPFU_TW_NONE;
	}
	for (;;) {
		u->skel = ust_bpfu_load(cfi, tw, imm, u->preempt_off, o, false, &u->load, why,
					sizeof(why));
		if (u->skel)
			break;
		if (u->preempt_off && strstr(why, "preemption disabled")) {
			/* A kernel with faultable tracepoints but 6.12's rule. */
			ust_bpfu_note(u, "programs on system-call tracepoints left preemptible: %s", why);
			u->note_kinds |= UST_BPFU_NOTE_PREEMPTIBLE;
			u->preempt_off = false;
		} else if (tw != UST_BPFU_TW_NONE) {
			/* The kfunc's own refusal, not another program's: the same next time. */
			if (strstr(why, "bpf_task_work_schedule_resume"))
				ust_bpfu_variant_remember_refused(cfi, tw, why);
			ust_bpfu_note(u, "no BPF task_work: %s", why);
			u->note_kinds |= UST_BPFU_NOTE_TW_REFUSED;
			tw = UST_BPFU_TW_NONE;
		} else if (cfi) {
			ust_bpfu_note(u, "no CFI walk, frame pointers instead: %s", why);
			u->note_kinds |= UST_BPFU_NOTE_NO_CFI;
			cfi = false;
		} else {
			snprintf(err, errlen, "%s", why);
			return -1;
		}
	}
	u->task_work = tw != UST_BPFU_TW_NONE;
	u->walk_cfi = cfi;
	return 0;
}

/*
 * Does the kernel's mm carry the mmap_lock write sequence (mm->mm_lock_seq
 * a seqcount_t, 6.13+)?  Then a task's walks keep the VMAs they found
 * while it holds (bpf/bpfu_vma.bpf.h), and samples, which may look up only
 * one VMA each (bpf_find_vma() with interrupts off must release the mmap
 * lock through an irq_work, busy until it has run), still resolve every
 * frame once a task's first samples found its files.
 */
static bool ust_bpfu_mm_seq_btf(void)
{
	const struct btf *btf = ust_kbtf();
	const struct btf_type *t;
	const struct btf_member *m;
	bool yes = false;
	int id, i;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "mm_struct", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	/* mm_lock_seq sits in an anonymous struct: one level down too. */
	for (i = 0; t && i < btf_vlen(t) && !yes; i++) {
		const struct btf_type *mt;

		m = btf_members(t) + i;
		mt = btf__type_by_id(btf, m->type);
		if (!strcmp(btf__name_by_offset(btf, m->name_off), "mm_lock_seq")) {
			while (mt && btf_is_typedef(mt))
				mt = btf__type_by_id(btf, mt->type);
			yes = mt && btf_is_struct(mt);
		} else if (mt && btf_is_composite(mt) && !m->name_off) {
			int j;

			for (j = 0; j < btf_vlen(mt) && !yes; j++) {
				const struct btf_member *mm = btf_members(mt) + j;
				const struct btf_type *t2 = btf__type_by_id(btf, mm->type);

				if (strcmp(btf__name_by_offset(btf, mm->name_off), "mm_lock_seq"))
					continue;
				while (t2 && btf_is_typedef(t2))
					t2 = btf__type_by_id(btf, t2->type);
				yes = t2 && btf_is_struct(t2);
			}
		}
	}
	return yes;
}

/* ust_bpfu_run, from u->run. */
static int ust_bpfu_set_run(struct ust_bpfu *u)
{
	__u32 key = 0;

	return bpf_map__update_elem(u->skel->maps.ust_bpfu_run, &key, sizeof(key), &u->run,
				    sizeof(u->run), BPF_ANY);
}

static int ust_bpfu_add_link(struct ust_bpfu *u, struct bpf_link *l)
{
	struct bpf_link **n = realloc(u->links, (u->nr_links + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	u->links = n;
	u->links[u->nr_links++] = l;
	return 0;
}

/* Owns @l (NULL: attaching failed) from here on; also for ust_af_bpf_setup(). */
static int ust_bpfu_keep_link(void *u, struct bpf_link *l)
{
	int ret;

	if (!l)
		return -errno;
	ret = ust_bpfu_add_link(u, l);
	if (ret)
		bpf_link__destroy(l);
	return ret;
}

/* What bpfu_park.c finishes parked walks with: our tables, the process's maps. */
static int ust_bpfu_park_table(void *ctx, uint32_t dev, uint64_t ino,
			       const struct ust_cfi_table **t)
{
	return ust_bpfu_cfi_table_of(((struct ust_bpfu *)ctx)->cfi, dev, ino, t);
}

static bool ust_bpfu_park_place(void *ctx, uint32_t tgid, uint64_t addr, uint64_t *off,
				uint64_t *ino, uint32_t *dev)
{
	return ust_bpfu_raw_place(((struct ust_bpfu *)ctx)->raw, (pid_t)tgid, addr, off, ino, dev);
}

static void ust_bpfu_park_need(void *ctx, uint32_t tgid, const struct ust_bpfu_park_vma *v)
{
	struct ust_bpfu_rec_need n = { .ino = v->ino, .dev = v->dev, .vm_start = v->start,
				       .vm_end = v->end, .vm_pgoff = v->pgoff };

	n.h.kind = UST_BPFU_REC_NEED_CFI;
	n.h.tgid = tgid;
	ust_bpfu_cfi_need(((struct ust_bpfu *)ctx)->cfi, &n);
}

struct ust_bpfu *ust_bpfu_open(const struct ust_bpfu_opts *opts, char *err, size_t errlen)
{
	struct ust_bpfu_opts none = { 0 };
	const struct ust_bpfu_opts *o = opts ? opts : &none;
	struct ust_bpfu *u;
	struct bpf_link *l;

	u = calloc(1, sizeof(*u));
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ust_hmap_init(&u->last);
	u->raw = ust_bpfu_raw_new();	/* NULL: raw frames stay addresses */
	u->cookie_type = o->cookie_type;
	u->stack_type = o->stack_type;
	u->af_only = o->af_only;
	u->no_exit_stacks = o->no_exit_stacks;
	u->deferred = !o->af_only && !o->immediate;
	if (o->af_only)
		snprintf(u->note, sizeof(u->note), "no stacks: the address filter only");
	else if (o->immediate)
		snprintf(u->note, sizeof(u->note), "immediate stacks requested");
	u->keeps_vmas = ust_bpfu_mm_seq_btf();
	if (ust_bpfu_load_best(u, o, err, errlen) || ust_bpfu_set_run(u)) {
		if (u->skel)
			snprintf(err, errlen, "setting the unwinder's switches: %s", strerror(errno));
		goto fail;
	}
	u->rb = ring_buffer__new(bpf_map__fd(u->skel->maps.ust_bpfu_events), ust_bpfu_sample, u,
				 NULL);
	if (!u->rb) {
		snprintf(err, errlen, "BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (u->walk_cfi && ust_bpfu_want_cfi(o)) {
		u->cfi = ust_bpfu_cfi_new(bpf_map__fd(u->skel->maps.ust_bpfu_cfi_rows),
					  bpf_map__fd(u->skel->maps.ust_bpfu_cfi_files),
					  bpf_map__max_entries(u->skel->maps.ust_bpfu_cfi_rows),
					  err, errlen);
		if (!u->cfi)
			goto fail;
		ust_bpfu_cfi_add_vdso(u->cfi);
		u->park = ust_bpfu_park_new(&(struct ust_bpfu_park_env){
						.table = ust_bpfu_park_table,
						.place = ust_bpfu_park_place,
						.need = ust_bpfu_park_need,
						.ctx = u },
					    UST_BPFU_PARK_WAIT_NS, UST_BPFU_PARK_QUEUE);
		if (!u->park) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (o->perf && o->af && ust_af_bpf_setup(u->skel->obj, ust_bpfu_keep_link, u, o->af, err,
						  errlen))
		goto fail;
	if (o->af_only)
		return u;
	l = bpf_program__attach_tracepoint(u->skel->progs.ust_bpfu_exit, "sched",
					   "sched_process_exit");
	if (!l || ust_bpfu_add_link(u, l)) {
		snprintf(err, errlen, "attaching to sched:sched_process_exit: %s", strerror(errno));
		bpf_link__destroy(l);
		goto fail;
	}
	if (u->cfi) {
		l = bpf_program__attach_tracepoint(u->skel->progs.ust_bpfu_exec, "sched",
						   "sched_process_exec");
		if (!l || ust_bpfu_add_link(u, l)) {
			snprintf(err, errlen, "attaching to sched:sched_process_exec: %s",
				 strerror(errno));
			bpf_link__destroy(l);
			goto fail;
		}
	}
	if (!o->no_children) {
		l = bpf_program__attach_raw_tracepoint(u->skel->progs.ust_bpfu_fork,
						       "sched_process_fork");
		if (!l || ust_bpfu_add_link(u, l)) {
			snprintf(err, errlen, "attaching to raw sched_process_fork: %s",
				 strerror(errno));
			bpf_link__destroy(l);
			goto fail;
		}
	}
	return u;
fail:
	ust_bpfu_close(u);
	return NULL;
}

static void ust_bpfu_sc_set(volatile __u64 *set, int nr)
{
	set[nr / 64] |= 1ULL << (nr % 64);
}

/*
 * A syscalls:sys_enter_NAME / sys_exit_NAME event, given its cookies by
 * the raw sys_enter / sys_exit program and the set of numbers (see
 * bpfu.bpf.c): 0, or -ENOENT when it is not such an event, or its
 * number is not known (kernel-bits/syscalls/x86_64), and the event needs
 * a tracepoint program of its own.
 */
static int ust_bpfu_attach_syscall(struct ust_bpfu *u, const char *system, const char *event)
{
	bool enter = !strncmp(event, "sys_enter_", 10);
	char **n;
	int nr;

	if (!u->deferred || u->af_only || strcmp(system, "syscalls") ||
	    (!enter && strncmp(event, "sys_exit_", 9)))
		return -ENOENT;
	nr = ust_kbits_syscall_nr(event + (enter ? 10 : 9));
	if (nr < 0 || nr >= UST_BPFU_NR_SYSCALLS)
		return -ENOENT;
	if (enter) {
		if (!bpf_program__autoload(u->skel->progs.ust_bpfu_sys_enter))
			return -EINVAL;		/* opened with opts.no_sys_enter */
		/* Now, as the tracepoint programs are: after ftrace's probe. */
		if (!u->sc_enter_on) {
			int ret = ust_bpfu_keep_link(u, bpf_program__attach_raw_tracepoint(
						     u->skel->progs.ust_bpfu_sys_enter, "sys_enter"));

			if (ret)
				return ret;
			u->sc_enter_on = true;
		}
		ust_bpfu_sc_set(u->skel->bss->ust_bpfu_sc_enter, nr);
		return 0;
	}
	/* Kept for a tracepoint program, if the sys_exit one cannot be attached. */
	n = realloc(u->sc_exits, (u->nr_sc_exits + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	u->sc_exits = n;
	n[u->nr_sc_exits] = strdup(event);
	if (!n[u->nr_sc_exits])
		return -ENOMEM;
	u->nr_sc_exits++;
	ust_bpfu_sc_set(u->skel->bss->ust_bpfu_sc_exit, nr);
	return 0;
}

int ust_bpfu_attach(struct ust_bpfu *u, const char *system, const char *event)
{
	struct bpf_program *p = u->deferred ? u->skel->progs.ust_bpfu_event :
					      u->skel->progs.ust_bpfu_event_imm;
	int ret;

	ret = ust_bpfu_attach_syscall(u, system, event);
	if (ret != -ENOENT)
		return ret;
	if (!bpf_program__autoload(p))
		return -EINVAL;		/* opened with opts.no_events or no_tracepoints */
	return ust_bpfu_keep_link(u, bpf_program__attach_tracepoint(p, system, event));
}

int ust_bpfu_attach_perf(struct ust_bpfu *u, int perf_fd)
{
	struct bpf_program *p = u->af_only ? u->skel->progs.ust_bpfu_perf_af :
					     u->skel->progs.ust_bpfu_perf;

	if (!bpf_program__autoload(p))
		return -EINVAL;		/* opened without opts.perf, or without task_work */
	/* Not auto-attachable: a perf_event program needs its event's fd. */
	return ust_bpfu_keep_link(u, bpf_program__attach_perf_event(p, perf_fd));
}

int ust_bpfu_follow(struct ust_bpfu *u, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 one = 1;
	int ret;

	ret = bpf_map__update_elem(u->skel->maps.ust_bpfu_tgids, &key, sizeof(key), &one,
				   sizeof(one), BPF_ANY);
	if (ret || u->run.filter_on)
		return ret;
	/* After the entry: the filter never shuts out a tgid being added. */
	u->run.filter_on = 1;
	return ust_bpfu_set_run(u);
}

int ust_bpfu_unfollow(struct ust_bpfu *u, pid_t tgid)
{
	__u32 key = (__u32)tgid;

	return bpf_map__delete_elem(u->skel->maps.ust_bpfu_tgids, &key, sizeof(key), 0);
}

int ust_bpfu_poll(struct ust_bpfu *u, int timeout_ms, ust_bpfu_rec_fn fn, void *ctx)
{
	int ret;

	u->fn = fn;
	u->fn_ctx = ctx;
	ret = ring_buffer__poll(u->rb, timeout_ms);
	if (ret >= 0 && u->park && ust_bpfu_park_serve(u->park, ust_bpfu_now_ns(), false,
						       ust_bpfu_emit_stack, u))
		ret = -ECANCELED;
	u->fn = NULL;
	return ret;
}

int ust_bpfu_consume(struct ust_bpfu *u, ust_bpfu_rec_fn fn, void *ctx)
{
	int ret;

	u->fn = fn;
	u->fn_ctx = ctx;
	ret = ring_buffer__consume(u->rb);
	if (ret >= 0 && u->park && ust_bpfu_park_serve(u->park, ust_bpfu_now_ns(), false,
						       ust_bpfu_emit_stack, u))
		ret = -ECANCELED;
	u->fn = NULL;
	return ret;
}

int ust_bpfu_flush(struct ust_bpfu *u, ust_bpfu_rec_fn fn, void *ctx)
{
	int ret;

	u->fn = fn;
	u->fn_ctx = ctx;
	ret = ring_buffer__consume(u->rb);
	/*
	 * Tables still being built, for stacks parked on them: a wait of
	 * the parks' own bound at most (a table 10 ms from ready is worth
	 * it; frame pointers over the copy are what a stack gets after).
	 */
	if (u->park && ust_bpfu_cfi_busy(u->cfi)) {
		struct ust_bpfu_park_stats ps;

		ust_bpfu_park_stats(u->park, &ps);
		if (ps.queued_bytes)
			ust_bpfu_cfi_wait(u->cfi, (int)(UST_BPFU_PARK_WAIT_NS / 1000000));
	}
	/* The recording ends: every stack still waiting, by frame pointers where it must. */
	if (u->park && ust_bpfu_park_serve(u->park, ust_bpfu_now_ns(), true, ust_bpfu_emit_stack, u))
		ret = -ECANCELED;
	u->fn = NULL;
	return ret;
}

int ust_bpfu_fd(const struct ust_bpfu *u)
{
	return ring_buffer__epoll_fd(u->rb);
}

void ust_bpfu_on_exec(struct ust_bpfu *u, ust_bpfu_exec_fn fn, void *ctx)
{
	u->exec_fn = fn;
	u->exec_ctx = ctx;
}

int ust_bpfu_map_fd(const struct ust_bpfu *u, const char *name)
{
	return bpf_object__find_map_fd_by_name(u->skel->obj, name);
}

int ust_bpfu_later_fd(const struct ust_bpfu *u)
{
	return bpf_program__fd(u->skel->progs.ust_bpfu_later);
}

bool ust_bpfu_usable(char *why, size_t len)
{
	int ret;

	if (!ust_kbtf()) {
		snprintf(why, len, "no kernel BTF (/sys/kernel/btf/vmlinux), which the unwinder's CO-RE programs need");
		return false;
	}
	ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL);
	if (ret <= 0) {
		snprintf(why, len, "a tracepoint program does not load: %s",
			 ret ? strerror(-ret) : "refused");
		return false;
	}
	snprintf(why, len, "tracepoint programs load, kernel BTF is there");
	return true;
}

bool ust_bpfu_probe(bool task_work, char *why, size_t len)
{
	struct ust_bpfu_opts o = { 0 };
	struct ust_bpfu_skel *skel;
	enum ust_bpfu_tw tw = UST_BPFU_TW_NONE;
	char e[512];
	int i;

	if (task_work) {
		tw = ust_bpfu_variant_tw(why, len);
		if (tw == UST_BPFU_TW_NONE)
			return false;
	}
	for (i = 1; i >= 0; i--) {
		struct ust_bpfload_report rep;

		skel = ust_bpfu_load(i, tw, false, ust_bpfu_variant_faultable(), &o, false, &rep, e,
				     sizeof(e));
		if (!skel && task_work && rep.refused[0]) {
			/* Said shortly: the recorder's own message has the log's path. */
			snprintf(why, len, "%s() is there, but %s is refused: %s",
				 tw == UST_BPFU_TW_619 ? "bpf_task_work_schedule_resume" :
				 "bpf_task_work_schedule_resume_impl", rep.refused, rep.why);
			return false;
		}
		if (!skel)
			continue;
		ust_bpfu_skel__destroy(skel);
		if (task_work)
			snprintf(why, len, "the unwinder's programs load with %s",
				 tw == UST_BPFU_TW_619 ? "bpf_task_work_schedule_resume()" :
				 "bpf_task_work_schedule_resume_impl()");
		else
			snprintf(why, len, "the unwinder's %d programs load (%s)", rep.nr,
				 i ? "CFI walk" : "frame pointers only: the CFI walk is refused");
		return true;
	}
	snprintf(why, len, "%s", e);
	return false;
}

int ust_bpfu_verify(const struct ust_bpfu_opts *o, bool cfi, struct ust_bpfload_report *rep,
		    char *what, size_t whatlen, char *err, size_t errlen)
{
	struct ust_bpfu_skel *skel;
	enum ust_bpfu_tw tw = ust_bpfu_variant_tw(NULL, 0);
	char e[512];

	skel = ust_bpfu_load(cfi, tw, o->immediate, ust_bpfu_variant_faultable(), o, true, rep, e,
			     sizeof(e));
	snprintf(what, whatlen, "the unwinder (%s)", ust_bpfu_variant_name(cfi, tw));
	if (!skel && tw != UST_BPFU_TW_NONE) {
		/* What the recorder then loads: the variant without task_work. */
		struct ust_bpfload_report r2;

		snprintf(what, whatlen, "the unwinder (%s; %s refused: %s)",
			 ust_bpfu_variant_name(cfi, UST_BPFU_TW_NONE), rep->refused[0] ? rep->refused :
			 "task_work", rep->why);
		skel = ust_bpfu_load(cfi, UST_BPFU_TW_NONE, o->immediate, ust_bpfu_variant_faultable(), o,
				     true, &r2, e, sizeof(e));
		*rep = r2;
	}
	if (!skel) {
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	ust_bpfu_skel__destroy(skel);
	return 0;
}

int ust_bpfu_arm_exit(struct ust_bpfu *u)
{
	struct bpf_link *l;
	int ret;

	if (!u->deferred || u->af_only || u->run.exit_armed)
		return 0;
	l = bpf_program__attach_raw_tracepoint(u->skel->progs.ust_bpfu_sys_exit, "sys_exit");
	ret = ust_bpfu_keep_link(u, l);
	if (ret) {
		size_t i;

		/* Its sys_exit_* events still get cookies, each by its own program. */
		for (i = 0; i < u->nr_sc_exits; i++)
			if (ust_bpfu_keep_link(u, bpf_program__attach_tracepoint(
						u->skel->progs.ust_bpfu_event, "syscalls", u->sc_exits[i])))
				break;
		return ret;
	}
	/* After the attach: no entry waits for an exit program not yet there. */
	u->run.exit_armed = !u->no_exit_stacks;
	return ust_bpfu_set_run(u);
}

int ust_bpfu_tables_program(struct ust_bpfu *u, const char *path)
{
	return u->cfi ? ust_bpfu_cfi_add_program(u->cfi, path) : 0;
}

int ust_bpfu_tables_pid(struct ust_bpfu *u, pid_t pid)
{
	int ret = u->cfi ? ust_bpfu_cfi_add_pid(u->cfi, pid) : 0;

	return ret < 0 ? ret : 0;
}

void ust_bpfu_tables_wait(struct ust_bpfu *u)
{
	if (u->cfi)
		ust_bpfu_cfi_wait(u->cfi, -1);
}

bool ust_bpfu_has_tables(const struct ust_bpfu *u)
{
	return u->cfi != NULL;
}

bool ust_bpfu_deferred(const struct ust_bpfu *u)
{
	return u->deferred;
}

bool ust_bpfu_task_work(const struct ust_bpfu *u)
{
	return u->task_work;
}

bool ust_bpfu_keeps_vmas(const struct ust_bpfu *u)
{
	return u->keeps_vmas;
}

bool ust_bpfu_preempt_off(const struct ust_bpfu *u)
{
	return u ? u->preempt_off : ust_bpfu_variant_faultable();
}

const char *ust_bpfu_notes(const struct ust_bpfu *u)
{
	return u->notes;
}

unsigned int ust_bpfu_note_kinds(const struct ust_bpfu *u)
{
	return u->note_kinds;
}

const struct ust_bpfload_report *ust_bpfu_load_report(const struct ust_bpfu *u)
{
	return &u->load;
}

const char *ust_bpfu_why_immediate(const struct ust_bpfu *u)
{
	return u->note;
}

/*
 * The kernel's count of skipped runs (recursion_misses), over @obj's
 * programs, and which program it skipped most into @by.
 */
static uint64_t ust_bpfu_missed(struct bpf_object *obj, char *by, size_t bylen)
{
	struct bpf_program *p;
	uint64_t n = 0, most = 0;

	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		n += info.recursion_misses;
		if (info.recursion_misses > most) {
			most = info.recursion_misses;
			snprintf(by, bylen, "%s", bpf_program__name(p));
		}
	}
	return n;
}

int ust_bpfu_get_stats(const struct ust_bpfu *u, struct ust_bpfu_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), ret, i;
	struct ust_bpfu_counters *v;
	__u32 key = 0;

	memset(st, 0, sizeof(*st));
	st->records = u->records;
	st->cookie_records = u->cookie_records;
	st->stack_records = u->stack_records;
	st->bad_records = u->bad_records;
	st->repeats = u->repeats;
	st->repeats_lost = u->repeats_lost;
	if (u->park) {
		struct ust_bpfu_park_stats ps;

		ust_bpfu_park_stats(u->park, &ps);
		st->later = ps.later;
		st->later_not_in_time = ps.not_in_time;
		st->park_lost = ps.lost;
		st->park_used_max = ps.used_max;
		st->park_beyond_copy = ps.beyond_copy;
	}
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = bpf_map__lookup_elem(u->skel->maps.ust_bpfu_stats, &key, sizeof(key), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (i = 0; !ret && i < ncpu; i++) {
		st->events += v[i].events;
		st->cookies += v[i].cookies;
		st->stacks += v[i].stacks;
		st->drops += v[i].drops;
		st->no_storage += v[i].no_storage;
		st->sched_fail += v[i].sched_fail;
		st->late += v[i].late;
		st->stale += v[i].stale;
		st->orphan += v[i].orphan;
		st->truncated += v[i].truncated;
		st->vma_fail += v[i].vma_fail;
		st->vma_code += v[i].vma_code;
		st->exit_stacks += v[i].exit_stacks;
		st->children += v[i].children;
		st->filter_full += v[i].filter_full;
		st->samples += v[i].samples;
		st->cfi_frames += v[i].cfi_frames;
		st->fp_frames += v[i].fp_frames;
		st->cfi_need += v[i].cfi_need;
		st->exit_walks += v[i].exit_walks;
		st->exit_faults += v[i].exit_faults;
		st->sample_walks += v[i].sample_walks;
		st->sample_faults += v[i].sample_faults;
		st->memo_walks += v[i].memo_walks;
		st->parks += v[i].parks;
		st->park_bytes += v[i].park_bytes;
		st->park_span += v[i].park_span;
		st->park_whole += v[i].park_whole;
		st->park_no_room += v[i].park_no_room;
		st->park_short += v[i].park_short;
	}
	if (u->cfi)
		ust_bpfu_cfi_get_stats(u->cfi, &st->cfi);
	free(v);
	st->missed = ust_bpfu_missed(u->skel->obj, st->missed_by, sizeof(st->missed_by));
	return ret;
}

void ust_bpfu_close(struct ust_bpfu *u)
{
	uint64_t tid, last;
	size_t i, pos;

	if (!u)
		return;
	/* Detach first: no event may start a work on an object going away. */
	for (i = u->nr_links; i > 0; i--)
		bpf_link__destroy(u->links[i - 1]);
	free(u->links);
	for (i = 0; i < u->nr_sc_exits; i++)
		free(u->sc_exits[i]);
	free(u->sc_exits);
	ring_buffer__free(u->rb);
	for (pos = 0; ust_hmap_next(&u->last, &pos, &tid, &last);)
		free((void *)(uintptr_t)last);
	ust_hmap_fini(&u->last);
	ust_bpfu_park_free(u->park);
	ust_bpfu_raw_free(u->raw);
	ust_bpfu_cfi_free(u->cfi);
	ust_bpfu_skel__destroy(u->skel);
	free(u);
}

#else /* !UST_HAVE_BPF */

struct ust_bpfu {
	int unused;
};

bool ust_bpfu_built(void)
{
	return false;
}

struct ust_bpfu *ust_bpfu_open(const struct ust_bpfu_opts *opts, char *err, size_t errlen)
{
	(void)opts;
	snprintf(err, errlen, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	errno = EOPNOTSUPP;
	return NULL;
}

int ust_bpfu_attach(struct ust_bpfu *u, const char *system, const char *event)
{
	(void)u, (void)system, (void)event;
	return -EOPNOTSUPP;
}

int ust_bpfu_attach_perf(struct ust_bpfu *u, int perf_fd)
{
	(void)u, (void)perf_fd;
	return -EOPNOTSUPP;
}

int ust_bpfu_follow(struct ust_bpfu *u, pid_t tgid)
{
	(void)u, (void)tgid;
	return -EOPNOTSUPP;
}

int ust_bpfu_unfollow(struct ust_bpfu *u, pid_t tgid)
{
	(void)u, (void)tgid;
	return -EOPNOTSUPP;
}

int ust_bpfu_poll(struct ust_bpfu *u, int timeout_ms, ust_bpfu_rec_fn fn, void *ctx)
{
	(void)u, (void)timeout_ms, (void)fn, (void)ctx;
	return -EOPNOTSUPP;
}

int ust_bpfu_consume(struct ust_bpfu *u, ust_bpfu_rec_fn fn, void *ctx)
{
	(void)u, (void)fn, (void)ctx;
	return -EOPNOTSUPP;
}

int ust_bpfu_flush(struct ust_bpfu *u, ust_bpfu_rec_fn fn, void *ctx)
{
	(void)u, (void)fn, (void)ctx;
	return -EOPNOTSUPP;
}

int ust_bpfu_fd(const struct ust_bpfu *u)
{
	(void)u;
	return -EOPNOTSUPP;
}

void ust_bpfu_on_exec(struct ust_bpfu *u, ust_bpfu_exec_fn fn, void *ctx)
{
	(void)u, (void)fn, (void)ctx;
}

int ust_bpfu_map_fd(const struct ust_bpfu *u, const char *name)
{
	(void)u, (void)name;
	return -EOPNOTSUPP;
}

int ust_bpfu_later_fd(const struct ust_bpfu *u)
{
	(void)u;
	return -EOPNOTSUPP;
}

bool ust_bpfu_usable(char *why, size_t len)
{
	snprintf(why, len, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return false;
}

bool ust_bpfu_probe(bool task_work, char *why, size_t len)
{
	(void)task_work;
	snprintf(why, len, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return false;
}

int ust_bpfu_verify(const struct ust_bpfu_opts *o, bool cfi, struct ust_bpfload_report *rep,
		    char *what, size_t whatlen, char *err, size_t errlen)
{
	(void)o, (void)cfi, (void)rep;
	snprintf(what, whatlen, "the unwinder");
	snprintf(err, errlen, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return -1;
}

int ust_bpfu_arm_exit(struct ust_bpfu *u)
{
	(void)u;
	return -EOPNOTSUPP;
}

int ust_bpfu_tables_program(struct ust_bpfu *u, const char *path)
{
	(void)u, (void)path;
	return -EOPNOTSUPP;
}

int ust_bpfu_tables_pid(struct ust_bpfu *u, pid_t pid)
{
	(void)u, (void)pid;
	return -EOPNOTSUPP;
}

void ust_bpfu_tables_wait(struct ust_bpfu *u)
{
	(void)u;
}

bool ust_bpfu_has_tables(const struct ust_bpfu *u)
{
	(void)u;
	return false;
}

bool ust_bpfu_deferred(const struct ust_bpfu *u)
{
	(void)u;
	return false;
}

bool ust_bpfu_task_work(const struct ust_bpfu *u)
{
	(void)u;
	return false;
}

bool ust_bpfu_keeps_vmas(const struct ust_bpfu *u)
{
	(void)u;
	return false;
}

bool ust_bpfu_preempt_off(const struct ust_bpfu *u)
{
	(void)u;
	return false;
}

const char *ust_bpfu_notes(const struct ust_bpfu *u)
{
	(void)u;
	return "";
}

unsigned int ust_bpfu_note_kinds(const struct ust_bpfu *u)
{
	(void)u;
	return 0;
}

const struct ust_bpfload_report *ust_bpfu_load_report(const struct ust_bpfu *u)
{
	(void)u;
	return NULL;
}

const char *ust_bpfu_why_immediate(const struct ust_bpfu *u)
{
	(void)u;
	return "built without BPF support";
}

int ust_bpfu_get_stats(const struct ust_bpfu *u, struct ust_bpfu_stats *st)
{
	(void)u;
	memset(st, 0, sizeof(*st));
	return -EOPNOTSUPP;
}

void ust_bpfu_close(struct ust_bpfu *u)
{
	(void)u;
}

#endif /* UST_HAVE_BPF */
