// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_bpfu_park (lib/record/bpfu_park.c): a walk the BPF
 * unwinder parked, finished by the recorder from the copied stack.
 *
 * The stack is this test's own: a chain of four functions captures its
 * registers (a stub, as the LTTng provider's walk does) and copies its
 * stack from rsp to the end of the [stack] mapping with
 * process_vm_readv() (a memcpy would trip ASan on the redzones of other
 * frames), as the BPF side copies a task's.  The continuation, given the
 * tables of this process's files (lib/cfi, built here), must come back
 * with the return addresses the chain saw (__builtin_return_address(),
 * independent of any unwinder), placed in their files as /proc/self/maps
 * says, and reach _start (BOTTOM).  A table not built yet makes it wait
 * without changing the stack, or (given up) walk on by frame pointers
 * with NO_TABLE; a short copy cuts the stack (FAULT); records of the wrong
 * size are refused.  A sparse copy (only the words a walk may use, as
 * the BPF side sends it) is put back word for word and walks to the same
 * frames; a return address it dropped stops the walk where the whole copy's
 * stops.  Then the queue: a parked stack is paired with its
 * PARK record by task and seq, emitted at once when its tables are there,
 * queued while one is pending, emitted when it came or when it waited too
 * long, and emitted as the walk left it when its copy never came.  And
 * the report's header line for such stacks.
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/abi.h"
#include "ustitch/bpfu.h"
#include "ustitch/cfi.h"
#include "ustitch/render.h"
#include "ustitch/sb.h"
#include "bpfu_park.h"
#include "park_sparse.h"
#include "self_maps.h"

/* --- this process's mappings and tables ---------------------------------- */

struct env_ctx {
	struct ust_cfi_cache *cache;
	uint64_t pending_ino;		/* this file's table "not built yet" */
	uint32_t pending_dev;
	int needs;			/* need() calls */
};

static int env_table(void *ctx, uint32_t dev, uint64_t ino, const struct ust_cfi_table **t)
{
	struct env_ctx *e = ctx;
	char line[4096], err[200];
	int ret = UST_BPFU_CFI_NONE;
	FILE *f;

	*t = NULL;
	if (ino == e->pending_ino && dev == e->pending_dev)
		return UST_BPFU_CFI_PENDING;
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long i;
		unsigned int maj, min;
		char path[512] = "";

		if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %511s", &maj, &min, &i, path) < 4)
			continue;
		if (i != ino || UST_ABI_MKKDEV(maj, min) != dev || path[0] != '/')
			continue;
		if (!ust_cfi_cache_get_path(e->cache, path, t, err, sizeof(err)))
			ret = UST_BPFU_CFI_READY;
		break;
	}
	fclose(f);
	return ret;
}

static bool env_place(void *ctx, uint32_t tgid, uint64_t addr, uint64_t *off, uint64_t *ino,
		      uint32_t *dev)
{
	struct self_mapping m;

	(void)ctx;
	assert_int_equal(tgid, getpid());
	if (!self_mapping(addr, NULL, &m) || !m.exec || !m.ino)
		return false;
	*off = addr - m.start + (m.pgoff << 12);
	*ino = m.ino;
	*dev = m.kdev;
	return true;
}

static void env_need(void *ctx, uint32_t tgid, const struct ust_bpfu_park_vma *v)
{
	(void)tgid;
	(void)v;
	((struct env_ctx *)ctx)->needs++;
}

static struct env_ctx ectx;
static const struct ust_bpfu_park_env env = {
	.table = env_table, .place = env_place, .need = env_need, .ctx = &ectx,
};

/* --- the captured stack --------------------------------------------------- */

#define CHAIN	4
static uint64_t chain_ra[CHAIN];	/* each link's return address, innermost first */
static uint64_t frame0;			/* the parked frame's ip: after the stub's call */
static struct ust_bpfu_rec_park *captured;
static size_t captured_size;

