// SPDX-License-Identifier: LGPL-2.1
/*
 * The archive `ustitch archive` writes next to a trace (trace.dat.ustitch/):
 *
 *   manifest                    "MAJ:MIN INODE BUILD-ID|- SIZE PATH" per file
 *   .build-id/xx/rest           a copy of the traced file, by build-id
 *   .build-id/xx/rest.debug     its separate debug file, if there was one
 *   .by-inode/MAJ-MIN-INODE     a copy of a file without a build-id
 *
 * The manifest is data from elsewhere: its paths are only ever shown.
 * Which file is opened follows from the build-id (hex digits) or the
 * numbers alone, and the copy is opened beneath the archive's directory
 * without following any symlink, only when it is a regular file of the
 * recorded size, and (with a build-id) only when its build-id matches.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"
#include "res_internal.h"

#define MAX_MANIFEST	(64UL << 20)
#define MAX_COPY	UST_SYM_MAX_FILE	/* the symbolizer would not read a larger copy */

static int fail(char *err, size_t errsz, int ret, const char *fmt, const char *a,
		const char *b)
{
	if (err && errsz)
		snprintf(err, errsz, fmt, a, b);
	return ret;
}

int ust_res_openat_beneath(int dfd, const char *rel, int flags)
{
	char buf[4096], *save = NULL, *tok, *next;
	int cur = dfd, fd = -1;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf) || rel[0] == '/') {
		errno = EINVAL;
		return -1;
	}
	tok = strtok_r(buf, "/", &save);
	while (tok) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(tok, "..") || !strcmp(tok, ".")) {
			errno = EINVAL;
			fd = -1;
			break;
		}
		fd = openat(cur, tok, next ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC :
					     flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (cur != dfd)
			close(cur);
		if (fd < 0 || !next)
			return fd;
		cur = fd;
		tok = next;
	}
	if (cur != dfd && cur != fd)
		close(cur);
	if (fd >= 0)
		close(fd);
	if (!errno)
		errno = EINVAL;
	return -1;
}

void ust_res_archive_name(uint32_t kdev, uint64_t ino, const uint8_t *bid, size_t bid_len,
			  char *out, size_t outsz)
{
	char hex[2 * 64 + 1];
	size_t i;

	if (bid && bid_len >= 2 && bid_len <= 64) {
		for (i = 0; i < bid_len; i++)
			sprintf(hex + 2 * i, "%02x", bid[i]);
		snprintf(out, outsz, ".build-id/%.2s/%s", hex, hex + 2);
	} else {
		snprintf(out, outsz, ".by-inode/%u-%u-%" PRIu64, UST_ABI_KDEV_MAJOR(kdev),
			 UST_ABI_KDEV_MINOR(kdev), ino);
	}
}

static void free_ent(void *p)
{
	struct ust_res_arch_ent *e = p;

	free(e->path);
	free(e);
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "\\" and "\n" are the manifest's only escapes. */
static void unescape_path(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 'n')
			*d++ = '\n', s++;
		else if (s[0] == '\\' && s[1] == '\\')
			*d++ = '\\', s++;
		else
			*d++ = *s;
	}
	*d = '\0';
}

static bool parse_line(struct ust_res_archive *a, char *line)
{
	unsigned long long ino, size;
	unsigned int maj, min;
	char bid[160];
	struct ust_res_arch_ent *e, *old;
	size_t len = strlen(line), i;
	int pos = 0;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return true;
	if (sscanf(line, "%u:%u %llu %159s %llu %n", &maj, &min, &ino, bid, &size, &pos) != 5 ||
	    !pos || !ino || maj > (UINT32_MAX >> UST_ABI_KDEV_MINORBITS) ||
	    min > UST_ABI_KDEV_MINORMASK)
		return false;
	e = calloc(1, sizeof(*e));
	if (!e)
		return false;
	if (strcmp(bid, "-") != 0) {
		size_t n = strlen(bid);

		if (n % 2 || n < 4 || n > 2 * sizeof(e->bid))
			goto bad;
		for (i = 0; i < n / 2; i++) {
			int hi = hexval(bid[2 * i]), lo = hexval(bid[2 * i + 1]);

			if (hi < 0 || lo < 0)
				goto bad;
			e->bid[i] = (uint8_t)(hi << 4 | lo);
		}
		e->bid_len = n / 2;
	}
	e->size = size;
	e->path = strdup(line + pos);
	if (!e->path)
		goto bad;
	unescape_path(e->path);
	if (ust_res_map_put(&a->ents, UST_ABI_MKKDEV(maj, min), ino, e, (void **)&old) != 0)
		goto bad;
	if (old)
		free_ent(old);
	return true;
bad:
	free_ent(e);
	return false;
}

