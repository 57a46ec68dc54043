// SPDX-License-Identifier: LGPL-2.1
/*
 * The stack walk, bounded and unable to fault: by the CFI tables of
 * ust_lttng_cfi.c, the rules of the BPF unwinder (bpf/unwind_walk.bpf.h),
 * and by frame pointers where an address has no table.
 *
 * Where it starts.  The context callbacks run inside lttng-ust, below the
 * tracepoint probe, which is compiled into the application with its flags
 * (often without a frame pointer).  The probe context's ip is the probe's
 * return address.  The CFI walk starts from our own registers (rip, rsp,
 * rbp, rbx at a call in ust_lttng_walk, captured by a 7-instruction stub)
 * and unwinds our frames, lttng-ust's and the probe's until the return
 * address is that ip: from there on, the registers are exactly those of
 * the code that took the tracepoint, and the frames are recorded.
 * Without CFI (USTITCH_LTTNG_UNWIND=fp, or when that search fails), the
 * probe's frame record is found as before: scanning up from the probe
 * context for the slot holding ip, the word below being the caller's
 * frame pointer; this needs the probe built with frame pointers.
 *
 * Per frame (as the BPF walker): the object of pc (ip - 1 for a return
 * address, ip itself after a signal frame), its row by file offset, then
 *   RSP/RBP/RBX/PLT/DEREF_RBP  CFA from the rule, return address at
 *                              CFA - 8, rsp = CFA, rbp and rbx by their
 *                              save rules;
 *   SIGNAL                     rip, rsp, rbp, rbx from the ucontext;
 *   END                        the outermost frame;
 *   NONE, UNSUPPORTED, no row  one frame-pointer step (rbp 0: outermost).
 * An address in no loaded object (JIT code) or in one whose table is not
 * ready takes a frame-pointer step and marks the stack (F_FP, F_RAW,
 * F_NO_TABLE).  A thread we started ends at its start routine.
 *
 * How it reads: a word between the current stack pointer and the top of
 * this thread's stack (ust_lttng_stack_bounds) is mapped, and is read
 * directly.  Anything else (an alternate signal stack, a thread whose
 * bounds are unknown, a corrupt chain) is read with process_vm_readv,
 * which fails with EFAULT instead of faulting.  A CFA must lie above the
 * frame's rsp, and the walk stops at UST_LTTNG_MAX_FRAMES.
 */
#include <stdatomic.h>
#include <sys/uio.h>

#include "ust_lttng.h"
#include "ustitch/abi.h"
#include "ustitch/cfi.h"

#define PROBE_FRAME_SCAN	4096	/* bytes above the probe context */
#define SCAN_CHUNK		32	/* words per process_vm_readv */
#define DELTA_SLOTS		256
#define SKIP_MAX		24	/* our frames, lttng-ust's, the probe's */
#define OBJ_CACHE		4

#define NO_ASAN __attribute__((no_sanitize("address")))

/*
 * Where the probe's frame record lies relative to its probe context is
 * fixed per probe function, so it is remembered per call site (ip) and
 * only verified next time.  A wrong or stale hint costs one failed check,
 * then the scan.
 */
static uint16_t delta_hint[DELTA_SLOTS];	/* (record - pctx) / 8 + 1 */

struct rd {
	uintptr_t sp, hi;
};

/* Reads @n words at @addr; false when any of them is not readable. */
NO_ASAN static bool read_words(const struct rd *r, uintptr_t addr, uintptr_t *out, size_t n)
{
	struct iovec local, remote;
	size_t i;

	if (addr & (sizeof(uintptr_t) - 1))
		return false;
	if (r->hi && addr >= r->sp && addr < r->hi && n * sizeof(uintptr_t) <= r->hi - addr) {
		for (i = 0; i < n; i++)
			out[i] = ((const volatile uintptr_t *)addr)[i];
		return true;
	}
	local.iov_base = out;
	local.iov_len = n * sizeof(uintptr_t);
	remote.iov_base = (void *)addr;
	remote.iov_len = local.iov_len;
	return process_vm_readv(ust_lttng_proc.pid, &local, 1, &remote, 1, 0) ==
	       (ssize_t)local.iov_len;
}