/* The stack from rsp up, as bpfu.bpf.c copies it: to the VMA's end, at most the cap. */
__attribute__((noinline)) static void capture(void)
{
	uintptr_t regs[4];
	struct ust_bpfu_rec_park *p;
	struct iovec local, remote;
	struct self_mapping stack;
	size_t len;

	ust_cfi_regs_here(regs);
	chain_ra[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	assert_true(self_mapping(regs[1], NULL, &stack));
	len = stack.end - regs[1];
	if (len > UST_BPFU_PARK_CAP)
		len = UST_BPFU_PARK_CAP;
	p = calloc(1, sizeof(*p) + len);
	assert_non_null(p);
	local.iov_base = p->bytes;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)regs[1];
	remote.iov_len = len;
	assert_int_equal(process_vm_readv(getpid(), &local, 1, &remote, 1, 0), (ssize_t)len);
	p->h.kind = UST_BPFU_REC_PARK;
	p->h.tid = (uint32_t)getpid();
	p->h.tgid = (uint32_t)getpid();
	p->seq = 7;
	p->ip = regs[0];
	p->sp = regs[1];
	p->bp = regs[2];
	p->bx = regs[3];
	p->regs = UST_BPFU_PARK_BP_OK | UST_BPFU_PARK_BX_OK;	/* ip: a return address */
	p->stack_end = stack.end;
	p->len = (uint32_t)len;
	frame0 = regs[0];
	captured = p;
	captured_size = sizeof(*p) + len;
	__asm__ volatile("" ::: "memory");	/* no tail call: this frame stays */
}

#define LINK(n, next)									\
	__attribute__((noinline)) static void link##n(void)				\
	{										\
		next();									\
		chain_ra[n] = (uint64_t)(uintptr_t)__builtin_return_address(0);		\
		__asm__ volatile("" ::: "memory");					\
	}
LINK(1, capture)
LINK(2, link1)
LINK(3, link2)

static void expect_frame(const struct ust_bpfu_frame *f, uint64_t addr, const char *what)
{
	struct self_mapping m;

	assert_true(self_mapping(addr, NULL, &m));
	if (f->off != addr - m.start + (m.pgoff << 12) || f->ino != m.ino || f->dev != m.kdev)
		fail_msg("%s: frame off 0x%llx ino %llu dev %u, want 0x%llx ino %llu dev %u", what,
			 (unsigned long long)f->off, (unsigned long long)f->ino, f->dev,
			 (unsigned long long)(addr - m.start + (m.pgoff << 12)),
			 (unsigned long long)m.ino, m.kdev);
	assert_int_equal(f->raw, 0);
}

static int setup(void **state)
{
	(void)state;
	ectx.cache = ust_cfi_cache_new(NULL, "");	/* no disk cache */
	assert_non_null(ectx.cache);
	link3();
	assert_non_null(captured);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ust_cfi_cache_free(ectx.cache);
	free(captured);
	return 0;
}

/* The file of libc's code, by a function of it none intercepts (ASan's fopen is its own). */
static void libc_file(uint64_t *ino, uint32_t *dev)
{
	struct self_mapping m;

	assert_true(self_mapping((uint64_t)(uintptr_t)&gnu_get_libc_version, NULL, &m));
	*ino = m.ino;
	*dev = m.kdev;
}

static uint32_t whole_nr;	/* frames of the whole walk, for the tests after it */

static void test_whole(void **state)
{
	struct ust_bpfu_frame fr[UST_BPFU_MAX_FRAMES];
	uint32_t nr = 0, flags = UST_BPFU_F_PARKED | UST_BPFU_F_NO_TABLE, i;
	uint64_t libc_ino, used = 0;
	uint32_t libc_dev;
	struct self_mapping self;
	bool in_libc = false;

	(void)state;
	ectx.pending_ino = 0;
	assert_true(ust_bpfu_park_fits(captured, captured_size));
	assert_int_equal(ust_bpfu_park_walk(captured, &env, false, fr, &nr, &flags, &used), 0);
	/* Up to _start's CFA: all of it in the copy. */
	assert_true(used > 0 && used <= captured->len);
	assert_true(nr >= CHAIN + 3);	/* the chain, the test runner, libc, _start */
	expect_frame(&fr[0], frame0, "frame 0 (in capture)");
	expect_frame(&fr[1], chain_ra[0], "capture's caller");
	expect_frame(&fr[2], chain_ra[1], "link1's caller");
	expect_frame(&fr[3], chain_ra[2], "link2's caller");
	expect_frame(&fr[4], chain_ra[3], "link3's caller");
	/* The outermost frame: _start, in this program, after libc's __libc_start_call_main. */
	libc_file(&libc_ino, &libc_dev);
	for (i = 0; i < nr; i++)
		in_libc |= fr[i].ino == libc_ino && fr[i].dev == libc_dev;
	if (!in_libc)
		fail_msg("no frame in libc: %u frames, flags 0x%x, %llu stack bytes read of %u copied",
			 nr, flags, (unsigned long long)used, captured->len);
	assert_true(self_mapping((uint64_t)(uintptr_t)&capture, NULL, &self));
	assert_int_equal(fr[nr - 1].ino, self.ino);
	assert_int_equal(flags & ~UST_BPFU_F_FP,
			 UST_BPFU_F_PARKED | UST_BPFU_F_CFI | UST_BPFU_F_BOTTOM);
	whole_nr = nr;
}

