// SPDX-License-Identifier: LGPL-2.1
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/sb.h"
#include "ustitch/grow.h"

void ust_sb_init(struct ust_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void ust_sb_fini(struct ust_sb *sb)
{
	free(sb->buf);
	ust_sb_init(sb);
}

void ust_sb_reset(struct ust_sb *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

static bool reserve(struct ust_sb *sb, size_t more)
{
	char *n;

	if (sb->oom)
		return false;
	n = ust_grow(sb->buf, &sb->cap, sb->len + more + 1, 1, 256);
	if (!n) {
		sb->oom = true;
		return false;
	}
	sb->buf = n;
	return true;
}

void ust_sb_printf(struct ust_sb *sb, const char *fmt, ...)
{
	size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
	va_list ap;
	int n;

	if (sb->oom)
		return;
	/* Formatted once where it fits (nearly always), twice where it does not. */
	va_start(ap, fmt);
	n = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (room)
			sb->buf[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		if (!reserve(sb, (size_t)n)) {
			if (room)
				sb->buf[sb->len] = '\0';
			return;
		}
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

void ust_sb_putx(struct ust_sb *sb, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[18];
	int i = (int)sizeof(tmp);

	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	if (!reserve(sb, sizeof(tmp) - (size_t)i))
		return;
	memcpy(sb->buf + sb->len, tmp + i, sizeof(tmp) - (size_t)i);
	sb->len += sizeof(tmp) - (size_t)i;
	sb->buf[sb->len] = '\0';
}

void ust_sb_puts(struct ust_sb *sb, const char *s)
{
	size_t n = strlen(s);

	if (!reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n + 1);
	sb->len += n;
}

const char *ust_sb_str(const struct ust_sb *sb)
{
	return sb->buf ? sb->buf : "";
}

char *ust_sb_steal(struct ust_sb *sb)
{
	char *s = sb->buf ? sb->buf : strdup("");

	ust_sb_init(sb);
	return s;
}
