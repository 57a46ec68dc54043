// SPDX-License-Identifier: LGPL-2.1
/*
 * Locating an object's separate debug file, as gdb and elfutils do.
 *
 * 1. By build-id: ROOT/.build-id/xx/rest.debug for each configured root,
 *    then /usr/lib/debug.  The candidate's own build-id must match: a
 *    stale tree must not lend wrong symbols.
 * 2. By .gnu_debuglink: the recorded name next to the object, in its
 *    .debug/ subdirectory, and under each root + the object's directory.
 *    The CRC-32 recorded beside the name must match the whole file: the
 *    name alone says nothing about which build it came from.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "sym_internal.h"

#define DEFAULT_ROOT	"/usr/lib/debug"

/*
 * The CRC-32 of .gnu_debuglink (and of ustitch's own cache files) is
 * zlib's: its sliced implementation is several times faster than a table
 * a byte at a time, and checking a cached unwind table of cc1plus (7 MB)
 * stood between an exec and the first complete stacks.
 */
uint32_t ust_sym_crc32(uint32_t crc, const void *buf, size_t len)
{
	return (uint32_t)crc32_z(crc, buf, len);
}

/* CRC of a whole file, read once in large chunks; -1 when unreadable. */
static int crc32_file(const char *path, uint32_t *out)
{
	static const size_t chunk = 1 << 20;
	unsigned char *buf;
	uint32_t crc = 0;
	struct stat st;
	ssize_t n;
	int fd;

	/* The name comes from the traced file: never wait on a FIFO or read
	 * a device or a file of any size (its stat() was of another moment). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > UST_SYM_MAX_FILE) {
		close(fd);
		return -1;
	}
	buf = malloc(chunk);
	if (!buf) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, chunk)) > 0)
		crc = ust_sym_crc32(crc, buf, (size_t)n);
	free(buf);
	close(fd);
	if (n < 0)
		return -1;
	*out = crc;
	return 0;
}

/* Opens @cand unless it is @main itself (a debuglink naming its own file). */
static int open_candidate(const char *cand, const struct ust_sym_elf *main,
			  struct ust_sym_elf *out)
{
	if (ust_sym_elf_open(out, cand, NULL, 0) != 0)
		return -1;
	if (main && main->elf && out->dev == main->dev && out->ino == main->ino) {
		ust_sym_elf_close(out);
		return -1;
	}
	return 0;
}

int ust_sym_debug_open_id(const char *path, const uint8_t *id, size_t id_len,
			  const struct ust_sym_elf *main, struct ust_sym_elf *out)
{
	uint8_t got[UST_SYM_BUILD_ID_MAX];

	if (open_candidate(path, main, out) != 0)
		return -1;
	if (ust_sym_elf_build_id(out->elf, got, sizeof(got)) != id_len ||
	    memcmp(got, id, id_len) != 0) {
		ust_sym_elf_close(out);
		return -1;
	}
	return 0;
}

static int by_build_id(const char *root, const uint8_t *id, size_t id_len,
		       const struct ust_sym_elf *main, struct ust_sym_elf *out)
{
	char path[PATH_MAX], hex[2 * UST_SYM_BUILD_ID_MAX + 1];
	size_t i;

	if (id_len < 2 || id_len > UST_SYM_BUILD_ID_MAX)
		return -1;
	for (i = 0; i < id_len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, hex,
		     hex + 2) >= (int)sizeof(path))
		return -1;
	return ust_sym_debug_open_id(path, id, id_len, main, out);
}

