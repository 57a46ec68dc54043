// SPDX-License-Identifier: LGPL-2.1
/*
 * The disk cache of built tables: DIR/<build-id hex>.cfi.
 *
 * File layout (host byte order: the cache never leaves the machine):
 *   struct disk_hdr (magic, version, sizes, build-id, stats, row CRC)
 *   nr_rows * struct ust_cfi_row
 * A file whose magic, version, sizes, build-id or CRC do not match is
 * ignored (-EBADMSG); the caller rebuilds and overwrites it.  Writers
 * write DIR/.<hex>.<pid>.<n>.tmp and rename() it into place, so readers
 * see the old file or the whole new one, never a partial one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi_internal.h"

#define DISK_MAGIC	"USTCFI\r\n"
/* Bump on any change of the header, of struct ust_cfi_row or of the rules the builder emits. */
/* 2: 16-byte rows with the rbx rule (UST_CFI_CFA_RBX, rbx_type/rbx_off). */
/* 3: an END row at a program's entry point that no FDE covers (ld.so's _start). */
#define DISK_VERSION	3

struct disk_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size;		/* sizeof(struct disk_hdr) */
	uint32_t row_size;		/* sizeof(struct ust_cfi_row) */
	uint32_t nr_rows;
	uint32_t build_id_len;
	uint32_t rows_crc;		/* CRC-32 of the rows */
	uint8_t build_id[UST_CFI_BUILD_ID_MAX];
	uint8_t debug_file;
	uint8_t pad[7];
	struct ust_cfi_stats stats;	/* build_ms of the original build */
};

int ust_cfi_disk_dir(char *buf, size_t len)
{
	const char *env = getenv("USTITCH_CACHE_DIR");
	int n;

	if (env)
		n = env[0] ? snprintf(buf, len, "%s", env) : -1;
	else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/')
		n = snprintf(buf, len, "%s/ustitch/cfi", env);
	else if ((env = getenv("HOME")) && env[0] == '/')
		n = snprintf(buf, len, "%s/.cache/ustitch/cfi", env);
	else
		n = -1;
	if (n < 0)
		return -ENOENT;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int file_name(char *buf, size_t len, const char *dir, const uint8_t *id, size_t id_len)
{
	char hex[2 * UST_CFI_BUILD_ID_MAX + 1];
	size_t i;

	if (!id_len || id_len > UST_CFI_BUILD_ID_MAX)
		return -EINVAL;
	for (i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if ((size_t)snprintf(buf, len, "%s/%s.cfi", dir, hex) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ust_cfi_disk_save(const char *dir, const struct ust_cfi_table *t,
		      char *err, size_t errsz)
{
	static atomic_uint seq;
	char path[PATH_MAX], tmp[PATH_MAX + 64];
	struct disk_hdr h;
	int fd, ret;

	if (!dir || !dir[0])
		return ust_cfi_fail(err, errsz, -EINVAL, "no cache directory");
	ret = file_name(path, sizeof(path), dir, t->build_id, t->build_id_len);
	if (ret == -EINVAL)
		return ust_cfi_fail(err, errsz, ret, "a table without build-id is not cached");
	if (ret)
		return ust_cfi_fail(err, errsz, ret, "%s: path too long", dir);
	ret = make_dirs(dir);
	if (ret)
		return ust_cfi_fail(err, errsz, ret, "%s: %s", dir, strerror(-ret));

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, DISK_MAGIC, sizeof(h.magic));
	h.version = DISK_VERSION;
	h.hdr_size = sizeof(h);
	h.row_size = sizeof(struct ust_cfi_row);
	h.nr_rows = t->nr_rows;
	h.build_id_len = (uint32_t)t->build_id_len;
	memcpy(h.build_id, t->build_id, t->build_id_len);
	h.debug_file = t->debug_file;
	h.stats = t->stats;
	h.rows_crc = ust_sym_crc32(0, t->rows, (size_t)t->nr_rows * sizeof(*t->rows));

	snprintf(tmp, sizeof(tmp), "%s.%d.%u.tmp", path, (int)getpid(), atomic_fetch_add(&seq, 1));
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return ust_cfi_fail(err, errsz, -errno, "%s: %s", tmp, strerror(errno));
	ret = write_all(fd, &h, sizeof(h));
	if (!ret)
		ret = write_all(fd, t->rows, (size_t)t->nr_rows * sizeof(*t->rows));
	if (close(fd) != 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) != 0)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return ust_cfi_fail(err, errsz, ret, "%s: %s", path, strerror(-ret));
	}
	return 0;
}

int ust_cfi_disk_load(const char *dir, const uint8_t *build_id, size_t build_id_len,
		      struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct ust_cfi_table *t = NULL;
	char path[PATH_MAX];
	struct disk_hdr h;
	struct stat st;
	size_t bytes;
	ssize_t n;
	uint32_t i;
	int fd, ret;

	*out = NULL;
	if (!dir || !dir[0])
		return ust_cfi_fail(err, errsz, -ENOENT, "no cache directory");
	ret = file_name(path, sizeof(path), dir, build_id, build_id_len);
	if (ret)
		return ust_cfi_fail(err, errsz, ret, "no build-id or path too long");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ust_cfi_fail(err, errsz, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		ret = ust_cfi_fail(err, errsz, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	n = pread(fd, &h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, DISK_MAGIC, sizeof(h.magic)) != 0) {
		ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: not a CFI cache file", path);
		goto out;
	}
	if (h.version != DISK_VERSION || h.hdr_size != sizeof(h) ||
	    h.row_size != sizeof(struct ust_cfi_row)) {
		ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: cache format %u, expected %u",
				   path, h.version, DISK_VERSION);
		goto out;
	}
	if (h.build_id_len != build_id_len || memcmp(h.build_id, build_id, build_id_len) != 0) {
		ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: for another build-id", path);
		goto out;
	}
	bytes = (size_t)h.nr_rows * sizeof(struct ust_cfi_row);
	if ((uint64_t)st.st_size != sizeof(h) + bytes) {
		ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: %lld bytes, expected %zu", path,
				   (long long)st.st_size, sizeof(h) + bytes);
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->rows = malloc(bytes ? bytes : 1))) {
		ret = ust_cfi_fail(err, errsz, -ENOMEM, "out of memory");
		goto out;
	}
	n = bytes ? pread(fd, t->rows, bytes, sizeof(h)) : 0;
	if (n != (ssize_t)bytes) {
		ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: short read", path);
		goto out;
	}
	if (ust_sym_crc32(0, t->rows, bytes) != h.rows_crc) {
		ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: rows do not match their CRC", path);
		goto out;
	}
	for (i = 0; i < h.nr_rows; i++) {
		const struct ust_cfi_row *r = &t->rows[i];

		if (r->cfa_type >= UST_CFI_NR_CFA_TYPES || r->rbp_type >= UST_CFI_NR_RBP_TYPES ||
		    r->rbx_type >= UST_CFI_NR_RBP_TYPES || r->pad ||
		    (r->rbx_type != UST_CFI_RBP_CFA && r->rbx_type != UST_CFI_RBP_DEREF_RBP &&
		     r->rbx_off) ||
		    (i && r->off <= t->rows[i - 1].off)) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG, "%s: row %u is invalid", path, i);
			goto out;
		}
	}
	t->nr_rows = h.nr_rows;
	memcpy(t->build_id, h.build_id, build_id_len);
	t->build_id_len = build_id_len;
	t->debug_file = h.debug_file;
	t->stats = h.stats;
	*out = t;
	t = NULL;
	ret = 0;
out:
	ust_cfi_table_free(t);
	close(fd);
	return ret;
}
