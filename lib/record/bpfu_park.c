// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfu_park: walks the BPF unwinder parked, finished here.
 *
 * A file seen for the first time (a dlopen, a program started before its
 * tables could be loaded) has no table in the BPF maps when the walk
 * meets it; the walk asks for it (NEED_CFI) but cannot wait: by frame
 * pointers, code built without them ends the stack there.  So the walk
 * parks instead (bpf/bpfu_walk.bpf.h): it sends the parked frame's
 * registers, the VMAs it knew and the user stack from that frame's rsp
 * up (a PARK record), then the frames it has (a STACK record with
 * UST_BPFU_F_PARKED).  Here the walk goes on once the table is built,
 * by the same step as the BPF walk and the LTTng provider's
 * (bpf/ust_cfi_step.h), reading the copy instead of the task's memory,
 * and the stack is handed on as the BPF walk would have made it, with
 * UST_BPFU_F_PARKED kept: the stack_flags record says it was finished
 * after recording (UST_ABI_STACK_F_LATER).
 *
 * Tables come from the recorder (bpfu_cfi.c; one too big for the map is
 * used here all the same).  NEED_CFI records are served as they are read
 * and come before the PARK that met the file, so most parked stacks are
 * finished as soon as they arrive; a table another CPU asked for a moment
 * later, or one whose first try failed, makes the stack wait: it is
 * queued and tried again after each batch of records.  A stack waits
 * wait_ns at most (and the queue holds max_bytes at most), then walks on
 * by frame pointers over the copy and keeps NO_TABLE; at the end of the
 * recording every one still waiting does.  The copies never reach the
 * trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/cfi.h"
#include "ustitch/hmap.h"
#include "bpfu_park.h"

/* The step's rules (bpf/ust_cfi_step.h), reading the park's copy of the stack. */
struct park_walk;
static inline int park_read(struct park_walk *c, __u64 addr, __u64 *val);
#define UST_CFI_STEP_CTX		struct park_walk
#define UST_CFI_STEP_READ(c, a, v)	park_read((c), (a), (v))
#include "ust_cfi_step.h"

struct park_loc {
	uint64_t off;		/* the address's file offset */
	uint64_t ino;		/* 0: anonymous memory, or the vDSO */
	uint32_t dev;
	bool exec;
	bool vdso;
};

struct park_walk {
	const struct ust_bpfu_rec_park *p;
	const struct ust_bpfu_park_env *env;
	bool give_up;
	bool asked;		/* env->need called in this try (once per try) */
	__u64 top;		/* the highest stack byte read, + 1 */
	uint32_t flags;		/* UST_BPFU_F_* of the walk from the parked frame */
};

/* The 8 bytes at @addr, if the copy holds them: 0, or -1 (the step's FAULT). */
static inline int park_read(struct park_walk *c, __u64 addr, __u64 *val)
{
	const struct ust_bpfu_rec_park *p = c->p;
	__u64 d = addr - p->sp;

	if (addr >= p->sp && d + sizeof(*val) > c->top - p->sp && d < (1ULL << 32))
		c->top = addr + sizeof(*val);	/* read or not: what the walk wanted */
	if (addr < p->sp || d > p->len || p->len - d < sizeof(*val))
		return -1;
	memcpy(val, p->bytes + d, sizeof(*val));
	return 0;
}

/* The words a sparse park's kept bitmap @map of @nb bytes says bytes[] holds. */
static size_t kept_words(const uint8_t *map, size_t nb)
{
	size_t i, n = 0;

	for (i = 0; i < nb; i++)
		n += (size_t)__builtin_popcount(map[i]);
	return n;
}

bool ust_bpfu_park_fits(const void *data, size_t size)
{
	const struct ust_bpfu_rec_park *p = data;
	size_t nb;

	if (size < sizeof(*p) || p->h.kind != UST_BPFU_REC_PARK || p->nr > UST_BPFU_MAX_FRAMES)
		return false;
	if (!(p->regs & UST_BPFU_PARK_SPARSE))
		return p->len <= size - sizeof(*p);
	/* The kept words, then the two bitmaps, nothing else; len whole words. */
	nb = UST_BPFU_PARK_MAP_BYTES((size_t)p->len);
	return p->len % 8 == 0 && p->len <= UST_BPFU_PARK_CAP && p->kept <= p->len / 8 &&
	       size - sizeof(*p) == (size_t)p->kept * 8 + 2 * nb &&
	       kept_words(p->bytes + (size_t)p->kept * 8, nb) == p->kept;
}

