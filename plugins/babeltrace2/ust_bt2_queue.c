// SPDX-License-Identifier: LGPL-2.1
/*
 * The lookahead queue.  ustitch:stack is emitted from inside the first
 * event that uses a new stack id, so in a trace it usually comes right
 * after that event, and an event of another CPU may reference the id a
 * little before the stack event's timestamp.  An event whose stack is not
 * known yet waits here, and so does everything after it (output order is
 * input order), until the stack arrives, until trace time passes its
 * deadline, or until the end of the trace.  Only a short stretch of the
 * trace is ever held: one pass, bounded memory.
 */
#include <babeltrace2/babeltrace.h>
#include <stdlib.h>
#include <string.h>

#include "ust_bt2.h"
#include "ustitch/grow.h"

void ust_bt2_queue_init(struct ust_bt2_queue *q)
{
	q->v = NULL;
	q->cap = q->head = q->len = 0;
}

void ust_bt2_queue_fini(struct ust_bt2_queue *q)
{
	while (q->len)
		ust_bt2_queue_pop(q);
	free(q->v);
	ust_bt2_queue_init(q);
}

int ust_bt2_queue_push(struct ust_bt2_queue *q, const struct ust_bt2_item *it)
{
	if (q->len == q->cap) {
		size_t old = q->cap;
		struct ust_bt2_item *v = ust_grow(q->v, &q->cap, q->len + 1, sizeof(*v), 1024);

		if (!v)
			return -1;
		/* The ring's wrapped part [0, head) follows [head, old): the
		 * capacity at least doubled, so it fits. */
		memcpy(v + old, v, q->head * sizeof(*v));
		q->v = v;
	}
	q->v[(q->head + q->len) % q->cap] = *it;
	q->len++;
	return 0;
}

struct ust_bt2_item *ust_bt2_queue_head(struct ust_bt2_queue *q)
{
	return q->len ? &q->v[q->head] : NULL;
}

void ust_bt2_queue_pop(struct ust_bt2_queue *q)
{
	if (!q->len)
		return;
	bt_message_put_ref(q->v[q->head].msg);
	q->head = (q->head + 1) % q->cap;
	q->len--;
}
