// SPDX-License-Identifier: LGPL-2.1
/*
 * Stack ids, and the once-per-id ustitch:stack event.
 *
 * An id is a hash of the return addresses and a per-process salt: the
 * same stack in the same process always gets the same id, and no address
 * lookup is needed on the hot path.  The first event with a new id also
 * emits ustitch:stack, which carries the frames as file offsets with
 * (inode, dev) and, through ustitch:object, the objects' paths and
 * build-ids; later events carry just the 8-byte id.
 *
 * "Already emitted" must mean "already in this trace".  A fixed,
 * lock-free table remembers, per id, the generation it was emitted in.
 * The generation moves on when the stack_id context is recorded for a
 * session none of the last few recorded for (a session started while
 * the process runs gets every stack again; sessions recording side by
 * side do not keep restarting it), and in a forked child (the objects
 * are described again under its pid).  Nothing is marked while
 * ustitch:stack is disabled.  When the table is full, stacks are simply
 * emitted every time.  A session whose memory takes the place of a
 * destroyed one's is not noticed: its trace may lack stacks of the
 * earlier one, which readers report.
 */
#include <stdatomic.h>

#include "ust_lttng.h"
#include "ust_lttng_tp.h"
#include "ustitch/hmap.h"

#define TAB_BITS	16
#define PROBES		64
#define SESSIONS	4

struct slot {
	_Atomic uint64_t id;
	atomic_uint gen;
};

static struct slot tab[1 << TAB_BITS];
static atomic_uint generation = 1;
static const void *_Atomic sessions[SESSIONS];
static atomic_uint next_session;

/*
 * One multiply per frame, on the hot path; the full mix once at the end,
 * with how the stack was taken (the same frames cut short or complete
 * are different stacks).
 * Ids only need to be unique, not hard to forge.
 */
uint64_t ust_lttng_stack_id(const uintptr_t *pc, int nr, uint32_t flags)
{
	uint64_t h = ust_lttng_proc.salt;
	int i;

	for (i = 0; i < nr; i++)
		h = ((h << 5 | h >> 59) ^ pc[i]) * 0x9e3779b97f4a7c15ULL;
	h = ust_hmap_mix(h ^ (uint64_t)nr ^ (uint64_t)flags << 32);
	return h ? h : 1;
}

uint32_t ust_lttng_stacks_gen(void)
{
	return atomic_load(&generation);
}

void ust_lttng_stacks_new_gen(void)
{
	unsigned int g = atomic_fetch_add(&generation, 1) + 1;

	if (!g)		/* 0 means "never"; skip it on wrap-around */
		atomic_fetch_add(&generation, 1);
}

void ust_lttng_stacks_session(const void *session)
{
	unsigned int i;

	for (i = 0; i < SESSIONS; i++)
		if (atomic_load_explicit(&sessions[i], memory_order_relaxed) == session)
			return;
	atomic_store(&sessions[atomic_fetch_add(&next_session, 1) % SESSIONS], session);
	ust_lttng_stacks_new_gen();
}

/* True when this caller is to emit @id in generation @gen. */
static bool claim(uint64_t id, unsigned int gen)
{
	size_t mask = ((size_t)1 << TAB_BITS) - 1, i;

	for (i = 0; i < PROBES; i++) {
		struct slot *s = &tab[(id + i) & mask];
		uint64_t cur = atomic_load(&s->id);
		unsigned int g;

		if (!cur) {
			if (!atomic_compare_exchange_strong(&s->id, &cur, id) && cur != id)
				continue;
		} else if (cur != id) {
			continue;
		}
		g = atomic_load(&s->gen);
		return g != gen && atomic_compare_exchange_strong(&s->gen, &g, gen);
	}
	return true;
}

void ust_lttng_stack_publish(uint64_t id, const uintptr_t *pc, int nr, uint32_t flags)
{
	uint64_t off[UST_LTTNG_MAX_FRAMES], ino[UST_LTTNG_MAX_FRAMES];
	uint32_t kdev[UST_LTTNG_MAX_FRAMES];
	unsigned int gen = atomic_load(&generation);

	if (!lttng_ust_tracepoint_enabled(ustitch, stack) || nr <= 0 ||
	    nr > UST_LTTNG_MAX_FRAMES || !claim(id, gen))
		return;
	ust_lttng_objs_resolve(pc, nr, off, ino, kdev, gen);
	lttng_ust_do_tracepoint(ustitch, stack, id, ust_lttng_proc.pid, off, ino, kdev,
				(uint16_t)nr, flags);
}