NO_ASAN static inline bool read1(const struct rd *r, uintptr_t addr, uintptr_t *out)
{
	if (__builtin_expect(!(addr & 7) && addr >= r->sp && addr < r->hi &&
			     r->hi - addr >= sizeof(uintptr_t), 1)) {
		*out = *(const volatile uintptr_t *)addr;
		return true;
	}
	return read_words(r, addr, out, 1);
}

/* The probe's frame record: the address of its saved frame pointer. */
NO_ASAN static uintptr_t find_probe_frame(const struct rd *r, uintptr_t pctx, uintptr_t ip)
{
	uint16_t *hint = &delta_hint[(ip >> 2) % DELTA_SLOTS];
	uint16_t h = __atomic_load_n(hint, __ATOMIC_RELAXED);
	uintptr_t words[SCAN_CHUNK];
	/* Skip the probe context itself: it holds a copy of ip. */
	uintptr_t start = (pctx + 2 * sizeof(uintptr_t) + 7) & ~(uintptr_t)7;
	uintptr_t end = start + PROBE_FRAME_SCAN, a;
	size_t i, n;

	if (h) {
		uintptr_t rec = pctx + (uintptr_t)(h - 1) * sizeof(uintptr_t);

		if (read_words(r, rec, words, 2) && words[1] == ip &&
		    (words[0] == 0 || words[0] > rec + sizeof(uintptr_t)))
			return rec;
	}
	if (r->hi && end > r->hi)
		end = r->hi;
	for (a = start; a < end; a += n * sizeof(uintptr_t)) {
		n = (end - a) / sizeof(uintptr_t);
		if (n > SCAN_CHUNK)
			n = SCAN_CHUNK;
		if (!n || !read_words(r, a, words, n))
			return 0;
		for (i = 1; i < n; i++) {
			uintptr_t slot = a + i * sizeof(uintptr_t);

			/* The saved frame pointer must lie above its record, or be 0. */
			if (words[i] == ip && (words[i - 1] == 0 || words[i - 1] > slot)) {
				uintptr_t rec = slot - sizeof(uintptr_t);

				__atomic_store_n(hint, (uint16_t)((rec - pctx) / sizeof(uintptr_t) + 1),
						 __ATOMIC_RELAXED);
				return rec;
			}
		}
		if (n > 1)	/* re-read the boundary word with its neighbour */
			n--;
	}
	return 0;
}

/* The frame-pointer walk from the probe's frame record (CFI off or lost). */
NO_ASAN static int walk_fp(const struct rd *r, uintptr_t wrap_fp, const void *pctx, uintptr_t ip,
			   uintptr_t *out, int max, uint32_t *flags)
{
	uintptr_t rec, fp, w[2];
	int n = 0;

	rec = find_probe_frame(r, (uintptr_t)pctx, ip);
	if (!rec || !read_words(r, rec, w, 1))
		return 0;
	out[n++] = ip;
	fp = w[0];
	*flags |= UST_ABI_STACK_F_FP;
	for (;;) {
		uintptr_t next, ret;

		if (!fp) {
			*flags |= UST_ABI_STACK_F_BOTTOM;	/* rbp 0: the outermost frame */
			break;
		}
		if (fp & 7) {
			*flags |= UST_ABI_STACK_F_NO_UNWIND;
			break;
		}
		if (n >= max) {
			*flags |= UST_ABI_STACK_F_TRUNCATED;
			break;
		}
		if (__builtin_expect(fp >= r->sp && fp < r->hi && r->hi - fp >= 2 * sizeof(uintptr_t), 1)) {
			/* On this thread's stack, below its top: mapped. */
			next = ((const uintptr_t *)fp)[0];
			ret = ((const uintptr_t *)fp)[1];
		} else if (read_words(r, fp, w, 2)) {
			next = w[0];
			ret = w[1];
		} else {
			*flags |= UST_ABI_STACK_F_FAULT;
			break;
		}
		if (!ret)
			break;
		if (wrap_fp && next == wrap_fp) {
			*flags |= UST_ABI_STACK_F_BOTTOM;	/* returns into our thread-start wrapper */
			break;
		}
		out[n++] = ret;
		/* On the known stack the chain must go up and stay below its
		 * top.  A frame off it (a handler on an alternate stack) may
		 * jump anywhere; such a walk is bounded by max like any other. */
		if (r->hi && fp >= r->sp && fp < r->hi && next && (next <= fp || next >= r->hi)) {
			*flags |= UST_ABI_STACK_F_NO_UNWIND;
			break;
		}
		fp = next;
	}
	return n;
}

