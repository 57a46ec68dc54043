/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf: decode the perf ring-buffer records a sampling session needs
 * (SAMPLE, CALLCHAIN_DEFERRED, LOST, LOST_SAMPLES, COMM, EXIT, FORK, MMAP2),
 * with the sample_id trailer of sample_id_all.  Every length and count is
 * checked against the record's own size: a record that lies about itself is
 * refused with a one-line reason, never half-decoded.
 *
 * A callchain is split at its context markers (seed 002): kernel frames,
 * immediate user frames, or the deferred marker PERF_CONTEXT_USER_DEFERRED
 * with its cookie (PERF_DEFERRED_ITEMS = 2).  Frames stay in the record
 * (8-byte items, read with ust_perf_ip()).
 */
#ifndef USTITCH_PERF_H
#define USTITCH_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

/* Markers are the values at or above this one (PERF_CONTEXT_MAX). */
#define UST_PERF_CONTEXT_MAX		((uint64_t)-4095)
#define UST_PERF_CONTEXT_HV		((uint64_t)-32)
#define UST_PERF_CONTEXT_KERNEL		((uint64_t)-128)
#define UST_PERF_CONTEXT_USER		((uint64_t)-512)
#define UST_PERF_CONTEXT_GUEST		((uint64_t)-2048)

/* The sample_type bits ust_perf_parse() reads, which are all it accepts. */
#define UST_PERF_SAMPLE_SUPPORTED	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
					 PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
					 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | \
					 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
					 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* What the attr says about the records of one event (or of one buffer). */
struct ust_perf_layout {
	uint64_t sample_type;
	bool sample_id_all;
	unsigned int id_size;		/* bytes of the sample_id trailer */
};

/* Which fields of struct ust_perf_id a record carried. */
#define UST_PERF_ID_TID		(1U << 0)
#define UST_PERF_ID_TIME	(1U << 1)
#define UST_PERF_ID_ID		(1U << 2)
#define UST_PERF_ID_STREAM	(1U << 3)
#define UST_PERF_ID_CPU		(1U << 4)

/* The sample_id trailer, or the same fields in a SAMPLE. */
struct ust_perf_id {
	unsigned int has;		/* UST_PERF_ID_* */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id, stream_id;
	uint32_t cpu;
};

enum ust_perf_user {
	UST_PERF_USER_NONE,		/* no user part (kernel thread, or not asked) */
	UST_PERF_USER_IMMEDIATE,	/* PERF_CONTEXT_USER and frames */
	UST_PERF_USER_DEFERRED,		/* PERF_CONTEXT_USER_DEFERRED and its cookie */
};

struct ust_perf_chain {
	const uint8_t *kernel;		/* nr_kernel items after PERF_CONTEXT_KERNEL */
	unsigned int nr_kernel;
	const uint8_t *user;		/* nr_user items after PERF_CONTEXT_USER */
	unsigned int nr_user;
	unsigned int nr_other;		/* hypervisor / guest items: not shown */
	enum ust_perf_user user_kind;
	uint64_t cookie;		/* UST_PERF_USER_DEFERRED only */
};

struct ust_perf_event {
	uint32_t type;			/* PERF_RECORD_* */
	uint16_t misc;
	struct ust_perf_id id;		/* SAMPLE fields or the trailer */
	union {
		struct {
			uint64_t ip, addr, period;
			bool has_chain;
			struct ust_perf_chain chain;
		} sample;
		struct {
			uint64_t cookie;
			const uint8_t *ips;	/* after ips[0] == PERF_CONTEXT_USER */
			unsigned int nr;
		} deferred;
		struct {
			uint64_t id;		/* LOST only */
			uint64_t lost;
		} lost;
		struct {
			uint32_t pid, tid;
			const char *comm;	/* NUL-terminated inside the record */
			bool exec;		/* PERF_RECORD_MISC_COMM_EXEC */
		} comm;
		struct {			/* EXIT and FORK */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;	/* 0 with build_id */
			uint64_t ino;
			bool build_id;		/* PERF_RECORD_MISC_MMAP_BUILD_ID: no inode */
			uint32_t prot, flags;
			const char *filename;
		} mmap2;
	} u;
};

/* 0, or -EINVAL with @err when @sample_type has bits ust_perf_parse() cannot skip. */
int ust_perf_layout_init(struct ust_perf_layout *l, uint64_t sample_type, bool sample_id_all,
			 char *err, size_t errsz);

/*
 * Decode one record (@size bytes, header included).  Returns 0; 1 for a
 * record type it does not decode (only ev->type, misc and, with
 * sample_id_all, ev->id are set); -EINVAL when the record is malformed, with
 * @err saying why ("callchain of 300 items ends past the 96-byte record").
 * Pointers in @ev point into @rec.
 */
int ust_perf_parse(const struct ust_perf_layout *l, const void *rec, size_t size,
		   struct ust_perf_event *ev, char *err, size_t errsz);

/* Item @i of a frame array of a decoded record (only 8-byte items). */
static inline uint64_t ust_perf_ip(const uint8_t *ips, unsigned int i)
{
	uint64_t v;

	memcpy(&v, ips + (size_t)i * 8, sizeof(v));
	return v;
}

#endif
