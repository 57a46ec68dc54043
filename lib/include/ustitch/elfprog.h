/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_elfprog: whether an ELF file is a program the kernel starts, and its
 * entry point.  The unwind tables (lib/cfi: the entry is an outermost
 * frame) and the symbolizer (lib/sym: a stripped program's entry is
 * named _start) ask the same question, answered here once.
 */
#ifndef USTITCH_ELFPROG_H
#define USTITCH_ELFPROG_H

#include <stdbool.h>
#include <stdint.h>
#include <gelf.h>

/*
 * An ET_EXEC, a PIE (PT_INTERP, no DT_SONAME), or an ET_DYN that needs no
 * library (a static PIE, the dynamic loader), with a nonzero e_entry, in
 * *@entry (may be NULL).  A library's e_entry is 0 or the start of its
 * .text (ld's default), and it has DT_NEEDED: not a program; nor is a
 * library that can also be run (glibc's libc.so.6: PT_INTERP, a DT_SONAME,
 * an entry that prints its version), mapped as a library in every process.
 */
bool ust_elfprog_entry(Elf *elf, uint64_t *entry);

#endif