/* --- the CFI walk ------------------------------------------------------- */

struct ws {
	uintptr_t ip, sp, bp, bx;
	bool bp_ok, bx_ok, exact;	/* exact: ip is not a return address */
};

struct wctx {
	struct rd r;
	uint32_t flags;
	unsigned int gen;		/* the registry's, at the walk's start */
	unsigned int nc, next;
	struct ust_lttng_cfi_obj objs[OBJ_CACHE];
};

static const struct ust_lttng_cfi_obj *obj_of(struct wctx *c, uintptr_t pc)
{
	unsigned int i, slot;

	for (i = 0; i < c->nc; i++)
		if (pc >= c->objs[i].lo && pc < c->objs[i].hi)
			return &c->objs[i];
	slot = c->nc < OBJ_CACHE ? c->nc : c->next++ % OBJ_CACHE;
	if (!ust_lttng_cfi_find(pc, &c->objs[slot]))
		return NULL;
	if (c->nc < OBJ_CACHE)
		c->nc++;
	return &c->objs[slot];
}

static const struct ust_cfi_row *row_of(const struct ust_lttng_cfi_obj *o, uint64_t off)
{
	uint32_t lo = 0, hi = o->nr_rows;

	if (!hi || off > 0xffffffffULL || off < o->rows[0].off)
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->rows[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &o->rows[lo];
}

/*
 * pc -> row, for the pcs walks keep meeting (a trace repeats few stacks):
 * a direct-mapped cache that saves the object lookup and the binary
 * search in tables of up to millions of rows.  Lock-free: a slot's key
 * is cleared, its row written, then the key set; a reader checks the key
 * before and after reading the row.  Keys carry the registry generation,
 * so nothing cached before a dlopen/dlclose is used after it.  A row
 * pointer always points into a table that is never freed: a lost race
 * costs a wrong rule at worst, never a bad read.
 */
#define ROW_CACHE_BITS	12

struct row_slot {
	_Atomic uint64_t key;
	const struct ust_cfi_row *_Atomic row;
};

static struct row_slot row_cache[1 << ROW_CACHE_BITS];

static inline uint64_t row_key(uintptr_t pc, unsigned int gen)
{
	return ((uint64_t)pc & 0xffffffffffffULL) | (uint64_t)(gen & 0xffff) << 48;
}

static inline struct row_slot *row_slot(uint64_t key)
{
	return &row_cache[(key * 0x9e3779b97f4a7c15ULL) >> (64 - ROW_CACHE_BITS)];
}

static inline const struct ust_cfi_row *row_cached(uint64_t key)
{
	struct row_slot *s = row_slot(key);
	const struct ust_cfi_row *row;

	if (atomic_load_explicit(&s->key, memory_order_acquire) != key)
		return NULL;
	row = atomic_load_explicit(&s->row, memory_order_acquire);
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&s->key, memory_order_relaxed) == key ? row : NULL;
}

static inline void row_remember(uint64_t key, const struct ust_cfi_row *row)
{
	struct row_slot *s = row_slot(key);

	atomic_store_explicit(&s->key, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->row, row, memory_order_relaxed);
	atomic_store_explicit(&s->key, key, memory_order_release);
}

/* One frame-pointer step (the kernel's unwind_user walk); true: the walk ends. */
NO_ASAN static bool step_fp(struct wctx *c, struct ws *s)
{
	uintptr_t cfa = s->bp + 16, ra, bp;

	if (s->bp_ok && !s->bp) {
		c->flags |= UST_ABI_STACK_F_BOTTOM;	/* rbp 0 marks the outermost frame */
		return true;
	}
	if (!s->bp_ok || cfa <= s->sp || (cfa & 7)) {
		c->flags |= UST_ABI_STACK_F_NO_UNWIND;
		return true;
	}
	if (!read1(&c->r, s->bp, &bp) || !read1(&c->r, s->bp + 8, &ra)) {
		c->flags |= UST_ABI_STACK_F_FAULT;
		return true;
	}
	if (!ra)
		return true;
	c->flags |= UST_ABI_STACK_F_FP;
	s->ip = ra;
	s->sp = cfa;
	s->bp = bp;
	s->bx_ok = false;
	s->exact = false;
	return false;
}