static void check_debug(uint32_t kdev, uint64_t ino, void *val, void *ctx)
{
	const struct ust_res_arch_ent *e = val;
	struct ust_res_archive *a = ctx;
	char rel[256];
	struct stat st;
	int fd;

	if (!a->debug_ok || e->bid_len < 2)
		return;
	ust_res_archive_name(kdev, ino, e->bid, e->bid_len, rel, sizeof(rel));
	strncat(rel, ".debug", sizeof(rel) - strlen(rel) - 1);
	fd = ust_res_openat_beneath(a->dfd, rel, O_RDONLY);
	if (fd < 0) {
		if (errno != ENOENT)
			a->debug_ok = false;
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_COPY)
		a->debug_ok = false;
	close(fd);
}

int ust_res_archive_open(struct ust_res_archive *a, const char *dir, char *err, size_t errsz)
{
	char *buf, *line, *nl;
	struct stat st;
	ssize_t n;
	int fd;

	memset(a, 0, sizeof(*a));
	a->dfd = -1;
	ust_res_map_init(&a->ents);
	a->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->dfd < 0)
		return fail(err, errsz, -errno, "archive %s: %s", dir, strerror(errno));
	fd = ust_res_openat_beneath(a->dfd, "manifest", O_RDONLY);
	if (fd < 0) {
		int e = errno;

		ust_res_archive_fini(a);
		return fail(err, errsz, -e, "archive %s: no manifest (%s)", dir,
			    e == ELOOP ? "a symlink" : strerror(e));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (unsigned long)st.st_size > MAX_MANIFEST) {
		close(fd);
		ust_res_archive_fini(a);
		return fail(err, errsz, -EINVAL, "archive %s: manifest is %s", dir,
			    S_ISREG(st.st_mode) ? "larger than 64 MiB" : "not a regular file");
	}
	buf = malloc((size_t)st.st_size + 1);
	n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		ust_res_archive_fini(a);
		return fail(err, errsz, -ENOMEM, "archive %s: cannot read the manifest%s", dir, "");
	}
	buf[n] = '\0';
	for (line = buf; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (!parse_line(a, line))
			a->bad_lines++;
	}
	free(buf);
	a->dir = strdup(dir);
	if (!a->dir) {
		ust_res_archive_fini(a);
		return -ENOMEM;
	}
	/* The archive is a debug root for the symbolizer only when no debug
	 * file in it is a symlink or anything but a regular file. */
	a->debug_ok = true;
	ust_res_map_each(&a->ents, check_debug, a);
	return 0;
}

void ust_res_archive_fini(struct ust_res_archive *a)
{
	ust_res_map_fini(&a->ents, free_ent);
	if (a->dfd >= 0)
		close(a->dfd);
	free(a->dir);
	memset(a, 0, sizeof(*a));
	a->dfd = -1;
}

int ust_res_archive_open_copy(const struct ust_res_archive *a, uint32_t kdev, uint64_t ino,
			      const struct ust_res_arch_ent *e, char *err, size_t errsz)
{
	uint8_t got[64];
	char rel[256], link[64];
	struct stat st;
	size_t len;
	int fd;

	ust_res_archive_name(kdev, ino, e->bid, e->bid_len, rel, sizeof(rel));
	fd = ust_res_openat_beneath(a->dfd, rel, O_RDONLY);
	if (fd < 0) {
		int en = errno;

		return fail(err, errsz, -en, "%s: %s", rel,
			    en == ELOOP ? "a symlink, not used" : strerror(en));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errsz, -EINVAL, "%s: %s", rel, "not a regular file, not used");
	}
	if ((uint64_t)st.st_size != e->size || (uint64_t)st.st_size > MAX_COPY) {
		close(fd);
		return fail(err, errsz, -EINVAL, "%s: %s", rel,
			    "not the size the manifest says, not used");
	}
	if (e->bid_len) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = ust_sym_read_build_id(link, got, sizeof(got));
		if (len != e->bid_len || memcmp(got, e->bid, len) != 0) {
			close(fd);
			return fail(err, errsz, -EINVAL, "%s: %s", rel,
				    "build-id differs from its name, not used");
		}
	}
	return fd;
}
