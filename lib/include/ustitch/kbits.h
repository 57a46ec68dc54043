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

#endif
