// SPDX-License-Identifier: LGPL-2.1
/*
 * The application-context provider "$app.ustitch":
 *
 *   $app.ustitch:stack_id    u64, id of the thread's user stack at the
 *                            tracepoint (0: no frame record found)
 *   $app.ustitch:lock_depth  s32, pthread locks the thread holds
 *   $app.ustitch:locks       string, their addresses, innermost first
 *                            (no value while the thread holds none)
 *
 * lttng-ust calls get_size() then record() for each context of each
 * event; get_value() serves filters.  A context recorded while one of
 * our record() calls runs on this thread (our own ustitch:stack event,
 * or a signal handler's event in the middle of ours) records no value,
 * which readers see as the "_none" variant, as when no provider is
 * loaded.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ust_lttng.h"
#include "ust_lttng_abi.h"
#include "ust_lttng_tp.h"

#define PROVIDER	"$app.ustitch"
#define LOCKS_TEXT	(UST_LTTNG_MAX_LOCKS * 19 + 8)

enum kind { K_NONE, K_STACK_ID, K_LOCK_DEPTH, K_LOCKS };

/*
 * Text handed to a filter: it must outlive get_value().  A signal
 * handler's filter may rewrite it under an outer one; the last byte is
 * never written, so a reader always finds a terminator.
 */
static UST_LTTNG_TLS char filter_text[LOCKS_TEXT + 1];

static struct ust_lttng_registered *registered;

static enum kind kind_of(const void *app_ctx)
{
	const char *name = ((const struct ust_lttng_app_ctx *)app_ctx)->name;

	if (!name || strncmp(name, PROVIDER ":", sizeof(PROVIDER)))
		return K_NONE;
	name += sizeof(PROVIDER);
	if (!strcmp(name, "stack_id"))
		return K_STACK_ID;
	if (!strcmp(name, "lock_depth"))
		return K_LOCK_DEPTH;
	if (!strcmp(name, "locks"))
		return K_LOCKS;
	return K_NONE;
}

static size_t tagged_size(size_t offset, size_t align, size_t size)
{
	size_t n = lttng_ust_ring_buffer_align(offset, lttng_ust_rb_alignof(char)) + 1;

	if (size)
		n += lttng_ust_ring_buffer_align(offset + n, align) + size;
	return n;
}

static void put_tag(struct lttng_ust_ring_buffer_ctx *ctx, struct lttng_ust_channel_buffer *chan,
		    enum ust_lttng_dyn_type type)
{
	char tag = (char)type;

	chan->ops->event_write(ctx, &tag, sizeof(tag), lttng_ust_rb_alignof(char));
}

static uint64_t stack_id_now(struct lttng_ust_probe_ctx *pctx, uintptr_t *pc, int *nr,
			     uint32_t *flags)
{
	*flags = 0;
	*nr = pctx ? ust_lttng_walk(pctx, (uintptr_t)pctx->ip, pc, UST_LTTNG_MAX_FRAMES, flags) : 0;
	return *nr ? ust_lttng_stack_id(pc, *nr, *flags) : 0;
}

static size_t locks_len(const struct ust_lttng_thread *t, char *buf, size_t size)
{
	size_t len = ust_lttng_locks_text(t, buf, size);

	return len < size ? len : size - 1;
}

static void promise(struct ust_lttng_thread *t, const void *pctx, size_t len)
{
	unsigned int i = t->next_promise++ % UST_LTTNG_PROMISES;

	t->promise[i].pctx = NULL;
	ust_lttng_barrier();
	t->promise[i].len = len;
	ust_lttng_barrier();
	t->promise[i].pctx = pctx;
}

/* The promise of this event, newest first; else what get_size() would say. */
static size_t promised(const struct ust_lttng_thread *t, const void *pctx, char *buf, size_t size)
{
	unsigned int i, n = t->next_promise;

	for (i = 0; i < UST_LTTNG_PROMISES; i++) {
		const struct ust_lttng_promise *p = &t->promise[(n - 1 - i) % UST_LTTNG_PROMISES];

		if (pctx && p->pctx == pctx)
			return p->len;
	}
	return locks_len(t, buf, size);
}

static size_t get_size(void *app_ctx, struct lttng_ust_probe_ctx *pctx, size_t offset)
{
	struct ust_lttng_thread *t = &ust_lttng_self;
	char buf[LOCKS_TEXT];
	size_t len;

	if (t->busy)
		return tagged_size(offset, 1, 0);
	switch (kind_of(app_ctx)) {
	case K_STACK_ID:
		return tagged_size(offset, lttng_ust_rb_alignof(uint64_t), sizeof(uint64_t));
	case K_LOCK_DEPTH:
		return tagged_size(offset, lttng_ust_rb_alignof(int32_t), sizeof(int32_t));
	case K_LOCKS:
		/* record() writes exactly this many bytes, whatever happens between. */
		len = locks_len(t, buf, sizeof(buf));
		promise(t, pctx, len);
		if (!len)	/* no lock held: no value, see record_locks() */
			return tagged_size(offset, 1, 0);
		return tagged_size(offset, 1, len + 1);
	default:
		return tagged_size(offset, 1, 0);
	}
}

static void record_stack_id(struct lttng_ust_probe_ctx *pctx, struct lttng_ust_ring_buffer_ctx *ctx,
			    struct lttng_ust_channel_buffer *chan)
{
	uintptr_t pc[UST_LTTNG_MAX_FRAMES];
	uint64_t id;
	uint32_t flags;
	int nr;

