/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recorder's tgids to follow (lib/record/bpfu.c ust_bpfu_follow()).
 * The unwinder (bpfu.bpf.c) owns it; the lock_held() objects share it by
 * fd (libbpf's bpf_map__reuse_fd() wants the same definition on all sides).
 */
#ifndef UST_TGIDS_BPF_H
#define UST_TGIDS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} ust_bpfu_tgids SEC(".maps");

#endif