/*
 * A sparse park's stack is put back (UST_BPFU_PARK_SPARSE, ust_bpfu_abi.h):
 * the kept words where they were, 0 where the word was 0, and where it was
 * junk an address no walk can use, so that a walk reading it stops as it
 * would have at the word itself.
 */
struct ust_bpfu_rec_park *ust_bpfu_park_copy(const struct ust_bpfu_rec_park *p)
{
	size_t nb = UST_BPFU_PARK_MAP_BYTES((size_t)p->len), i, k = 0;
	const uint8_t *kept = p->bytes + (size_t)p->kept * 8, *junk = kept + nb;
	struct ust_bpfu_rec_park *c = malloc(sizeof(*p) + p->len);
	uint64_t v;

	if (!c)
		return NULL;
	if (!(p->regs & UST_BPFU_PARK_SPARSE)) {
		memcpy(c, p, sizeof(*p) + p->len);
		return c;
	}
	memcpy(c, p, sizeof(*p));
	for (i = 0; i < p->len / 8; i++) {
		if (kept[i / 8] & (1U << (i % 8)))
			memcpy(&v, p->bytes + 8 * k++, sizeof(v));
		else
			v = junk[i / 8] & (1U << (i % 8)) ? UST_BPFU_PARK_JUNK : 0;
		memcpy(c->bytes + 8 * i, &v, sizeof(v));
	}
	c->regs &= ~UST_BPFU_PARK_SPARSE;
	c->kept = 0;
	return c;
}

/*
 * Where @addr lies: the park's VMAs (the BPF walk's own, with the vDSO),
 * then the process's executable file mappings, then its parent's: a
 * child a shell or make forked runs the parent's code until its exec,
 * which may have replaced the child's mappings before the recorder read
 * them (a fork and exec take a millisecond).  False: in none.
 */
static bool locate(struct park_walk *c, uint64_t addr, struct park_loc *l)
{
	const struct ust_bpfu_rec_park *p = c->p;
	unsigned int i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < UST_BPFU_PARK_VMAS; i++) {
		const struct ust_bpfu_park_vma *v = &p->vmas[i];

		if (v->end <= v->start || addr < v->start || addr >= v->end)
			continue;
		l->off = addr - v->start + (v->pgoff << 12);
		l->ino = v->ino;
		l->dev = v->dev;
		l->exec = v->flags & UST_BPFU_PARK_VMA_EXEC;
		l->vdso = v->flags & UST_BPFU_PARK_VMA_VDSO;
		return true;
	}
	if (!c->env->place)
		return false;
	if (!c->env->place(c->env->ctx, p->h.tgid, addr, &l->off, &l->ino, &l->dev) &&
	    (!p->ptgid || p->ptgid == p->h.tgid ||
	     !c->env->place(c->env->ctx, p->ptgid, addr, &l->off, &l->ino, &l->dev)))
		return false;
	l->exec = true;
	return true;
}

/*
 * The row ruling the frame at @r (its pc in @l's file), or NULL for frame
 * pointers.  -EAGAIN: its table is not built yet, and the walk waits.
 */
