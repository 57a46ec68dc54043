/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The events the provider emits itself, once per stack id and once per
 * object (per process and trace generation, see ust_lttng_stacks.c):
 *
 *   ustitch:stack   stack_id, the emitting pid, then per frame the file
 *                   offset, inode and kernel dev_t, the layout of the
 *                   kernel's user_unwind_stack; inode 0 means "offset is
 *                   a raw address" (no file-backed object covers it);
 *                   flags, last (readers that predate it ignore it): how
 *                   the stack was taken, the UST_ABI_STACK_F_* bits of the
 *                   kernel-side stacks (by CFI, frame pointers, complete,
 *                   a table not ready, a frame in no object, cut short).
 *   ustitch:object  one loaded object of process pid: load bias, the
 *                   address range of its segments, (dev, inode), path and
 *                   GNU build-id.  Lets a reader find the file by build-id
 *                   on another machine and name data addresses (locks).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ustitch

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./ust_lttng_tp.h"

#if !defined(USTITCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define USTITCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(ustitch, stack,
	LTTNG_UST_TP_ARGS(uint64_t, id, int32_t, pid, const uint64_t *, offs,
			  const uint64_t *, inos, const uint32_t *, devs, uint16_t, nr,
			  uint32_t, flags),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, stack_id, id)
		lttng_ust_field_integer(int32_t, pid, pid)
		lttng_ust_field_sequence_hex(uint64_t, offsets, offs, uint16_t, nr)
		lttng_ust_field_sequence(uint64_t, inodes, inos, uint16_t, nr)
		lttng_ust_field_sequence(uint32_t, devs, devs, uint16_t, nr)
		lttng_ust_field_integer_hex(uint32_t, flags, flags)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(ustitch, object,
	LTTNG_UST_TP_ARGS(int32_t, pid, uint64_t, base, uint64_t, lo, uint64_t, hi,
			  uint32_t, dev, uint64_t, ino, const char *, path,
			  const uint8_t *, bid, uint8_t, bid_len),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, pid)
		lttng_ust_field_integer_hex(uint64_t, base, base)
		lttng_ust_field_integer_hex(uint64_t, lo, lo)
		lttng_ust_field_integer_hex(uint64_t, hi, hi)
		lttng_ust_field_integer(uint32_t, dev, dev)
		lttng_ust_field_integer(uint64_t, ino, ino)
		lttng_ust_field_string(path, path)
		lttng_ust_field_sequence_hex(uint8_t, build_id, bid, uint8_t, bid_len)
	)
)

#endif

#include <lttng/tracepoint-event.h>
