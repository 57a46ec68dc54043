/* SPDX-License-Identifier: LGPL-2.1 */
/* ust_sb: a growable string; allocation failure sticks and truncates. */
#ifndef USTITCH_SB_H
#define USTITCH_SB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ust_sb {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
};

void ust_sb_init(struct ust_sb *sb);
void ust_sb_fini(struct ust_sb *sb);
void ust_sb_reset(struct ust_sb *sb);
void ust_sb_printf(struct ust_sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ust_sb_puts(struct ust_sb *sb, const char *s);
/* @v as "0x" and lowercase hex digits, as printf's "0x%" PRIx64 (without its cost). */
void ust_sb_putx(struct ust_sb *sb, uint64_t v);
/* The text so far (never NULL). */
const char *ust_sb_str(const struct ust_sb *sb);
/* Hand the buffer over to the caller (malloc'ed, never NULL unless OOM). */
char *ust_sb_steal(struct ust_sb *sb);

#endif
