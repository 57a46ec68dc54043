/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The kernel ABI ustitch parses and reproduces, as constants.
 *
 * Sources (by seed file name, see ../shared/seeds/README.md):
 *   004_18ed3856bc41eb64.txt  ftrace deferred user stacks (patches 6, 8, 9)
 *   002_9060c55ba8ee7cf7.txt  perf deferred callchains
 * The event format texts that go with these constants live beside this
 * header in kernel-bits/events/; both are the single source for code and
 * for test fixtures.
 */
#ifndef USTITCH_ABI_H
#define USTITCH_ABI_H

#include <stdint.h>

/* ftrace option that turns userstacktrace into the deferred variant. */
#define UST_ABI_OPT_USERSTACKTRACE		"userstacktrace"
#define UST_ABI_OPT_USERSTACKTRACE_DELAY	"userstacktrace_delay"

/* The two ftrace events of the series (system "ftrace"). */
#define UST_ABI_SYSTEM_FTRACE		"ftrace"
#define UST_ABI_EV_UNWIND_COOKIE	"user_unwind_cookie"
#define UST_ABI_EV_UNWIND_STACK		"user_unwind_stack"

/*
 * Event ids of a kernel carrying the series: they follow TRACE_BLK in
 * enum trace_type (user_stack is 13 on this machine's 6.18).  Readers must
 * never rely on them; fixtures carry them in their format texts.
 */
#define UST_ABI_ID_UNWIND_STACK		15
#define UST_ABI_ID_UNWIND_COOKIE	16

/* Record layouts (offsets after the 8-byte common header). */
#define UST_ABI_COOKIE_OFF		8	/* u64 cookie, both events */
#define UST_ABI_STACK_LOC_OFF		16	/* __data_loc unsigned long[] stack */
#define UST_ABI_INODES_LOC_OFF		20	/* __data_loc unsigned long[] inodes (patch 9) */
#define UST_ABI_DEV_LOC_OFF		24	/* __data_loc unsigned int[] dev (patch 9) */
#define UST_ABI_STACK_HDR_SIZE		32	/* sizeof(struct userunwind_stack_entry), patch 9 */
#define UST_ABI_STACK_HDR_SIZE_OLD	24	/* stack-only layout, patches 6 and 8 */

/* __data_loc word: low 16 bits offset from the record start, high 16 length. */
#define UST_ABI_DATA_LOC(off, len)	((uint32_t)(off) | ((uint32_t)(len) << 16))
#define UST_ABI_DATA_LOC_OFF(v)		((uint32_t)(v) & 0xffff)
#define UST_ABI_DATA_LOC_LEN(v)		((uint32_t)(v) >> 16)

/*
 * The cookie: CPU in the top 16 bits, a per-CPU counter shifted left by one,
 * the lowest bit always 1 so that a valid cookie is never zero.
 */
#define UST_ABI_COOKIE_CPU_SHIFT	48
#define UST_ABI_COOKIE_CTR_MASK		((1ULL << 47) - 1)

static inline uint64_t ust_abi_cookie(uint64_t cpu, uint64_t ctr)
{
	return (cpu << UST_ABI_COOKIE_CPU_SHIFT) |
	       ((ctr & UST_ABI_COOKIE_CTR_MASK) << 1) | 1;
}

static inline unsigned int ust_abi_cookie_cpu(uint64_t cookie)
{
	return (unsigned int)(cookie >> UST_ABI_COOKIE_CPU_SHIFT);
}

/*
 * Mainline's cookie (6.19+, unwind_deferred: what perf's records carry):
 * the low 32 bits are the CPU + 1, the high 32 bits a per-CPU counter
 * whose lowest bit is always 1.
 */
static inline int ust_abi_cookie_valid_mainline(uint64_t cookie)
{
	return ((cookie >> 32) & 1) && (uint32_t)cookie != 0;
}

/* Either layout: what a reader can take from any kernel. */
static inline int ust_abi_cookie_valid(uint64_t cookie)
{
	return (cookie & 1) != 0 || ust_abi_cookie_valid_mainline(cookie);
}

/*
 * The kernel's dev_t (include/linux/kdev_t.h): 12-bit major above a 20-bit
 * minor.  User space (glibc) encodes st_dev differently: use makedev().
 */
#define UST_ABI_KDEV_MINORBITS		20
#define UST_ABI_KDEV_MINORMASK		((1U << UST_ABI_KDEV_MINORBITS) - 1)
#define UST_ABI_KDEV_MAJOR(d)		((unsigned int)((d) >> UST_ABI_KDEV_MINORBITS))
#define UST_ABI_KDEV_MINOR(d)		((unsigned int)((d) & UST_ABI_KDEV_MINORMASK))
#define UST_ABI_MKKDEV(ma, mi)		(((uint32_t)(ma) << UST_ABI_KDEV_MINORBITS) | (uint32_t)(mi))

