/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_lh_bpf: load bpf/lockheld.bpf.c (and, where the kernel allows tracing
 * programs, bpf/lockheld_track.bpf.c), give it each event's compiled filter
 * and attach it to that event's perf tracepoint event.
 *
 * The filter program is attached through BPF_LINK_CREATE on the perf event
 * fd: the same attachment as PERF_EVENT_IOC_SET_BPF (perf_event_set_bpf_prog
 * in the kernel), plus a BPF cookie, which tells the one program which
 * event's graph to walk (the record's common_type is not readable there).
 * The attachment is to the tracepoint: one perf event of the event's
 * per-CPU set carries it for every CPU, and while attached it filters every
 * perf user of that tracepoint (ftrace is not affected).
 */
#ifndef USTITCH_LH_BPF_H
#define USTITCH_LH_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ust_af;
struct ust_lh_bpf;
struct ust_lh_compiled;
struct ust_bpfu;

/* System call numbers the events kept without perf may have (lockheld_abi.h's). */
#define UST_LH_BPF_NR_SC	1024

struct ust_lh_bpf_opts {
	/* Kept events get cookies from this unwinder's sequence (NULL: none). */
	struct ust_bpfu *bpfu;
	bool follow;		/* only followed tgids (ust_lh_bpf_follow) pass */
	bool mmap_read;		/* count mmap_lock read holds (mmap_lock tracepoints) */
	unsigned int families;	/* held-lock tracking families (UST_LH_FAM_*) */
	bool track_slab;
	size_t hits_bytes;	/* 0: 1 MiB */
	/*
	 * Load the programs that keep sys_enter_* / sys_exit_* events without
	 * perf (ust_lh_bpf_set_raw()): their kept records come whole in the hits.
	 */
	bool raw_enter, raw_exit;
};

/* One kept event's side record (bpf/lockheld_abi.h's ust_lh_hit). */
struct ust_lh_hit_u {
	uint64_t ts, cookie;
	uint32_t cpu, tid, mask, slot;
	char comm[16];
};

struct ust_lh_bpf_stats {
	uint64_t runs, kept, hit_drops, bad_prog, read_fail, raw_drops;
};

#include "ustitch/bpfload.h"

/* What loading the lock_held() objects costs the verifier (ustitch probe). */
struct ust_lh_bpf_report {
	struct ust_bpfload_report filter;	/* lockheld.bpf.c, every program */
	bool tracked;				/* track was asked for */
	struct ust_bpfload_report track;	/* lockheld_track.bpf.c: every family's trackers */
};

/*
 * Load the filter's programs, and with @track the held-lock trackers of
 * every lock family this kernel has, measuring their verification, then
 * unload them.  0, or -1 with @err (the report says as far as it got).
 */
int ust_lh_bpf_verify(bool track, struct ust_lh_bpf_report *r, char *err, size_t errsz);

/* NULL with errno set and the message in @err on failure. */
struct ust_lh_bpf *ust_lh_bpf_open(const struct ust_lh_bpf_opts *o, char *err, size_t errsz);
/*
 * Measure what the BPF runtime adds to current->rcu_read_lock_nesting by
 * running the calibration program on an event of this thread outside any
 * RCU section (syscalls:sys_enter_getppid), and subtract that from then on.
 * Returns the bias, or a negative errno with @err (the default of 1 stays;
 * -EIO: the program did not run).
 */
int ust_lh_bpf_calibrate(struct ust_lh_bpf *b, char *err, size_t errsz);
int ust_lh_bpf_follow(struct ust_lh_bpf *b, pid_t tgid);
/* Event @slot's graph (< UST_LH_MAX_PROGS); @stacks: kept events get cookies. */
int ust_lh_bpf_set_prog(struct ust_lh_bpf *b, int slot, const struct ust_lh_compiled *c,
			bool stacks);
/* Attach the filter for @slot to the perf tracepoint event @perf_fd. */
int ust_lh_bpf_attach(struct ust_lh_bpf *b, int slot, int perf_fd);
/*
 * The trackers that must run after the filter on a shared tracepoint
 * (mmap_lock_released: the lock is still held when it fires): call once
 * the filters are attached.
 */
int ust_lh_bpf_attach_late(struct ust_lh_bpf *b);
/* --addr-filter: its ranges and start/stop probes (lib/record/af_bpf.c). */
int ust_lh_bpf_set_af(struct ust_lh_bpf *b, const struct ust_af *af, char *err, size_t errsz);
/*
 * Event @slot is system call @nr's sys_enter (@exit false) or sys_exit
 * event, ftrace id @type, @nargs arguments (sys_enter): kept without perf,
 * by the raw tracepoint program (opts.raw_enter / raw_exit), its record
 * built as ftrace's syscall events lay it out.  Then ust_lh_bpf_attach_raw().
 */
int ust_lh_bpf_set_raw(struct ust_lh_bpf *b, int slot, int nr, bool exit, uint16_t type,
		       unsigned int nargs);
int ust_lh_bpf_attach_raw(struct ust_lh_bpf *b);
/*
 * Hand every waiting hit to @fn: @rec (@len bytes) is the event's record
 * for events kept without perf, NULL for those whose perf sample follows.
 * Returns how many or a negative errno.
 */
int ust_lh_bpf_hits(struct ust_lh_bpf *b,
		    void (*fn)(const struct ust_lh_hit_u *h, const void *rec, size_t len, void *ctx),
		    void *ctx);
/* A descriptor to wait on for hits (an epoll fd), or -1. */
int ust_lh_bpf_hits_fd(const struct ust_lh_bpf *b);
int ust_lh_bpf_stats(struct ust_lh_bpf *b, struct ust_lh_bpf_stats *st);
int ust_lh_bpf_rcu_bias(const struct ust_lh_bpf *b);
void ust_lh_bpf_close(struct ust_lh_bpf *b);

#endif