static int row_of(struct park_walk *c, const struct ust_cfi_regs *r, const struct park_loc *l,
		  const struct ust_cfi_row **row)
{
	const struct ust_cfi_table *t = NULL;
	uint64_t pc = ust_cfi_regs_pc(r), off;
	uint64_t ino = l->vdso ? UST_BPFU_CFI_VDSO_INO : l->ino;
	uint32_t dev = l->vdso ? 0 : l->dev;
	int state;

	*row = NULL;
	if (!ino)
		return 0;	/* anonymous memory, JIT: frame pointers */
	state = c->env->table(c->env->ctx, dev, ino, &t);
	if (state == -ENOENT && c->env->need && !c->asked) {
		struct ust_bpfu_park_vma v = { .ino = ino, .dev = dev };
		unsigned int i;

		/* The walk's own ask failed (the mapping was gone): ask again. */
		for (i = 0; i < UST_BPFU_PARK_VMAS; i++)
			if (c->p->vmas[i].ino == l->ino && c->p->vmas[i].dev == l->dev &&
			    c->p->vmas[i].end > c->p->vmas[i].start)
				v = c->p->vmas[i];
		c->asked = true;
		c->env->need(c->env->ctx, c->p->h.tgid, &v);
		state = c->env->table(c->env->ctx, dev, ino, &t);
	}
	if (state == UST_BPFU_CFI_READY && t) {
		/* pc is ip - 1 for a return address: its offset likewise. */
		off = l->off - (r->ip - pc);
		if (off <= 0xffffffffULL)	/* a row's offset is 32 bits */
			*row = ust_cfi_lookup(t, off);
		return 0;
	}
	if (state == UST_BPFU_CFI_NONE)
		return 0;
	if (!c->give_up)
		return -EAGAIN;
	c->flags |= UST_BPFU_F_NO_TABLE;
	return 0;
}

/*
 * One frame, as ust_bpfu_walk_frame() (bpf/bpfu_walk.bpf.h) does it:
 * recorded as @f, then the step to its caller.  1: the walk ends; 0: go
 * on; -EAGAIN: a table to wait for.
 */
static int frame(struct park_walk *c, struct ust_cfi_regs *r, struct ust_bpfu_frame *f)
{
	const struct ust_cfi_row *row;
	struct park_loc l;
	bool in = locate(c, r->ip, &l);
	int ret;

	/* A return address points into code; frame 0 and a signal's ip are where the task was. */
	if (!r->ip_exact && (!in || !l.exec)) {
		c->flags |= UST_BPFU_F_NOT_EXEC;
		return 1;
	}
	if (in) {
		f->off = l.off;
		f->ino = l.ino;
		f->dev = l.dev;
	} else {
		f->off = r->ip;
		f->ino = 0;
		f->dev = 0;
	}
	f->raw = 0;
	if (!in)
		row = NULL;
	else if (row_of(c, r, &l, &row))
		return -EAGAIN;
	/*
	 * Frame 0 without a row: the BPF walk would look at its instruction
	 * for a return address at [sp] (ust_bpfu_walk_ra_at_sp()); the code
	 * is not in the copy, so frame pointers alone.
	 */
	if (ust_cfi_row_fp(row)) {
		ret = ust_cfi_step_norule(c, r, row);
		if (ret == UST_CFI_STEP_NEXT)
			c->flags |= UST_BPFU_F_FP;
		else if (ret == UST_CFI_STEP_BAD)
			c->flags |= UST_BPFU_F_NO_UNWIND;
	} else {
		ret = ust_cfi_step_row(c, r, row);
		/* A signal frame is by CFI whatever its reads gave. */
		if (ret <= UST_CFI_STEP_BOTTOM || row->cfa_type == UST_CFI_CFA_SIGNAL)
			c->flags |= UST_BPFU_F_CFI;
		if (ret == UST_CFI_STEP_BAD)
			c->flags |= UST_BPFU_F_BAD_CFA;
	}
	if (ret == UST_CFI_STEP_BOTTOM)
		c->flags |= UST_BPFU_F_BOTTOM;
	else if (ret == UST_CFI_STEP_FAULT)
		c->flags |= UST_BPFU_F_FAULT;	/* beyond the copy, most often */
	return ret != UST_CFI_STEP_NEXT;
}

