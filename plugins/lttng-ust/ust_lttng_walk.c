// SPDX-License-Identifier: LGPL-2.1
/*
 * The frame-pointer walk, bounded and unable to fault.
 *
 * Where it starts: the context callbacks run inside lttng-ust, which is
 * built without frame pointers, so our own frame chain is broken there.
 * The tracepoint probe, though, is compiled into the application (with
 * its flags) and keeps its probe context on its own frame; its return
 * address is the context's ip.  Scanning up from the probe context for
 * the slot holding that ip finds the probe's frame record: the word
 * below it is the caller's frame pointer.  The walk goes on from there.
 *
 * How it reads: a word between the current stack pointer and the top of
 * this thread's stack (ust_lttng_stack_bounds) is mapped, and is read
 * directly.  Anything else (an alternate signal stack, a thread whose
 * bounds are unknown, a corrupt chain) is read with process_vm_readv,
 * which fails with EFAULT instead of faulting.  Frame pointers must
 * increase while they stay on the known stack, and the walk stops at
 * UST_LTTNG_MAX_FRAMES, at a zero or misaligned frame pointer, at our
 * thread-start wrapper and at the first failed read.
 */
#include <sys/uio.h>

#include "ust_lttng.h"

#define PROBE_FRAME_SCAN	4096	/* bytes above the probe context */
#define SCAN_CHUNK		32	/* words per process_vm_readv */
#define DELTA_SLOTS		256

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
__attribute__((no_sanitize("address")))
static bool read_words(const struct rd *r, uintptr_t addr, uintptr_t *out, size_t n)
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

/* The probe's frame record: the address of its saved frame pointer. */
__attribute__((no_sanitize("address")))
static uintptr_t find_probe_frame(const struct rd *r, uintptr_t pctx, uintptr_t ip)
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

__attribute__((no_sanitize("address")))
int ust_lttng_walk(const void *pctx, uintptr_t ip, uintptr_t *out, int max)
{
	struct rd r;
	uintptr_t rec, fp, wrap_fp, w[2];
	int n = 0;

	if (!pctx || !ip || max <= 0)
		return 0;
	r.sp = (uintptr_t)__builtin_frame_address(0);
	ust_lttng_stack_bounds(r.sp, &r.hi, &wrap_fp);
	rec = find_probe_frame(&r, (uintptr_t)pctx, ip);
	if (!rec || !read_words(&r, rec, w, 1))
		return 0;
	out[n++] = ip;
	fp = w[0];
	while (n < max && fp && !(fp & 7)) {
		uintptr_t next, ret;

		if (__builtin_expect(fp >= r.sp && fp < r.hi && r.hi - fp >= 2 * sizeof(uintptr_t), 1)) {
			/* On this thread's stack, below its top: mapped. */
			next = ((const uintptr_t *)fp)[0];
			ret = ((const uintptr_t *)fp)[1];
		} else if (read_words(&r, fp, w, 2)) {
			next = w[0];
			ret = w[1];
		} else {
			break;
		}
		if (!ret)
			break;
		if (wrap_fp && next == wrap_fp)
			break;	/* ret returns into our thread-start wrapper */
		out[n++] = ret;
		/* On the known stack the chain must go up and stay below its
		 * top.  A frame off it (a handler on an alternate stack) may
		 * jump anywhere; such a walk is bounded by max like any other. */
		if (r.hi && fp >= r.sp && fp < r.hi && next && (next <= fp || next >= r.hi))
			break;
		fp = next;
	}
	return n;
}