/* The .gnu_debuglink name and CRC of @elf; -1 when absent or malformed. */
static int read_debuglink(Elf *elf, const char **name, uint32_t *crc)
{
	const unsigned char *p;
	size_t len, crc_off;
	Elf_Data *d;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;

	scn = ust_sym_elf_section(elf, ".gnu_debuglink", &sh);
	if (!scn || sh.sh_type == SHT_NOBITS || !gelf_getehdr(elf, &eh))
		return -1;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return -1;
	p = d->d_buf;
	len = strnlen((const char *)p, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;	/* NUL, then padding to 4 */
	if (!len || len == d->d_size || crc_off + 4 > d->d_size)
		return -1;
	/* A file name, joined to the debug directories: one with a '/' (or
	 * "..") would reach any file, and the traced file chose it. */
	if (memchr(p, '/', len) || !strcmp((const char *)p, ".."))
		return -1;
	/* The CRC is stored in the object's byte order. */
	if (eh.e_ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)p[crc_off] << 24 | (uint32_t)p[crc_off + 1] << 16 |
		       (uint32_t)p[crc_off + 2] << 8 | p[crc_off + 3];
	else
		*crc = (uint32_t)p[crc_off + 3] << 24 | (uint32_t)p[crc_off + 2] << 16 |
		       (uint32_t)p[crc_off + 1] << 8 | p[crc_off];
	*name = (const char *)p;
	return 0;
}

static int try_link(const char *cand, uint32_t crc, const struct ust_sym_elf *main,
		    struct ust_sym_elf *out)
{
	struct stat st;
	uint32_t got;

	if (stat(cand, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	if (main->elf && st.st_dev == main->dev && st.st_ino == main->ino)
		return -1;
	if (crc32_file(cand, &got) != 0 || got != crc)
		return -1;
	return open_candidate(cand, main, out);
}

static int by_debuglink_in(const char *dir, const char *name, uint32_t crc,
			   const char *const *roots, int nr_roots,
			   const struct ust_sym_elf *main, struct ust_sym_elf *out)
{
	char cand[PATH_MAX];
	int i;

	if (snprintf(cand, sizeof(cand), "%s/%s", dir, name) < (int)sizeof(cand) &&
	    try_link(cand, crc, main, out) == 0)
		return 0;
	if (snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, name) < (int)sizeof(cand) &&
	    try_link(cand, crc, main, out) == 0)
		return 0;
	/* ROOT + an absolute directory: /usr/lib/debug/usr/lib/x86_64-linux-gnu/ */
	for (i = 0; dir[0] == '/' && i <= nr_roots; i++) {
		const char *root = i < nr_roots ? roots[i] : DEFAULT_ROOT;

		if (root && snprintf(cand, sizeof(cand), "%s%s/%s", root, dir, name) <
		    (int)sizeof(cand) && try_link(cand, crc, main, out) == 0)
			return 0;
	}
	return -1;
}

static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "%s", "");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

static int by_debuglink(const char *const *roots, int nr_roots,
			const struct ust_sym_elf *main, const char *path,
			struct ust_sym_elf *out)
{
	char dir[PATH_MAX], rdir[PATH_MAX], *real;
	const char *name;
	uint32_t crc;

	if (!main || !main->elf || !path || read_debuglink(main->elf, &name, &crc) != 0)
		return -1;
	dir_of(path, dir, sizeof(dir));
	if (by_debuglink_in(dir, name, crc, roots, nr_roots, main, out) == 0)
		return 0;
	/* Also where the object really lives: /lib is /usr/lib on Debian 12. */
	real = realpath(path, NULL);
	if (!real)
		return -1;
	dir_of(real, rdir, sizeof(rdir));
	free(real);
	if (strcmp(dir, rdir) == 0)
		return -1;
	return by_debuglink_in(rdir, name, crc, roots, nr_roots, main, out);
}

int ust_sym_debug_find(const char *const *roots, int nr_roots,
		       const struct ust_sym_elf *main, const char *path,
		       const uint8_t *id, size_t id_len, struct ust_sym_elf *out)
{
	int i;

	if (id && id_len) {
		for (i = 0; i < nr_roots; i++)
			if (roots[i] && by_build_id(roots[i], id, id_len, main, out) == 0)
				return 0;
		if (by_build_id(DEFAULT_ROOT, id, id_len, main, out) == 0)
			return 0;
	}
	return by_debuglink(roots, nr_roots, main, path, out);
}