int ust_bpfu_park_walk(const struct ust_bpfu_rec_park *p, const struct ust_bpfu_park_env *env,
		       bool give_up, struct ust_bpfu_frame *frames, uint32_t *nr, uint32_t *flags,
		       uint64_t *used)
{
	struct ust_bpfu_frame out[UST_BPFU_MAX_FRAMES];
	struct park_walk c = { .p = p, .env = env, .give_up = give_up, .top = p->sp };
	struct ust_cfi_regs r;
	uint32_t n = *nr;
	int ret;

	if (p->regs & UST_BPFU_PARK_SPARSE)
		return -EINVAL;

	if (n > UST_BPFU_MAX_FRAMES)
		n = UST_BPFU_MAX_FRAMES;
	ust_cfi_regs_init(&r, p->ip, p->sp, p->bp, p->bx);
	r.bp_ok = !!(p->regs & UST_BPFU_PARK_BP_OK);
	r.bx_ok = !!(p->regs & UST_BPFU_PARK_BX_OK);
	r.ip_exact = !!(p->regs & UST_BPFU_PARK_IP_EXACT);
	/* Saved registers the BPF walk had not read yet: read from the copy when a rule needs them. */
	r.bp_at = r.bp_ok ? p->bp_at : 0;
	r.bx_at = r.bx_ok ? p->bx_at : 0;
	/* Into a copy: a walk that waits leaves the stack as it was. */
	memcpy(out, frames, n * sizeof(*out));
	for (;;) {
		if (n >= UST_BPFU_MAX_FRAMES) {
			c.flags |= UST_BPFU_F_TRUNCATED;
			break;
		}
		ret = frame(&c, &r, &out[n]);
		if (ret < 0)
			return UST_BPFU_PARK_WAIT;
		/* Recorded unless a return address was found to be no frame. */
		if (!(c.flags & UST_BPFU_F_NOT_EXEC))
			n++;
		if (ret)
			break;
	}
	memcpy(frames, out, n * sizeof(*out));
	*nr = n;
	if (used)
		*used = c.top - p->sp;
	/* The walk's NO_TABLE was the park's: it stands only if a table did not come. */
	*flags = (*flags & ~UST_BPFU_F_NO_TABLE) | c.flags | UST_BPFU_F_PARKED;
	return 0;
}

/* --- parked stacks, paired and queued ----------------------------------- */

struct waiting {
	struct waiting *next;
	struct ust_bpfu_rec_hdr h;
	uint32_t flags;
	uint32_t nr;
	uint64_t since;			/* when it came (the recorder's clock) */
	struct ust_bpfu_rec_park *p;
	size_t bytes;			/* what this entry holds */
	struct ust_bpfu_frame frames[UST_BPFU_MAX_FRAMES];
};

struct ust_bpfu_park {
	struct ust_bpfu_park_env env;
	uint64_t wait_ns;
	size_t max_bytes;
	struct ust_hmap parks;		/* tid -> its last PARK record's copy, not yet taken */
	struct waiting *head, *tail;
	struct ust_bpfu_park_stats st;
};

struct ust_bpfu_park *ust_bpfu_park_new(const struct ust_bpfu_park_env *env, uint64_t wait_ns,
					size_t max_bytes)
{
	struct ust_bpfu_park *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->env = *env;
	k->wait_ns = wait_ns;
	k->max_bytes = max_bytes;
	ust_hmap_init(&k->parks);
	return k;
}

void ust_bpfu_park_free(struct ust_bpfu_park *k)
{
	struct waiting *w, *next;
	uint64_t tid, v;
	size_t pos;

	if (!k)
		return;
	for (pos = 0; ust_hmap_next(&k->parks, &pos, &tid, &v);)
		free((void *)(uintptr_t)v);
	ust_hmap_fini(&k->parks);
	for (w = k->head; w; w = next) {
		next = w->next;
		free(w->p);
		free(w);
	}
	free(k);
}

/* The park of @tid kept so far (taken: the map holds 0 for it then). */
static struct ust_bpfu_rec_park *take(struct ust_bpfu_park *k, uint32_t tid)
{
	uint64_t v = 0;

	if (!ust_hmap_get(&k->parks, tid, &v) || !v)
		return NULL;
	ust_hmap_put(&k->parks, tid, 0);
	return (struct ust_bpfu_rec_park *)(uintptr_t)v;
}

