// SPDX-License-Identifier: LGPL-2.1
/*
 * One line of /proc/PID/maps: "start-end perms offset MAJ:MIN inode   path".
 * Parsed by hand rather than with sscanf(), which may take the locale lock
 * and is not async-signal-safe: the LTTng provider parses from inside the
 * traced application.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/maps.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static void skip_blanks(const char **p)
{
	while (blank(**p))
		(*p)++;
}

static bool hex(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	for (;; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			break;
		x = x << 4 | d;
	}
	if (s == *p)
		return false;
	*v = x;
	*p = s;
	return true;
}

static bool dec(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		x = x * 10 + (uint64_t)(*s - '0');
	if (s == *p)
		return false;
	*v = x;
	*p = s;
	return true;
}

int ust_maps_parse(char *line, struct ust_maps_ent *e)
{
	uint64_t start, end, off, maj, min, ino;
	const char *p = line, *perms;
	bool exec = false;
	size_t len;

	skip_blanks(&p);
	if (!hex(&p, &start) || *p++ != '-' || !hex(&p, &end))
		return -EINVAL;
	skip_blanks(&p);
	for (perms = p; *p && !blank(*p); p++)
		exec |= *p == 'x';
	if (p == perms)
		return -EINVAL;
	skip_blanks(&p);
	if (!hex(&p, &off))
		return -EINVAL;
	skip_blanks(&p);
	if (!hex(&p, &maj) || *p++ != ':' || !hex(&p, &min))
		return -EINVAL;
	skip_blanks(&p);
	if (!dec(&p, &ino))
		return -EINVAL;
	skip_blanks(&p);
	e->start = start;
	e->end = end;
	e->off = off;
	e->ino = ino;
	e->kdev = UST_ABI_MKKDEV(maj, min);
	e->exec = exec;
	e->path = line + (p - line);
	len = strlen(e->path);
	while (len && (e->path[len - 1] == '\n' || e->path[len - 1] == ' '))
		e->path[--len] = '\0';
	return 0;
}

int ust_maps_each(int fd, char *buf, size_t size,
		  int (*fn)(struct ust_maps_ent *e, void *ctx), void *ctx)
{
	size_t have = 0;
	bool skip = false;	/* in the tail of a line too long for @buf */

	if (size < 2)
		return -EINVAL;
	for (;;) {
		ssize_t got = read(fd, buf + have, size - 1 - have);
		char *p = buf, *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			break;
		have += (size_t)got;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			struct ust_maps_ent e;
			int ret;

			*nl = '\0';
			if (!skip && !ust_maps_parse(p, &e) && (ret = fn(&e, ctx)))
				return ret;
			skip = false;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		if (have == size - 1) {
			have = 0;	/* a line longer than the buffer: drop it */
			skip = true;
		}
		memmove(buf, p, have);
	}
	if (have && !skip) {	/* a last line without its newline */
		struct ust_maps_ent e;

		buf[have] = '\0';
		if (!ust_maps_parse(buf, &e))
			return fn(&e, ctx);
	}
	return 0;
}
