/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --addr-filter as BPF sees it (bpf/addrfilter.bpf.h; lib/record/af_bpf.c fills
 * the map): one entry per range, at the range's index in struct ust_af.
 * The includer provides __u16/__u32/__u64 (BPF: ust_bpfu_kern.h, C:
 * <linux/types.h>).
 */
#ifndef UST_ADDRFILTER_ABI_H
#define UST_ADDRFILTER_ABI_H

#define UST_AF_MAX_RANGES	32

/* Actions, as enum ust_af_action (lib/include/ustitch/addrfilter.h). */
#define UST_AF_KR_FILTER	0
#define UST_AF_KR_START		1
#define UST_AF_KR_STOP		2

struct ust_af_krange {
	__u64 start;		/* file offset, or kernel address */
	__u64 end;		/* exclusive */
	__u64 ino;
	__u32 dev;		/* kernel dev_t (major << 20 | minor) */
	__u16 kernel;		/* a kernel: range */
	__u16 action;		/* UST_AF_KR_* */
};

#endif