int ust_bpfu_park_keep(struct ust_bpfu_park *k, const struct ust_bpfu_rec_park *p, size_t size)
{
	struct ust_bpfu_rec_park *c, *old;

	(void)size;	/* ust_bpfu_park_fits() checked p->len against it */
	c = ust_bpfu_park_copy(p);
	if (!c)
		return -ENOMEM;
	/* A park whose stack never came (its record lost): this one replaces it. */
	old = take(k, p->h.tid);
	free(old);
	if (ust_hmap_put(&k->parks, p->h.tid, (uint64_t)(uintptr_t)c)) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

static void unlink_first(struct ust_bpfu_park *k, struct waiting *prev, struct waiting *w)
{
	if (prev)
		prev->next = w->next;
	else
		k->head = w->next;
	if (k->tail == w)
		k->tail = prev;
	k->st.queued_bytes -= w->bytes;
}

/* @w's walk finished (by frame pointers when @give_up): emitted. */
static int finish(struct ust_bpfu_park *k, struct waiting *w, bool give_up,
		  ust_bpfu_park_emit_fn emit, void *ctx, bool *done)
{
	uint64_t used = 0;

	*done = false;
	if (ust_bpfu_park_walk(w->p, &k->env, give_up, w->frames, &w->nr, &w->flags, &used))
		return 0;
	*done = true;
	k->st.later++;
	if (used > k->st.used_max)
		k->st.used_max = used;
	if (used > w->p->len)
		k->st.beyond_copy++;
	if (w->flags & UST_BPFU_F_NO_TABLE)
		k->st.not_in_time++;
	return emit(ctx, &w->h, w->flags, w->frames, w->nr);
}

int ust_bpfu_park_stack(struct ust_bpfu_park *k, const struct ust_bpfu_rec_stack *s,
			const struct ust_bpfu_frame *frames, uint64_t now_ns,
			ust_bpfu_park_emit_fn emit, void *ctx)
{
	struct ust_bpfu_rec_park *p = take(k, s->h.tid);
	uint32_t nr = s->nr > UST_BPFU_MAX_FRAMES ? UST_BPFU_MAX_FRAMES : s->nr;
	struct waiting *w;
	bool done;
	int ret;

	if (!p || p->seq != s->seq || p->nr != nr) {
		/* Its copy was lost: the stack as the walk left it, saying no table came. */
		free(p);
		k->st.lost++;
		return emit(ctx, &s->h, s->flags & ~UST_BPFU_F_PARKED, frames, nr);
	}
	w = malloc(sizeof(*w));
	if (!w) {
		free(p);
		k->st.lost++;
		return emit(ctx, &s->h, s->flags & ~UST_BPFU_F_PARKED, frames, nr);
	}
	w->next = NULL;
	w->h = s->h;
	w->flags = s->flags;
	w->nr = nr;
	w->since = now_ns;
	w->p = p;
	w->bytes = sizeof(*w) + sizeof(*p) + p->len;
	memcpy(w->frames, frames, nr * sizeof(*frames));
	/* Behind the ones waiting already, it might overtake them: the trace is sorted when written. */
	ret = finish(k, w, false, emit, ctx, &done);
	if (done) {
		free(w->p);
		free(w);
		return ret;
	}
	if (k->tail)
		k->tail->next = w;
	else
		k->head = w;
	k->tail = w;
	k->st.queued_bytes += w->bytes;
	return 0;
}

int ust_bpfu_park_serve(struct ust_bpfu_park *k, uint64_t now_ns, bool all,
			ust_bpfu_park_emit_fn emit, void *ctx)
{
	struct waiting *w, *prev = NULL, *next;
	bool done, give_up;
	int ret;

	for (w = k->head; w; w = next) {
		next = w->next;
		give_up = all || now_ns - w->since > k->wait_ns || k->st.queued_bytes > k->max_bytes;
		ret = finish(k, w, give_up, emit, ctx, &done);
		if (!done) {
			prev = w;
			continue;
		}
		unlink_first(k, prev, w);
		free(w->p);
		free(w);
		if (ret)
			return ret;
	}
	return 0;
}

void ust_bpfu_park_stats(const struct ust_bpfu_park *k, struct ust_bpfu_park_stats *st)
{
	if (k)
		*st = k->st;
	else
		memset(st, 0, sizeof(*st));
}
