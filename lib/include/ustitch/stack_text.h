/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_stack_text: the rendered text of each distinct stack (a ust_stitch
 * content), kept for the next time it is printed, up to a byte budget.
 * Past the budget, the texts not printed since they were last looked at
 * go first (the clock algorithm): a trace prints most of its stacks again
 * soon, or never.
 */
#ifndef USTITCH_STACK_TEXT_H
#define USTITCH_STACK_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ustitch/render.h"
#include "ustitch/stitch.h"
#include "ustitch/sb.h"

struct ust_stack_text {
	size_t budget;		/* bytes of text kept at most */
	size_t bytes, peak;	/* kept now, kept at most so far */
	uint32_t *ring;		/* the contents holding text, oldest first */
	size_t ring_cap, ring_head, ring_nr;
	struct ust_sb sb;	/* a text not kept */
};

void ust_stack_text_init(struct ust_stack_text *t, size_t budget);
/* The ring and buffer; the texts belong to the contents (ust_stitch_fini). */
void ust_stack_text_fini(struct ust_stack_text *t);

/*
 * The frames of @st's content @content as ust_render_frames() writes
 * them, rendered by @r unless kept.  Valid until the next call, or until
 * @st is finished with.
 */
const char *ust_stack_text_get(struct ust_stack_text *t, struct ust_stitch *st,
			       uint32_t content, struct ust_render *r);

/* The memory it holds at most: the texts and the ring. */
size_t ust_stack_text_peak_bytes(const struct ust_stack_text *t);

#endif
