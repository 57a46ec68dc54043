/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recorder's tgids to follow (lib/record/bpfu.c ust_bpfu_follow()).
 * unwind.bpf.c owns it; lockheld_track.bpf.c shares it by fd (libbpf
 * bpf_map__reuse_fd() wants the same definition on both sides).
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