	ust_lttng_stacks_session(chan->parent->session);
	id = stack_id_now(pctx, pc, &nr, &flags);
	if (id)
		ust_lttng_stack_publish(id, pc, nr, flags);
	put_tag(ctx, chan, UST_LTTNG_DYN_U64);
	chan->ops->event_write(ctx, &id, sizeof(id), lttng_ust_rb_alignof(uint64_t));
}

static void record_locks(struct ust_lttng_thread *t, struct lttng_ust_probe_ctx *pctx,
			 struct lttng_ust_ring_buffer_ctx *ctx, struct lttng_ust_channel_buffer *chan)
{
	char buf[LOCKS_TEXT];
	size_t want = promised(t, pctx, buf, sizeof(buf));
	size_t len = locks_len(t, buf, sizeof(buf));
	unsigned int i, n = t->nr_locks < UST_LTTNG_MAX_LOCKS ? t->nr_locks : UST_LTTNG_MAX_LOCKS;

	/*
	 * No lock held is recorded as no value rather than "": babeltrace2
	 * 2.0.4 shows an empty string in a variant as the previous event's
	 * string.
	 */
	if (!want) {
		put_tag(ctx, chan, UST_LTTNG_DYN_NONE);
		return;
	}
	for (; len < want; len++)	/* the list changed since get_size() */
		buf[len] = ' ';
	buf[want] = '\0';
	put_tag(ctx, chan, UST_LTTNG_DYN_STRING);
	chan->ops->event_write(ctx, buf, want + 1, 1);
	/* Let readers name the locks: describe the objects they live in. */
	for (i = 0; i < n; i++)
		ust_lttng_objs_describe(t->locks[i], ust_lttng_stacks_gen());
}

static void record(void *app_ctx, struct lttng_ust_probe_ctx *pctx,
		   struct lttng_ust_ring_buffer_ctx *ctx, struct lttng_ust_channel_buffer *chan)
{
	struct ust_lttng_thread *t = &ust_lttng_self;
	int32_t depth;

	if (t->busy) {
		put_tag(ctx, chan, UST_LTTNG_DYN_NONE);
		return;
	}
	t->busy = 1;
	ust_lttng_barrier();
	switch (kind_of(app_ctx)) {
	case K_STACK_ID:
		record_stack_id(pctx, ctx, chan);
		break;
	case K_LOCK_DEPTH:
		depth = (int32_t)t->nr_locks;
		put_tag(ctx, chan, UST_LTTNG_DYN_S32);
		chan->ops->event_write(ctx, &depth, sizeof(depth), lttng_ust_rb_alignof(int32_t));
		break;
	case K_LOCKS:
		record_locks(t, pctx, ctx, chan);
		break;
	default:
		put_tag(ctx, chan, UST_LTTNG_DYN_NONE);
		break;
	}
	ust_lttng_barrier();
	t->busy = 0;
}

/*
 * For filters.  No guard here: nothing is emitted, and our own nested
 * events must see real values, or a filter on them would drop them.
 */
static void get_value(void *app_ctx, struct lttng_ust_probe_ctx *pctx,
		      struct ust_lttng_ctx_value *v)
{
	struct ust_lttng_thread *t = &ust_lttng_self;
	uintptr_t pc[UST_LTTNG_MAX_FRAMES];
	uint32_t flags;
	int nr;

	v->sel = UST_LTTNG_DYN_NONE;
	switch (kind_of(app_ctx)) {
	case K_STACK_ID:
		v->sel = UST_LTTNG_DYN_U64;
		v->u.u64 = stack_id_now(pctx, pc, &nr, &flags);
		break;
	case K_LOCK_DEPTH:
		v->sel = UST_LTTNG_DYN_S64;
		v->u.s64 = t->nr_locks;
		break;
	case K_LOCKS:
		ust_lttng_locks_text(t, filter_text, sizeof(filter_text) - 1);
		v->sel = UST_LTTNG_DYN_STRING;
		v->u.str = filter_text;
		break;
	default:
		break;
	}
}

static struct ust_lttng_provider provider = {
	.struct_size = sizeof(provider),
	.name = PROVIDER,
	.get_size = get_size,
	.record = record,
	.get_value = get_value,
};

static uint64_t make_salt(void)
{
	uint64_t s = 0;
	struct timespec ts;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == sizeof(s) && s)
		return s;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
}

/* Forked child: a new pid, so describe everything again under it. */
static void after_fork_child(void)
{
	ust_lttng_proc.pid = getpid();
	ust_lttng_stacks_new_gen();
}

__attribute__((constructor)) static void ust_lttng_init(void)
{
	ust_lttng_proc.pid = getpid();
	ust_lttng_proc.salt = make_salt();
	ust_lttng_thread_init();
	ust_lttng_locks_init();
	ust_lttng_objs_init();
	ust_lttng_cfi_init((uintptr_t)lttng_ust_context_provider_register);
	pthread_atfork(NULL, NULL, after_fork_child);
	registered = lttng_ust_context_provider_register(&provider);
}

__attribute__((destructor)) static void ust_lttng_fini(void)
{
	/* Unloaded by dlclose: lttng-ust must stop calling into us. */
	if (registered)
		lttng_ust_context_provider_unregister(registered);
	registered = NULL;
}