NO_ASAN static bool step_signal(struct wctx *c, struct ws *s)
{
	uintptr_t uc = s->sp, ip, sp, bp, bx;

	if (!read1(&c->r, uc + UST_CFI_SIGFRAME_RIP, &ip) ||
	    !read1(&c->r, uc + UST_CFI_SIGFRAME_RSP, &sp) ||
	    !read1(&c->r, uc + UST_CFI_SIGFRAME_RBP, &bp) ||
	    !read1(&c->r, uc + UST_CFI_SIGFRAME_RBX, &bx)) {
		c->flags |= UST_ABI_STACK_F_FAULT;
		return true;
	}
	if (!ip)
		return true;
	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	s->bx = bx;
	s->bp_ok = s->bx_ok = true;
	s->exact = true;	/* the interrupted instruction itself */
	return false;
}

NO_ASAN static bool step_cfi(struct wctx *c, struct ws *s, const struct ust_cfi_row *row)
{
	uintptr_t cfa, ra, bp = s->bp, bx = s->bx;
	bool bp_ok = s->bp_ok, bx_ok = s->bx_ok;
	intptr_t off = row->cfa_off;

	switch (row->cfa_type) {
	case UST_CFI_CFA_RSP:
		cfa = s->sp + off;
		break;
	case UST_CFI_CFA_RBP:
		if (!s->bp_ok)
			goto bad;
		cfa = s->bp + off;
		break;
	case UST_CFI_CFA_RBX:
		if (!s->bx_ok)
			goto bad;
		cfa = s->bx + off;
		break;
	case UST_CFI_CFA_PLT:
		cfa = s->sp + off + ((intptr_t)(s->ip & 15) >= row->rbp_off ? 8 : 0);
		break;
	case UST_CFI_CFA_DEREF_RBP:
		if (!s->bp_ok)
			goto bad;
		if (!read1(&c->r, s->bp + off, &cfa))
			goto fault;
		break;
	default:
		goto bad;
	}
	/* The caller's frame is above this one: anything else is garbage. */
	if (cfa <= s->sp || cfa - s->sp > ((uintptr_t)1 << 30))
		goto bad;
	if (!read1(&c->r, cfa - 8, &ra))
		goto fault;
	/* Both from this frame's registers, before either changes. */
	if (row->rbp_type == UST_CFI_RBP_CFA) {
		if (!read1(&c->r, cfa + row->rbp_off, &bp))
			goto fault;
		bp_ok = true;
	} else if (row->rbp_type == UST_CFI_RBP_DEREF_RBP) {
		bp_ok = s->bp_ok && read1(&c->r, s->bp + row->rbp_off, &bp);
	} else if (row->rbp_type != UST_CFI_RBP_SAME) {
		bp_ok = false;
	}
	if (row->rbx_type == UST_CFI_RBP_CFA)
		bx_ok = read1(&c->r, cfa + row->rbx_off, &bx);
	else if (row->rbx_type != UST_CFI_RBP_SAME)
		bx_ok = false;
	c->flags |= UST_ABI_STACK_F_CFI;
	if (!ra)
		return true;
	s->ip = ra;
	s->sp = cfa;
	s->bp = bp;
	s->bx = bx;
	s->bp_ok = bp_ok;
	s->bx_ok = bx_ok;
	s->exact = false;
	return false;
bad:
	c->flags |= UST_ABI_STACK_F_BAD_CFA;
	return true;
fault:
	c->flags |= UST_ABI_STACK_F_FAULT;
	return true;
}

