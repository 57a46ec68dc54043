/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_kbits: the texts in kernel-bits/ (event formats, header page/event),
 * compiled in so that code and fixtures share one source.
 */
#ifndef USTITCH_KBITS_H
#define USTITCH_KBITS_H

struct ust_kbits_entry {
	const char *key;	/* "system/event" or "system/event.variant" */
	const char *system;
	const char *text;
};

/* NULL-terminated table, generated at build time. */
extern const struct ust_kbits_entry ust_kbits_table[];

/* "header_page", "header_event" or "system/event[.variant]". */
const char *ust_kbits_get(const char *key);

/*
 * The x86-64 number of the system call whose ftrace events are
 * syscalls:sys_enter_@name / sys_exit_@name (kernel-bits/syscalls/x86_64),
 * or -ENOENT for a name not in that table.
 */
int ust_kbits_syscall_nr(const char *name);

#endif
