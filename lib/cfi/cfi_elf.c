// SPDX-License-Identifier: LGPL-2.1
/*
 * The three inputs of the builder as one opened ELF.  ust_sym's opener
 * (lib/sym/sym_elf.c) already checks every header table and section
 * against the file size; rather than repeating those checks for
 * descriptors and memory images, a descriptor is reopened through
 * /proc/self/fd and an image is copied into a memfd first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfi_internal.h"

int ust_cfi_fail(char *err, size_t errsz, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errsz) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* ust_sym_elf_open says why in words only: the errno from its message. */
static int open_errno(const char *msg)
{
	if (strcmp(msg, "no such file") == 0)
		return -ENOENT;
	if (strcmp(msg, strerror(EACCES)) == 0)
		return -EACCES;
	if (strcmp(msg, "out of memory") == 0)
		return -ENOMEM;
	if (strcmp(msg, "not a regular file") == 0)
		return -EINVAL;
	return -ENOEXEC;
}

int ust_cfi_elf_path(struct ust_sym_elf *e, const char *path, char *err, size_t errsz)
{
	char msg[256] = "";

	if (!path)
		return ust_cfi_fail(err, errsz, -EINVAL, "no path");
	if (ust_sym_elf_open(e, path, msg, sizeof(msg)) != 0)
		return ust_cfi_fail(err, errsz, open_errno(msg), "%s: %s", path, msg);
	return 0;
}

int ust_cfi_elf_fd(struct ust_sym_elf *e, int fd, char *err, size_t errsz)
{
	char path[64], msg[256] = "";

	if (fd < 0)
		return ust_cfi_fail(err, errsz, -EBADF, "bad file descriptor %d", fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ust_sym_elf_open(e, path, msg, sizeof(msg)) != 0)
		return ust_cfi_fail(err, errsz, open_errno(msg), "fd %d: %s", fd, msg);
	return 0;
}

int ust_cfi_elf_mem(struct ust_sym_elf *e, const void *image, size_t size,
		    char *err, size_t errsz)
{
	char path[64], msg[256] = "";
	const char *p = image;
	size_t done = 0;
	int fd, ret = 0;

	if (!image || !size)
		return ust_cfi_fail(err, errsz, -EINVAL, "empty ELF image");
	fd = memfd_create("ust-cfi-image", MFD_CLOEXEC);
	if (fd < 0)
		return ust_cfi_fail(err, errsz, -errno, "memfd_create: %s", strerror(errno));
	while (done < size) {
		ssize_t n = write(fd, p + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = ust_cfi_fail(err, errsz, n < 0 ? -errno : -EIO,
					   "copying the ELF image: %s",
					   n < 0 ? strerror(errno) : "short write");
			goto out;
		}
		done += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ust_sym_elf_open(e, path, msg, sizeof(msg)) != 0)
		ret = ust_cfi_fail(err, errsz, open_errno(msg), "ELF image: %s", msg);
out:
	close(fd);
	return ret;
}
