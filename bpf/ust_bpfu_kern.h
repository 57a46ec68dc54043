/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The few kernel types and UAPI constants bpfu.bpf.c touches, declared by
 * hand instead of a bpftool-generated vmlinux.h.
 *
 * Why: the BPF object must build on any machine with clang and libbpf
 * headers (CI containers, chroots, build hosts running an older kernel or
 * none with BTF); a vmlinux.h dumped from the build host would tie the
 * build to that host's kernel, and an older one lacks struct bpf_task_work.
 * Every kernel struct below carries preserve_access_index, so each field
 * access is a CO-RE relocation that libbpf resolves by name against the
 * running kernel's BTF at load time: only the names must be right, not the
 * layout.  Anonymous unions in the kernel (vm_start sits in one since 6.x)
 * are matched through by libbpf.
 */
#ifndef UST_BPFU_KERN_H
#define UST_BPFU_KERN_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
#define true 1
#define false 0

/* UAPI (include/uapi/linux/bpf.h): stable numbers. */
#define BPF_MAP_TYPE_HASH		1
#define BPF_MAP_TYPE_ARRAY		2
#define BPF_MAP_TYPE_PROG_ARRAY		3
#define BPF_MAP_TYPE_PERCPU_ARRAY	6
#define BPF_MAP_TYPE_LRU_HASH		9
#define BPF_MAP_TYPE_RINGBUF		27
#define BPF_MAP_TYPE_TASK_STORAGE	29
#define BPF_ANY				0
#define BPF_NOEXIST			1
#define BPF_F_NO_PREALLOC		(1U << 0)
#define BPF_F_MMAPABLE			(1U << 10)
#define BPF_LOCAL_STORAGE_GET_F_CREATE	(1ULL << 0)
#define BPF_F_USER_STACK		(1ULL << 8)
#define BPF_RB_NO_WAKEUP		(1ULL << 0)
#define BPF_RB_FORCE_WAKEUP		(1ULL << 1)
#define BPF_RB_AVAIL_DATA		0
#define BPF_RB_RING_SIZE		1

/* include/linux/mm.h */
#define VM_EXEC				0x00000004

/* include/linux/sched.h */
#define PF_KTHREAD			0x00200000

#define __ust_unused			__attribute__((unused))

struct mm_struct;
struct signal_struct;
struct super_block;
struct inode;
struct file;

typedef struct {
	int counter;
} atomic_t;

struct task_struct {
	unsigned int flags;
	int pid;
	int tgid;
	struct mm_struct *mm;
	struct signal_struct *signal;
	struct task_struct *real_parent;
} __attribute__((preserve_access_index));

struct signal_struct {
	atomic_t live;			/* threads of the group not yet in do_exit() */
} __attribute__((preserve_access_index));

/* x86-64 kernel names (not the UAPI rip/rsp ones). */
struct pt_regs {
	unsigned long r10;		/* a system call's fourth argument */
	unsigned long r9;		/* its sixth */
	unsigned long r8;		/* its fifth */
	unsigned long bp;
	unsigned long bx;
	unsigned long dx;		/* a system call's third argument (mmap's prot) */
	unsigned long si;		/* its second (mmap's, munmap's length) */
	unsigned long di;		/* its first (munmap's address) */
	unsigned long ax;		/* -ENOSYS in a system call's body, then its return value */
	unsigned long orig_ax;		/* the system call number of the entry */
	unsigned long ip;
	unsigned long sp;
} __attribute__((preserve_access_index));

struct super_block {
	unsigned int s_dev;		/* dev_t: major << 20 | minor */
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	struct mm_struct *vm_mm;
	unsigned long vm_flags;		/* const, in a union with __vm_flags or flags since 6.3 */
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

struct bpf_map {
} __attribute__((preserve_access_index));

/* UAPI: the context of raw_tp programs. */
struct bpf_raw_tracepoint_args {
	__u64 args[0];
};

/*
 * UAPI (asm/bpf_perf_event.h, x86-64): the context of perf_event programs,
 * a fixed layout the verifier rewrites (no CO-RE), read 8 bytes at a time.
 */
struct ust_bpfu_user_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

struct bpf_perf_event_data {
	struct ust_bpfu_user_regs regs;
	__u64 sample_period;
	__u64 addr;
};

/*
 * UAPI since 6.18, opaque; the verifier finds it in a map value by this
 * name and size.
 */
struct bpf_task_work {
	__u64 __opaque;
};

#endif /* UST_BPFU_KERN_H */
