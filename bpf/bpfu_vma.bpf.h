/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The current task's VMAs: what bpf_find_vma() tells of one (as the
 * kernel's deferred unwinder reports a frame: file offset, inode, dev),
 * and whether VMAs found earlier still stand.  Used by the walk
 * (bpfu_walk.bpf.h) and the address filters (addrfilter.bpf.h).
 */
#ifndef UST_BPFU_VMA_BPF_H
#define UST_BPFU_VMA_BPF_H

struct ust_bpfu_vma {
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	__u32 dev;
	__u32 found;
	__u32 exec;		/* VM_EXEC: code may run there (a return address must point there) */
	__u32 pad;
	__u64 vma;		/* the vm_area_struct, and its vm_file, as numbers: */
	__u64 file;		/* to tell later whether it still reads the same */
};

static long ust_bpfu_vma_cb(struct task_struct *task __ust_unused, struct vm_area_struct *vma,
			    void *data)
{
	struct ust_bpfu_vma *v = data;
	struct file *file = vma->vm_file;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->exec = !!(vma->vm_flags & VM_EXEC);
	v->vma = (__u64)vma;
	v->file = (__u64)file;
	v->ino = 0;
	v->dev = 0;
	if (file && file->f_inode) {
		v->ino = file->f_inode->i_ino;
		v->dev = file->f_inode->i_sb->s_dev;
	}
	v->found = 1;
	return 0;
}

/*
 * Whether VMAs found earlier are still the task's: the mm's mmap_lock write
 * sequence (mm->mm_lock_seq, 6.13+) is bumped by every write lock and
 * unlock and is odd while write-locked, and every change of the VMAs
 * happens under that lock.  A VMA found while the sequence was even, and
 * equal to now, still stands.  false: no such sequence (older kernels; an
 * int mm_lock_seq, or none) or locked now: look up again.
 */
struct seqcount___ust {
	unsigned int sequence;
} __attribute__((preserve_access_index));

struct mm_struct___ust {
	struct seqcount___ust mm_lock_seq;
} __attribute__((preserve_access_index));

static __always_inline bool ust_bpfu_mm_seq(struct task_struct *task, __u64 *mmp, __u32 *seq)
{
	struct mm_struct___ust *mm = (struct mm_struct___ust *)task->mm;

	if (!mm || !bpf_core_field_exists(mm->mm_lock_seq.sequence))
		return false;
	/* A plain load (of a BTF pointer): not a bpf_probe_read_kernel() call. */
	*seq = mm->mm_lock_seq.sequence;
	*mmp = (__u64)mm;
	return !(*seq & 1);
}

#endif /* UST_BPFU_VMA_BPF_H */