static void test_wait_then_give_up(void **state)
{
	struct ust_bpfu_frame fr[UST_BPFU_MAX_FRAMES];
	uint32_t nr = 0, flags = UST_BPFU_F_PARKED | UST_BPFU_F_NO_TABLE;

	(void)state;
	libc_file(&ectx.pending_ino, &ectx.pending_dev);
	memset(fr, 0xab, sizeof(fr));
	assert_int_equal(ust_bpfu_park_walk(captured, &env, false, fr, &nr, &flags, NULL),
			 UST_BPFU_PARK_WAIT);
	assert_int_equal(nr, 0);
	assert_int_equal(flags, UST_BPFU_F_PARKED | UST_BPFU_F_NO_TABLE);
	assert_int_equal(fr[0].off, 0xababababababababULL);
	/* Given up: libc by frame pointers, which it has not; the chain is whole still. */
	assert_int_equal(ust_bpfu_park_walk(captured, &env, true, fr, &nr, &flags, NULL), 0);
	assert_true(nr >= CHAIN + 1);
	expect_frame(&fr[4], chain_ra[3], "link3's caller");
	assert_true(flags & UST_BPFU_F_NO_TABLE);
	assert_true(flags & UST_BPFU_F_PARKED);
	assert_false(flags & UST_BPFU_F_BOTTOM);
	ectx.pending_ino = 0;
	ectx.pending_dev = 0;
}

static void test_short_copy(void **state)
{
	struct ust_bpfu_frame fr[UST_BPFU_MAX_FRAMES];
	uint32_t nr = 0, flags = UST_BPFU_F_PARKED, len = captured->len;
	uint64_t used = 0;

	(void)state;
	/* 16 bytes: not even capture's frame; frame 0 is recorded, its step reads beyond. */
	captured->len = 16;
	assert_int_equal(ust_bpfu_park_walk(captured, &env, false, fr, &nr, &flags, &used), 0);
	captured->len = len;
	assert_true(used > 16);	/* it wanted more than the copy held */
	expect_frame(&fr[0], frame0, "frame 0 (in capture)");
	assert_true(nr < whole_nr);
	assert_true(flags & UST_BPFU_F_FAULT);
	assert_false(flags & UST_BPFU_F_BOTTOM);
}

static void test_fits(void **state)
{
	struct ust_bpfu_rec_park p = { .h.kind = UST_BPFU_REC_PARK };

	(void)state;
	assert_true(ust_bpfu_park_fits(&p, sizeof(p)));
	assert_false(ust_bpfu_park_fits(&p, sizeof(p) - 1));
	p.len = 1;
	assert_false(ust_bpfu_park_fits(&p, sizeof(p)));
	p.len = 0;
	p.nr = UST_BPFU_MAX_FRAMES + 1;
	assert_false(ust_bpfu_park_fits(&p, sizeof(p)));
	p.nr = 0;
	p.h.kind = UST_BPFU_REC_STACK;
	assert_false(ust_bpfu_park_fits(&p, sizeof(p)));
}

/* --- sparse copies ------------------------------------------------------------ */

/* This process's layout, as the BPF side reads it from its mm. */
static void self_layout(struct park_layout *l)
{
	char line[4096], *s, *tok;
	unsigned long v;
	int field = 2;
	FILE *f = fopen("/proc/self/stat", "r");

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	s = strrchr(line, ')');
	assert_non_null(s);
	for (tok = strtok(s + 2, " "); tok; tok = strtok(NULL, " ")) {
		v = strtoul(tok, NULL, 10);
		if (++field == 26)
			l->start_code = v;
		else if (field == 27)
			l->end_code = v;
	}
	l->brk = (uint64_t)(uintptr_t)sbrk(0);
	l->task_size = (1ULL << 47) - 4096;
}

