// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_stack_text.  The ring lists the contents whose text is kept, in the
 * order they were kept; each has its "printed since" bit beside the text
 * (ust_stitch_frames.rendered_used).  To make room, the oldest is freed,
 * unless printed since it was last looked at: then it goes to the end,
 * its bit cleared.  The ring holds one index per text kept, so making room
 * costs no walk over the stacks that have none.
 */
#include <stdlib.h>
#include <string.h>

#include "ustitch/grow.h"
#include "ustitch/stack_text.h"

void ust_stack_text_init(struct ust_stack_text *t, size_t budget)
{
	memset(t, 0, sizeof(*t));
	t->budget = budget;
	ust_sb_init(&t->sb);
}

void ust_stack_text_fini(struct ust_stack_text *t)
{
	free(t->ring);
	ust_sb_fini(&t->sb);
	ust_stack_text_init(t, t->budget);
}

/* Append @idx; -1 when out of memory.  The ring is unwrapped as it grows. */
static int ring_push(struct ust_stack_text *t, uint32_t idx)
{
	if (t->ring_nr == t->ring_cap) {
		size_t cap = 0, tail = t->ring_cap - t->ring_head;
		uint32_t *n = ust_grow(NULL, &cap, t->ring_nr + 1, sizeof(*n), 256);

		if (!n)
			return -1;
		if (t->ring_nr) {
			memcpy(n, t->ring + t->ring_head, tail * sizeof(*n));
			memcpy(n + tail, t->ring, t->ring_head * sizeof(*n));
		}
		free(t->ring);
		t->ring = n;
		t->ring_cap = cap;
		t->ring_head = 0;
	}
	t->ring[(t->ring_head + t->ring_nr++) % t->ring_cap] = idx;
	return 0;
}

static uint32_t ring_pop(struct ust_stack_text *t)
{
	uint32_t idx = t->ring[t->ring_head];

	t->ring_head = (t->ring_head + 1) % t->ring_cap;
	t->ring_nr--;
	return idx;
}

/* Room for @len more bytes within the budget; false: @len alone is over it. */
static bool make_room(struct ust_stack_text *t, struct ust_stitch *st, size_t len)
{
	if (len > t->budget)
		return false;
	while (t->bytes + len > t->budget && t->ring_nr) {
		uint32_t idx = ring_pop(t);
		struct ust_stitch_frames *c = &st->contents[idx];

		if (!c->rendered)
			continue;
		if (c->rendered_used) {
			/* Just popped: the push has its slot. */
			c->rendered_used = false;
			ring_push(t, idx);
			continue;
		}
		t->bytes -= strlen(c->rendered) + 1;
		free(c->rendered);
		c->rendered = NULL;
	}
	return true;
}

const char *ust_stack_text_get(struct ust_stack_text *t, struct ust_stitch *st,
			       uint32_t content, struct ust_render *r)
{
	struct ust_stitch_frames *c = &st->contents[content];
	size_t len;

	if (!c->rendered) {
		ust_sb_reset(&t->sb);
		ust_render_frames(r, c->frames, c->nr, c->has_files, &t->sb);
		len = strlen(ust_sb_str(&t->sb)) + 1;
		/* Not kept (over the budget, out of memory): printed from sb. */
		if (!make_room(t, st, len) || ring_push(t, content))
			return ust_sb_str(&t->sb);
		c->rendered = strdup(ust_sb_str(&t->sb));
		if (!c->rendered)
			return ust_sb_str(&t->sb);
		t->bytes += len;
		if (t->bytes > t->peak)
			t->peak = t->bytes;
	}
	c->rendered_used = true;
	return c->rendered;
}

size_t ust_stack_text_peak_bytes(const struct ust_stack_text *t)
{
	return t->peak + t->ring_cap * sizeof(*t->ring);
}