/* Page shift used in file offset = addr - vm_start + (vm_pgoff << PAGE_SHIFT). */
#define UST_ABI_PAGE_SHIFT		12

/* perf (seed 002): deferred user callchains. */
#define UST_ABI_PERF_CONTEXT_USER_DEFERRED	((uint64_t)-640)
#define UST_ABI_PERF_DEFERRED_ITEMS		2
#define UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED	22
/*
 * PERF_RECORD_CALLCHAIN_DEFERRED { header; u64 cookie; u64 nr; u64 ips[nr];
 * sample_id }: the seed's kernels put PERF_CONTEXT_USER in front of the
 * frames (counted in nr), mainline (6.19+) writes the frames alone.
 */
#define UST_ABI_PERF_DEFERRED_USER_MARK_SEED		1
#define UST_ABI_PERF_DEFERRED_USER_MARK_MAINLINE	0
/*
 * perf_event_attr's flag bits, counted after sigtrap's (the last one a
 * system <linux/perf_event.h> of 5.13+ is sure to have):
 *  - defer_callchain: a sample's user callchain is the marker and a
 *    cookie; the stack follows at the return to user space;
 *  - defer_output (mainline 6.19+, not in seed 002): the event receives the
 *    PERF_RECORD_CALLCHAIN_DEFERRED records, as a side-band event receives
 *    MMAP2 and COMM (the seed gave them to the requesting event itself).
 */
#define UST_ABI_PERF_ATTR_DEFER_CALLCHAIN_AFTER_SIGTRAP	1
#define UST_ABI_PERF_ATTR_DEFER_OUTPUT_AFTER_SIGTRAP	2

/*
 * ustitch's own events (system "ustitch"), written into the trace by the
 * recorder and fixtures.  Ids are chosen far above any kernel's.
 */
#define UST_ABI_SYSTEM_USTITCH		"ustitch"
#define UST_ABI_EV_USER_MAPPING		"user_mapping"
#define UST_ABI_ID_USER_MAPPING		65010
#define UST_ABI_BUILD_ID_MAX		20

/*
 * ustitch/stack_flags { u64 cookie; u32 flags; }: written just before a
 * user_unwind_stack of the BPF backport, or of perf's own deferred
 * callchain (F_KERNEL), to say how the stack was taken:
 * where the kernel would have deferred it, and how the walk went (by CFI
 * tables, by frame pointers, where and why it stopped).
 */
#define UST_ABI_EV_STACK_FLAGS		"stack_flags"
#define UST_ABI_ID_STACK_FLAGS		65011
#define UST_ABI_STACK_F_IMMEDIATE	(1U << 0)	/* taken at the event, not deferred */
#define UST_ABI_STACK_F_SCHED_FAIL	(1U << 1)	/* deferral refused: taken at the event */
#define UST_ABI_STACK_F_EXIT		(1U << 2)	/* taken as the task exited */
#define UST_ABI_STACK_F_TRUNCATED	(1U << 3)	/* cut at 127 frames */
#define UST_ABI_STACK_F_RAW		(1U << 4)	/* some frames left as raw addresses */
/* Bits 5 and 6 are the BPF side's own (leaf return, late work). */
#define UST_ABI_STACK_F_CFI		(1U << 7)	/* some frames unwound by CFI tables */
#define UST_ABI_STACK_F_FP		(1U << 8)	/* some frames unwound by frame pointers */
#define UST_ABI_STACK_F_BOTTOM		(1U << 9)	/* reached the outermost frame */
#define UST_ABI_STACK_F_NO_TABLE	(1U << 10)	/* a file's unwind table was not loaded yet */
#define UST_ABI_STACK_F_BAD_CFA		(1U << 11)	/* cut: a CFA or rule that made no sense */
#define UST_ABI_STACK_F_FAULT		(1U << 12)	/* cut: a stack read failed */
#define UST_ABI_STACK_F_NO_UNWIND	(1U << 13)	/* cut: a frame with no CFI and no frame pointer */
#define UST_ABI_STACK_F_KERNEL		(1U << 14)	/* made by the kernel's own unwinder (frame pointers) */
/* Bit 15 is the BPF side's own (a stack sent again). */
#define UST_ABI_STACK_F_NOT_EXEC	(1U << 16)	/* cut: a return address in no executable mapping */
/*
 * Walked on by the recorder after recording: the walk met a file whose
 * table was not loaded yet and the recorder finished it from a copy of
 * the stack.  With NO_TABLE: the table did not come in time, the rest is
 * by frame pointers over the copy; with FAULT: the walk went beyond the
 * copy.
 */
#define UST_ABI_STACK_F_LATER		(1U << 17)

#endif /* USTITCH_ABI_H */