/* Walk @p (whole) to the end: its frames and flags. */
static uint32_t walk_all(const struct ust_bpfu_rec_park *p, struct ust_bpfu_frame *fr, uint32_t *flags)
{
	uint32_t nr = 0;

	*flags = UST_BPFU_F_PARKED | UST_BPFU_F_NO_TABLE;
	assert_int_equal(ust_bpfu_park_walk(p, &env, false, fr, &nr, flags, NULL), 0);
	return nr;
}

/* @whole made sparse, checked and put back: the copy, equal word for word. */
static struct ust_bpfu_rec_park *sparse_round_trip(const struct ust_bpfu_rec_park *whole, size_t *sparse_size)
{
	struct park_layout l;
	struct ust_bpfu_rec_park *sp, *back;
	uint64_t a, b;
	size_t i;

	self_layout(&l);
	sp = park_sparse(whole, &l, sparse_size);
	assert_non_null(sp);
	assert_true(ust_bpfu_park_fits(sp, *sparse_size));
	assert_true(sp->kept > 0 && sp->kept < whole->len / 8);
	/* Only a whole copy walks. */
	{
		struct ust_bpfu_frame fr[UST_BPFU_MAX_FRAMES];
		uint32_t nr = 0, flags = 0;

		assert_int_equal(ust_bpfu_park_walk(sp, &env, false, fr, &nr, &flags, NULL), -EINVAL);
	}
	back = ust_bpfu_park_copy(sp);
	assert_non_null(back);
	assert_false(back->regs & UST_BPFU_PARK_SPARSE);
	assert_int_equal(back->len, whole->len & ~7u);
	for (i = 0; i < back->len / 8; i++) {
		memcpy(&a, whole->bytes + 8 * i, 8);
		memcpy(&b, back->bytes + 8 * i, 8);
		if (UST_BPFU_PARK_WORD_KEEP(a, l.start_code, l.end_code, l.brk, l.task_size))
			assert_int_equal(b, a);
		else
			assert_int_equal(b, a ? UST_BPFU_PARK_JUNK : 0);
	}
	free(sp);
	return back;
}

static void test_sparse(void **state)
{
	struct ust_bpfu_frame whole[UST_BPFU_MAX_FRAMES], fr[UST_BPFU_MAX_FRAMES];
	struct ust_bpfu_rec_park *back;
	uint32_t wflags, flags, nr, i;
	size_t size;

	(void)state;
	ectx.pending_ino = 0;
	back = sparse_round_trip(captured, &size);
	printf("sparse copy: %zu bytes for %u of stack\n", size - sizeof(*back), captured->len);
	nr = walk_all(back, fr, &flags);
	assert_int_equal(walk_all(captured, whole, &wflags), nr);
	assert_int_equal(nr, whole_nr);
	assert_int_equal(flags, wflags);
	for (i = 0; i < nr; i++) {
		assert_int_equal(fr[i].off, whole[i].off);
		assert_int_equal(fr[i].ino, whole[i].ino);
	}
	free(back);
}

/* A return address that is no address: both copies stop at it, neither at the bottom. */
static void test_sparse_junk(void **state)
{
	struct ust_bpfu_frame whole[UST_BPFU_MAX_FRAMES], fr[UST_BPFU_MAX_FRAMES];
	struct ust_bpfu_rec_park *bad = malloc(captured_size), *back;
	uint32_t wflags, flags, nr, i;
	uint64_t v, junk = 1234;
	size_t size;

	(void)state;
	assert_non_null(bad);
	memcpy(bad, captured, captured_size);
	for (i = 0; i + 8 <= bad->len; i += 8) {
		memcpy(&v, bad->bytes + i, 8);
		if (v == chain_ra[1])
			break;
	}
	assert_true(i + 8 <= bad->len);	/* link1's return address, in the copy */
	memcpy(bad->bytes + i, &junk, 8);
	back = sparse_round_trip(bad, &size);
	nr = walk_all(back, fr, &flags);
	assert_int_equal(walk_all(bad, whole, &wflags), nr);
	assert_true(nr < whole_nr);
	assert_false(flags & UST_BPFU_F_BOTTOM);
	assert_false(wflags & UST_BPFU_F_BOTTOM);
	free(back);
	free(bad);
}

