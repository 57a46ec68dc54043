/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The one parsed copy of the running kernel's BTF (/sys/kernel/btf/vmlinux)
 * that lib/record/ looks kernel types and functions up in.  Internal to
 * lib/record/.
 */
#ifndef UST_KBTF_H
#define UST_KBTF_H

struct btf;

/*
 * The kernel's BTF, parsed on first use and kept for the process (5-6 MB
 * read and parsed: doing it once per question was a sixth of what a
 * recording of /bin/true cost); NULL when the kernel has none.  Not to be
 * freed.  libbpf still parses its own copy in each bpf_object__load().
 */
const struct btf *ust_kbtf(void);

#endif
