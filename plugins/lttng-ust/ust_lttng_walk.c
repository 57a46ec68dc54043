// SPDX-License-Identifier: LGPL-2.1
/*
 * The stack walk, bounded and unable to fault: by the CFI tables of
 * ust_lttng_cfi.c and frame pointers where an address has no table, one
 * step at a time by bpf/ust_cfi_step.h, the code the BPF unwinder's walk
 * (bpf/bpfu_walk.bpf.h) runs too: the two cannot drift apart.
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
 * Per frame: the object of pc (ip - 1 for a return address, ip itself
 * after a signal frame), its row by file offset (ust_cfi_lookup()), then
 * the step of that row (ust_cfi_step_row(): CFA rules, SIGNAL, END), or
 * one frame-pointer step (ust_cfi_step_fp()) for NONE, UNSUPPORTED and no
 * row at all.
 * An address in no loaded object (JIT code) or in one whose table is not
 * ready takes a frame-pointer step and marks the stack (F_FP, F_RAW,
 * F_NO_TABLE).  A thread we started ends at its start routine.  A return
 * address must point into code: one in no executable mapping (this
 * thread's stack, data, nothing) is what a wrong step took for one, never a
 * caller; the walk ends before it (F_NOT_EXEC).  An address in a loaded
 * object's executable segment is code; any other is looked up in
 * /proc/self/maps (JIT code is anonymous executable memory).
 *
 * How it reads: a word between the current stack pointer and the top of
 * this thread's stack (ust_lttng_stack_bounds) is mapped, and is read
 * directly.  Anything else (an alternate signal stack, a thread whose
 * bounds are unknown, a corrupt chain) is read with process_vm_readv,
 * which fails with EFAULT instead of faulting.  A CFA must lie above the
 * frame's rsp, and the walk stops at UST_LTTNG_MAX_FRAMES.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ust_lttng.h"
#include "ustitch/abi.h"
#include "ustitch/cfi.h"

#define NO_ASAN __attribute__((no_sanitize("address")))

/* The step's rules (bpf/ust_cfi_step.h), reading through read_u64(). */
struct wctx;
NO_ASAN static inline int read_u64(struct wctx *c, __u64 addr, __u64 *val);
#define UST_CFI_STEP_CTX		struct wctx
#define UST_CFI_STEP_READ(c, a, v)	read_u64((c), (a), (v))
#define UST_CFI_STEP_FN			NO_ASAN static inline
#include "ust_cfi_step.h"

#define PROBE_FRAME_SCAN	4096	/* bytes above the probe context */
#define SCAN_CHUNK		32	/* words per process_vm_readv */
#define DELTA_SLOTS		256
#define SKIP_MAX		24	/* our frames, lttng-ust's, the probe's */
#define OBJ_CACHE		4

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

/*
 * Whether @addr lies in an executable mapping of this process, by
 * /proc/self/maps ("start-end perms ..." lines, read a page at a time
 * with plain system calls: the walk may run in a signal handler).  Only
 * for addresses no loaded object holds: rare, and never a hot path.
 */
static bool exec_mapped(uintptr_t addr)
{
	char buf[4096];
	size_t have = 0;
	bool found = false, done = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return true;	/* cannot tell: keep the frame as before */
	while (!done) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			uintptr_t lo = 0, hi = 0;
			char *p = line;

			for (; *p && *p != '-'; p++)
				lo = lo * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
			for (p++; *p && *p != ' '; p++)
				hi = hi * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
			if (addr >= lo && addr < hi) {
				found = p + 3 < nl && p[3] == 'x';
				done = true;
				break;
			}
			if (lo > addr) {	/* the lines are sorted */
				done = true;
				break;
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			break;		/* a line longer than the buffer: give up */
	}
	close(fd);
	return found;
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
		/* A return address on this thread's stack is no caller. */
		if (r->hi && ret >= r->sp && ret < r->hi) {
			*flags |= UST_ABI_STACK_F_NOT_EXEC;
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

/* The step's reads (UST_CFI_STEP_READ): 0, or -1 when the word is not readable. */
NO_ASAN static inline int read_u64(struct wctx *c, __u64 addr, __u64 *val)
{
	uintptr_t v;

	if (!read1(&c->r, (uintptr_t)addr, &v))
		return -1;
	*val = v;
	return 0;
}

/* From frame @s to its caller (ust_cfi_step.h); true: the walk ends. */
NO_ASAN static bool step(struct wctx *c, struct ust_cfi_regs *s)
{
	uintptr_t pc = ust_cfi_regs_pc(s);
	uint64_t key = row_key(pc, c->gen), off;
	const struct ust_cfi_row *row = row_cached(key);
	const struct ust_lttng_cfi_obj *o;
	uint32_t bad;
	int ret;

	if (row)
		goto have_row;
	o = obj_of(c, pc);
	if (!o) {
		c->flags |= UST_ABI_STACK_F_RAW;	/* JIT code, anonymous memory */
	} else if (o->status == UST_LTTNG_CFI_READY) {
		off = pc + o->delta;
		if (off <= 0xffffffffULL)	/* a row's offset is 32 bits */
			row = ust_cfi_lookup(o->tab, off);
	} else if (o->status == UST_LTTNG_CFI_PENDING) {
		c->flags |= UST_ABI_STACK_F_NO_TABLE;
	}
	if (row)
		row_remember(key, row);
have_row:
	if (ust_cfi_row_fp(row)) {
		ret = ust_cfi_step_norule(c, s, row);
		if (ret == UST_CFI_STEP_NEXT)
			c->flags |= UST_ABI_STACK_F_FP;
		bad = UST_ABI_STACK_F_NO_UNWIND;
	} else {
		ret = ust_cfi_step_row(c, s, row);
		/* A signal frame is by CFI whatever its reads gave. */
		if (ret <= UST_CFI_STEP_BOTTOM || row->cfa_type == UST_CFI_CFA_SIGNAL)
			c->flags |= UST_ABI_STACK_F_CFI;
		bad = UST_ABI_STACK_F_BAD_CFA;
	}
	switch (ret) {
	case UST_CFI_STEP_NEXT:
		return false;
	case UST_CFI_STEP_BOTTOM:
		c->flags |= UST_ABI_STACK_F_BOTTOM;
		break;
	case UST_CFI_STEP_BAD:
		c->flags |= bad;
		break;
	case UST_CFI_STEP_FAULT:
		c->flags |= UST_ABI_STACK_F_FAULT;
		break;
	}
	return true;
}

/* Whether a return address @ip points into code (see the top of the file). */
NO_ASAN static bool is_code(struct wctx *c, uintptr_t ip)
{
	if (ip - 1 >= c->r.sp && ip - 1 < c->r.hi)
		return false;
	return obj_of(c, ip - 1) || exec_mapped(ip - 1);
}

NO_ASAN static int walk_cfi(struct wctx *c, uintptr_t ip, uintptr_t *out, int max)
{
	uintptr_t regs[4];
	struct ust_cfi_regs s;
	int k, n = 0;

	ust_cfi_regs_here(regs);
	if (regs[1] < c->r.sp)
		c->r.sp = regs[1];	/* our own frames are read directly too */
	ust_cfi_regs_init(&s, regs[0], regs[1], regs[2], regs[3]);
	s.ip_exact = 0;		/* regs[0] is our return address */
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
		if (n && !s.ip_exact && !is_code(c, s.ip)) {
			c->flags |= UST_ABI_STACK_F_NOT_EXEC;
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