static void test_sparse_fits(void **state)
{
	struct ust_bpfu_rec_park *sp;
	struct park_layout l;
	uint8_t *map, bit;
	size_t size, i;

	(void)state;
	self_layout(&l);
	sp = park_sparse(captured, &l, &size);
	assert_non_null(sp);
	assert_true(ust_bpfu_park_fits(sp, size));
	assert_false(ust_bpfu_park_fits(sp, size - 1));
	assert_false(ust_bpfu_park_fits(sp, size + 8));
	/*
	 * The bitmap counts one word fewer than kept says. (Not kept++ with
	 * size + 8: the bitmaps are then read 8 bytes on, and whether their
	 * bits happen to add up depends on this run's stack.)
	 */
	map = sp->bytes + (size_t)sp->kept * 8;
	for (i = 0; !map[i]; i++)
		;
	bit = map[i] & -map[i];
	map[i] &= ~bit;
	assert_false(ust_bpfu_park_fits(sp, size));
	map[i] |= bit;
	assert_true(ust_bpfu_park_fits(sp, size));
	sp->len += 4;		/* not whole words */
	assert_false(ust_bpfu_park_fits(sp, size));
	sp->len = UST_BPFU_PARK_CAP + 64;
	assert_false(ust_bpfu_park_fits(sp, size));
	free(sp);
}

/* --- the queue --------------------------------------------------------------- */

struct emitted {
	int n;
	uint64_t cookie[4];
	uint32_t flags[4], nr[4];
	struct ust_bpfu_frame first[4];
};

static int on_emit(void *ctx, const struct ust_bpfu_rec_hdr *h, uint32_t flags,
		   const struct ust_bpfu_frame *frames, uint32_t nr)
{
	struct emitted *e = ctx;

	assert_true(e->n < 4);
	e->cookie[e->n] = h->cookie;
	e->flags[e->n] = flags;
	e->nr[e->n] = nr;
	e->first[e->n] = frames[0];
	e->n++;
	return 0;
}

/* A STACK record parked after one frame, and its PARK record's copy. */
static struct ust_bpfu_rec_stack *parked_stack(uint64_t cookie, uint64_t seq)
{
	struct ust_bpfu_rec_stack *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->h.kind = UST_BPFU_REC_STACK;
	s->h.tid = s->h.tgid = (uint32_t)getpid();
	s->h.cookie = cookie;
	s->flags = UST_BPFU_F_PARKED | UST_BPFU_F_NO_TABLE | UST_BPFU_F_IMMEDIATE;
	s->nr = 1;
	s->seq = seq;
	s->frames[0].off = 0x1234;
	s->frames[0].ino = 99;
	s->frames[0].dev = 3;
	return s;
}

static void keep_park(struct ust_bpfu_park *k, uint64_t seq)
{
	captured->seq = seq;
	captured->nr = 1;
	assert_int_equal(ust_bpfu_park_keep(k, captured, captured_size), 0);
}