/* From frame s to its caller; true: the walk ends. */
NO_ASAN static bool step(struct wctx *c, struct ws *s)
{
	/* A return address is after the call: the call itself is at ip - 1. */
	uintptr_t pc = s->ip - (s->exact ? 0 : 1);
	uint64_t key = row_key(pc, c->gen);
	const struct ust_cfi_row *row = row_cached(key);
	const struct ust_lttng_cfi_obj *o;

	if (row)
		goto have_row;
	o = obj_of(c, pc);
	if (!o)
		c->flags |= UST_ABI_STACK_F_RAW;	/* JIT code, anonymous memory */
	else if (o->status == UST_LTTNG_CFI_READY)
		row = row_of(o, pc + o->delta);
	else if (o->status == UST_LTTNG_CFI_PENDING)
		c->flags |= UST_ABI_STACK_F_NO_TABLE;
	if (row)
		row_remember(key, row);
have_row:
	if (!row || row->cfa_type == UST_CFI_CFA_NONE || row->cfa_type == UST_CFI_CFA_UNSUPPORTED)
		return step_fp(c, s);
	if (row->cfa_type == UST_CFI_CFA_END) {
		c->flags |= UST_ABI_STACK_F_CFI | UST_ABI_STACK_F_BOTTOM;
		return true;
	}
	if (row->cfa_type == UST_CFI_CFA_SIGNAL) {
		c->flags |= UST_ABI_STACK_F_CFI;
		return step_signal(c, s);
	}
	return step_cfi(c, s, row);
}

/* Our registers at the call: rip (the return address), rsp after it, rbp, rbx. */
__asm__(".text\n"
	"\t.p2align 4\n"
	"\t.globl ust_lttng_regs\n"
	"\t.hidden ust_lttng_regs\n"
	"\t.type ust_lttng_regs, @function\n"
	"ust_lttng_regs:\n"
	"\t.cfi_startproc\n"
	"\tmovq (%rsp), %rax\n"
	"\tmovq %rax, (%rdi)\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tmovq %rax, 8(%rdi)\n"
	"\tmovq %rbp, 16(%rdi)\n"
	"\tmovq %rbx, 24(%rdi)\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	"\t.size ust_lttng_regs, .-ust_lttng_regs\n");
void ust_lttng_regs(uintptr_t *regs);

NO_ASAN static int walk_cfi(struct wctx *c, uintptr_t ip, uintptr_t *out, int max)
{
	uintptr_t regs[4];
	struct ws s;
	int k, n = 0;

	ust_lttng_regs(regs);
	if (regs[1] < c->r.sp)
		c->r.sp = regs[1];	/* our own frames are read directly too */
	s.ip = regs[0];
	s.sp = regs[1];
	s.bp = regs[2];
	s.bx = regs[3];
	s.bp_ok = s.bx_ok = true;
	s.exact = false;
	/* Up through our frames, lttng-ust's and the probe's. */
	for (k = 0; s.ip != ip; k++)
		if (k >= SKIP_MAX || step(c, &s))
			return -1;
	c->flags = 0;
	for (;;) {
		if (n >= max) {
			c->flags |= UST_ABI_STACK_F_TRUNCATED;
			break;
		}
		out[n++] = s.ip;
		if (step(c, &s))
			break;
		if (ust_lttng_in_thread_start(s.ip)) {
			/* The thread's start routine was the frame above. */
			c->flags |= UST_ABI_STACK_F_BOTTOM;
			break;
		}
	}
	return n;
}

NO_ASAN __attribute__((noinline))
int ust_lttng_walk(const void *pctx, uintptr_t ip, uintptr_t *out, int max, uint32_t *flags)
{
	struct wctx c;
	uintptr_t wrap_fp;
	int n;

	*flags = 0;
	if (!pctx || !ip || max <= 0)
		return 0;
	c.r.sp = (uintptr_t)__builtin_frame_address(0);
	ust_lttng_stack_bounds(c.r.sp, &c.r.hi, &wrap_fp);
	if (ust_lttng_cfi_enabled()) {
		c.flags = 0;
		c.nc = c.next = 0;
		c.gen = ust_lttng_cfi_gen();
		n = walk_cfi(&c, ip, out, max);
		if (n > 0) {
			*flags = c.flags;
			return n;
		}
	}
	return walk_fp(&c.r, wrap_fp, pctx, ip, out, max, flags);
}
