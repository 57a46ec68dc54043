/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf_enc: a perf sample as trace.dat records, so that trace-cmd and
 * plugin_ustitch show it like any event with stacks:
 *
 *   ustitch/sample       the sample (kernel-bits/events/ustitch/sample/format)
 *   ftrace/kernel_stack  its kernel frames, in this kernel's own layout
 *   ftrace/user_unwind_cookie, ftrace/user_unwind_stack
 *                        its user stack, as the kernel's deferred unwinder
 *                        writes them (seed 004, patch 9 layout)
 *
 * Each returns the record's size, or -ENOSPC if @bufsize is too small.
 */
#ifndef USTITCH_PERF_ENC_H
#define USTITCH_PERF_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "ustitch/decode.h"

#define UST_PERF_ENC_SAMPLE_KEY	"ustitch/sample"	/* kernel-bits key */
#define UST_PERF_ENC_EV_SAMPLE	"sample"

/* ustitch/sample.user_stack */
enum ust_perf_enc_ustack {
	UST_PERF_ENC_USTACK_NONE = 0,		/* none asked for, or a kernel thread */
	UST_PERF_ENC_USTACK_DEFERRED = 1,	/* a cookie follows; its stack comes later */
	UST_PERF_ENC_USTACK_IMMEDIATE = 2,	/* a cookie and its stack follow at once */
	UST_PERF_ENC_USTACK_LOST = 3,		/* asked for, never arrived */
};

struct ust_perf_enc_sample_rec {
	uint16_t type;
	int pid;		/* the sampled thread */
	uint64_t ip, period;
	const char *event;	/* "cpu-clock" */
	unsigned int mode;	/* PERF_RECORD_MISC_CPUMODE_MASK bits of the sample */
	unsigned int ustack;	/* enum ust_perf_enc_ustack */
	unsigned int kernel_frames;
};

int ust_perf_enc_sample(void *buf, size_t bufsize, const struct ust_perf_enc_sample_rec *s);

/* Where this kernel's ftrace/kernel_stack keeps its fields. */
struct ust_perf_enc_kstack_fmt {
	uint16_t type;
	unsigned int size_off;		/* int size: the number of entries */
	unsigned int caller_off;	/* unsigned long caller[], then as many as size says */
	unsigned int long_size;
};

/* From the format text as this kernel's tracefs gives it.  0, or -EINVAL / -ENOMEM with @err. */
int ust_perf_enc_kstack_fmt_init(struct ust_perf_enc_kstack_fmt *f, const char *text,
			     char *err, size_t errsz);
/* @ips: @nr items of 8 bytes (a perf callchain's kernel part). */
int ust_perf_enc_kstack(const struct ust_perf_enc_kstack_fmt *f, void *buf, size_t bufsize,
			int pid, const uint8_t *ips, unsigned int nr);

/* Cookie records: ust_enc_unwind_cookie().  Resolved frames into a
 * user_unwind_stack record: */
int ust_perf_enc_unwind_stack(void *buf, size_t bufsize, uint16_t type, int pid,
			      uint64_t cookie, const struct ust_dec_frame *f, unsigned int nr);

#endif
