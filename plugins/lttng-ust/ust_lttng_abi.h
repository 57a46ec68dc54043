/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The lttng-ust 2.13 application-context provider ABI.
 *
 * liblttng-ust.so.1 exports lttng_ust_context_provider_register() but
 * Debian does not install its header, so the ABI is declared here.  Each
 * layout below was checked against liblttng-ust.so.1 2.13.5 by experiment
 * (tests/lttng exercises all of them on every run):
 *
 *  - the provider: struct_size, name, then three callbacks; there is no
 *    private pointer, the library passes its own per-context object;
 *  - that object carries the context's full name ("$app.P:NAME") as its
 *    third word, which is how one provider serves several contexts;
 *  - every callback receives the probe context (caller ip) second;
 *  - a recorded value is a one-byte type tag, then the value, with the
 *    tag numbering of the CTF metadata lttng-ust writes for app contexts;
 *  - get_value()'s value has the tag first, the union at offset 8, and
 *    arrives uninitialized.
 */
#ifndef USTITCH_LTTNG_ABI_H
#define USTITCH_LTTNG_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <lttng/ust-events.h>
#include <lttng/ust-ringbuffer-context.h>
#include <lttng/ust-version.h>

#if LTTNG_UST_MAJOR_VERSION != 2 || LTTNG_UST_MINOR_VERSION != 13
#error "ust_lttng_abi.h declares the lttng-ust 2.13 context provider ABI only"
#endif

enum ust_lttng_dyn_type {
	UST_LTTNG_DYN_NONE = 0,
	UST_LTTNG_DYN_S8,
	UST_LTTNG_DYN_S16,
	UST_LTTNG_DYN_S32,
	UST_LTTNG_DYN_S64,
	UST_LTTNG_DYN_U8,
	UST_LTTNG_DYN_U16,
	UST_LTTNG_DYN_U32,
	UST_LTTNG_DYN_U64,
	UST_LTTNG_DYN_FLOAT,
	UST_LTTNG_DYN_DOUBLE,
	UST_LTTNG_DYN_STRING,
};

struct ust_lttng_ctx_value {
	int sel;			/* enum ust_lttng_dyn_type */
	union {
		int64_t s64;
		uint64_t u64;
		const char *str;
		double d;
	} u;
};

struct ust_lttng_provider {
	uint32_t struct_size;
	const char *name;		/* "$app.PROVIDER" */
	size_t (*get_size)(void *app_ctx, struct lttng_ust_probe_ctx *pctx, size_t offset);
	void (*record)(void *app_ctx, struct lttng_ust_probe_ctx *pctx,
		       struct lttng_ust_ring_buffer_ctx *ctx,
		       struct lttng_ust_channel_buffer *chan);
	void (*get_value)(void *app_ctx, struct lttng_ust_probe_ctx *pctx,
			  struct ust_lttng_ctx_value *value);
};

/* What the callbacks get as their first argument. */
struct ust_lttng_app_ctx {
	uint32_t struct_size;
	void *event_field;
	const char *name;		/* "$app.PROVIDER:NAME" */
};

struct ust_lttng_registered;

extern struct ust_lttng_registered *
lttng_ust_context_provider_register(struct ust_lttng_provider *provider);
extern void lttng_ust_context_provider_unregister(struct ust_lttng_registered *reg);

#endif