static void test_queue(void **state)
{
	struct ust_bpfu_park *k = ust_bpfu_park_new(&env, 2000000000ULL, 64u << 20);
	struct ust_bpfu_rec_stack *s1 = parked_stack(0x11, 1), *s2 = parked_stack(0x21, 2),
				  *s3 = parked_stack(0x31, 3), *s4 = parked_stack(0x41, 4);
	struct ust_bpfu_park_stats st;
	struct emitted e = { 0 };

	(void)state;
	assert_non_null(k);
	/* Tables there: emitted at once, the walk's frame first. */
	keep_park(k, 1);
	assert_int_equal(ust_bpfu_park_stack(k, s1, s1->frames, 1000, on_emit, &e), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.cookie[0], 0x11);
	assert_int_equal(e.nr[0], whole_nr + 1);
	assert_int_equal(e.first[0].off, 0x1234);
	assert_int_equal(e.flags[0] & ~UST_BPFU_F_FP, UST_BPFU_F_PARKED | UST_BPFU_F_CFI |
			 UST_BPFU_F_BOTTOM | UST_BPFU_F_IMMEDIATE);

	/* libc pending: queued; served when it came. */
	libc_file(&ectx.pending_ino, &ectx.pending_dev);
	keep_park(k, 2);
	assert_int_equal(ust_bpfu_park_stack(k, s2, s2->frames, 2000, on_emit, &e), 0);
	assert_int_equal(e.n, 1);
	ust_bpfu_park_stats(k, &st);
	assert_true(st.queued_bytes > captured->len);
	assert_int_equal(ust_bpfu_park_serve(k, 3000, false, on_emit, &e), 0);
	assert_int_equal(e.n, 1);
	ectx.pending_ino = 0;
	ectx.pending_dev = 0;
	assert_int_equal(ust_bpfu_park_serve(k, 4000, false, on_emit, &e), 0);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.cookie[1], 0x21);
	assert_int_equal(e.nr[1], whole_nr + 1);
	assert_false(e.flags[1] & UST_BPFU_F_NO_TABLE);

	/* Pending longer than the wait: by frame pointers, NO_TABLE kept. */
	libc_file(&ectx.pending_ino, &ectx.pending_dev);
	keep_park(k, 3);
	assert_int_equal(ust_bpfu_park_stack(k, s3, s3->frames, 5000, on_emit, &e), 0);
	assert_int_equal(ust_bpfu_park_serve(k, 5000 + 2000000001ULL, false, on_emit, &e), 0);
	assert_int_equal(e.n, 3);
	assert_int_equal(e.cookie[2], 0x31);
	assert_true(e.flags[2] & UST_BPFU_F_NO_TABLE);
	assert_true(e.flags[2] & UST_BPFU_F_PARKED);
	ectx.pending_ino = 0;
	ectx.pending_dev = 0;

	/* Its copy is another stack's (seq 9): as the walk left it, not LATER. */
	keep_park(k, 9);
	assert_int_equal(ust_bpfu_park_stack(k, s4, s4->frames, 6000, on_emit, &e), 0);
	assert_int_equal(e.n, 4);
	assert_int_equal(e.nr[3], 1);
	assert_int_equal(e.flags[3], UST_BPFU_F_NO_TABLE | UST_BPFU_F_IMMEDIATE);

	ust_bpfu_park_stats(k, &st);
	assert_int_equal(st.later, 3);
	assert_int_equal(st.not_in_time, 1);
	assert_int_equal(st.lost, 1);
	assert_int_equal(st.queued_bytes, 0);
	assert_int_equal(ectx.needs, 0);
	ust_bpfu_park_free(k);
	free(s1);
	free(s2);
	free(s3);
	free(s4);
}

/* What the report's header line says of a stack finished after recording. */
static void expect_header(uint32_t flags, const char *want)
{
	struct ust_sb sb;

	ust_sb_init(&sb);
	ust_render_stack_flags(flags, &sb);
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, want);
	ust_sb_fini(&sb);
}

static void test_header(void **state)
{
	(void)state;
	expect_header(UST_ABI_STACK_F_LATER | UST_ABI_STACK_F_CFI | UST_ABI_STACK_F_BOTTOM,
		      "; complete, by CFI; walked on by the recorder from a copy of its stack");
	expect_header(UST_ABI_STACK_F_LATER | UST_ABI_STACK_F_NO_TABLE | UST_ABI_STACK_F_CFI |
		      UST_ABI_STACK_F_FP | UST_ABI_STACK_F_NOT_EXEC,
		      "; by CFI and frame pointers; a file's unwind table was not loaded in time: "
		      "walked on by frame pointers; cut short: a return address in no executable mapping");
	expect_header(UST_ABI_STACK_F_LATER | UST_ABI_STACK_F_CFI | UST_ABI_STACK_F_FAULT,
		      "; by CFI; walked on by the recorder from a copy of its stack; "
		      "cut short: beyond the stack copied for it");
	/* As before parks: the walk went on by frame pointers in BPF. */
	expect_header(UST_ABI_STACK_F_NO_TABLE | UST_ABI_STACK_F_FP | UST_ABI_STACK_F_FAULT,
		      "; by frame pointers; a file's unwind table was not loaded yet; "
		      "cut short: a stack read failed");
	/* The recorder's flag is the public one, and stack_flags records carry it. */
	assert_int_equal(UST_BPFU_STACK_LATER, UST_ABI_STACK_F_LATER);
	assert_int_equal(UST_BPFU_F_PARKED, UST_ABI_STACK_F_LATER);
	assert_true(UST_BPFU_STACK_ABI_MASK & UST_BPFU_STACK_LATER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_wait_then_give_up),
		cmocka_unit_test(test_short_copy),
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_sparse),
		cmocka_unit_test(test_sparse_junk),
		cmocka_unit_test(test_sparse_fits),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_header),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
