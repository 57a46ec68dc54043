// SPDX-License-Identifier: LGPL-2.1
/*
 * Opening a traced file by (device, inode) through the file-handle
 * interface: open_by_handle_at(2) with a handle built from the inode
 * number, on an fd of a mount of that device (/proc/self/mountinfo).
 *
 * Which file systems accept a handle made up from the inode number alone
 * (kernel 6.x, fs/<fs>/export.c or the fs's export_operations):
 *
 *  - ext2, ext3, ext4: FILEID_INO32_GEN (u32 inode, u32 generation); a
 *    generation of 0 is not checked (ext4_nfs_get_inode), so the inode
 *    number is enough.  An unused or unlinked inode gives ESTALE.  Tested
 *    here (ext4).  f2fs does the same (f2fs_nfs_get_inode), not tested.
 *  - xfs: FILEID_INO32_GEN or, for 64-bit inodes, 0x81 (u64 inode, u32
 *    generation); the generation is always compared and is random: refused.
 *  - btrfs: its own handle (objectid, subvolume root, generation), the
 *    generation always compared: refused.
 *  - tmpfs/shmem: (generation, inode) with a random generation: refused;
 *    tested here (ESTALE with generation 0).
 *  - overlayfs: handles encode the underlying file's handle, never an
 *    inode number; but the kernel records the *underlying* file's
 *    (device, inode) for a mapping of an overlay file (the VMA holds the
 *    real file), so such frames resolve through the underlying mount when
 *    it is visible here.  Tested here (lower and upper on ext4).
 *  - proc, sysfs, devtmpfs...: no export operations (EOPNOTSUPP/EINVAL).
 *
 * Every opened file is checked with fstat(): same device, same inode, a
 * regular file.  Without CAP_DAC_READ_SEARCH the call fails with EPERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/grow.h"
#include "ustitch/resolve.h"
#include "res_internal.h"

#define FILEID_INO32_GEN	1

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* "36 35 98:0 /root /mnt rw,noatime shared:1 - ext4 /dev/vda rw" */
static void add_line(struct ust_res_mounts *m, char *line)
{
	char *f[6], *save = NULL, *tok, *fstype = NULL;
	unsigned int maj, min;
	struct ust_res_mnt *e;
	int n = 0;
	size_t i;

	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (n < 6)
			f[n++] = tok;
		else if (!strcmp(tok, "-")) {
			fstype = strtok_r(NULL, " \n", &save);
			break;
		}
	}
	if (n < 5 || !fstype || sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return;
	/*
	 * One mount per device: the file system's root mounted if there is
	 * one, else a bind mount of a subdirectory (with CAP_DAC_READ_SEARCH
	 * the kernel opens files outside that subtree too).
	 */
	unescape(f[4]);
	for (i = 0; i < m->nr; i++) {
		if (m->v[i].kdev != UST_ABI_MKKDEV(maj, min))
			continue;
		if (!m->v[i].whole && !strcmp(f[3], "/") && (tok = strdup(f[4]))) {
			free(m->v[i].dir);
			m->v[i].dir = tok;
			m->v[i].whole = true;
		}
		return;
	}
	e = ust_grow(m->v, &m->cap, m->nr + 1, sizeof(*m->v), 16);
	if (!e)
		return;
	m->v = e;
	e = &m->v[m->nr];
	e->whole = !strcmp(f[3], "/");
	e->kdev = UST_ABI_MKKDEV(maj, min);
	e->dir = strdup(f[4]);
	e->fstype = strdup(fstype);
	e->fd = -1;
	if (!e->dir || !e->fstype) {
		free(e->dir);
		free(e->fstype);
		return;
	}
	m->nr++;
}

static void load(struct ust_res_mounts *m)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *fp;

	m->loaded = true;
	fp = fopen("/proc/self/mountinfo", "re");
	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0)
		add_line(m, line);
	free(line);
	fclose(fp);
}

void ust_res_mounts_fini(struct ust_res_mounts *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++) {
		if (m->v[i].fd >= 0)
			close(m->v[i].fd);
		free(m->v[i].dir);
		free(m->v[i].fstype);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int ust_res_handle_type(const char *fstype, uint64_t ino, const char **why)
{
	static const struct {
		const char *fs, *why;
	} refused[] = {
		{ "tmpfs", "tmpfs file handles need the inode's random generation" },
		{ "xfs", "xfs file handles need the inode's generation" },
		{ "btrfs", "btrfs file handles need the subvolume and the inode's generation" },
		{ "overlay", "overlayfs file handles are not made from inode numbers" },
		{ "proc", "proc has no file handles" },
		{ "sysfs", "sysfs has no file handles" },
		{ "devtmpfs", "devtmpfs file handles need the inode's generation" },
	};
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (!strcmp(fstype, refused[i].fs)) {
			*why = refused[i].why;
			return -1;
		}
	}
	if (ino > UINT32_MAX) {
		*why = "a 64-bit inode number does not fit a FILEID_INO32_GEN handle";
		return -1;
	}
	/* ext2/3/4, f2fs and other generic_fh_to_dentry() users. */
	return FILEID_INO32_GEN;
}

static struct ust_res_mnt *mount_of(struct ust_res_mounts *m, uint32_t kdev)
{
	size_t i;

	if (!m->loaded)
		load(m);
	for (i = 0; i < m->nr; i++)
		if (m->v[i].kdev == kdev)
			return &m->v[i];
	return NULL;
}

enum ust_res_h ust_res_open_handle(struct ust_res_mounts *m, uint32_t kdev, uint64_t ino,
				   int *fd, const char **why)
{
	struct {
		struct file_handle fh;
		uint32_t v[2];
	} h;
	struct ust_res_mnt *mnt = mount_of(m, kdev);
	struct stat st;
	int type;

	*fd = -1;
	*why = NULL;
	if (!mnt) {
		*why = "no mount of this device here";
		return UST_RES_H_NOMOUNT;
	}
	type = ust_res_handle_type(mnt->fstype, ino, why);
	if (type < 0)
		return UST_RES_H_REFUSED;
	if (mnt->fd == -1) {
		mnt->fd = open(mnt->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mnt->fd >= 0 && (fstat(mnt->fd, &st) != 0 ||
				     st.st_dev != ust_res_kdev_to_dev(kdev))) {
			close(mnt->fd);
			mnt->fd = -2;
		}
		if (mnt->fd < 0)
			mnt->fd = -2;
	}
	if (mnt->fd < 0) {
		*why = "its mount point cannot be opened";
		return UST_RES_H_NOMOUNT;
	}
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = 8;
	h.fh.handle_type = type;
	h.v[0] = (uint32_t)ino;
	h.v[1] = 0;		/* generation: not checked when 0 */
	*fd = open_by_handle_at(mnt->fd, &h.fh, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0) {
		switch (errno) {
		case EPERM:
			*why = "open_by_handle_at needs CAP_DAC_READ_SEARCH";
			return UST_RES_H_NOCAP;
		case ESTALE:
		case ENOENT:
			*why = "no longer exists";
			return UST_RES_H_GONE;
		case EOPNOTSUPP:
		case EINVAL:
			*why = "this file system has no file handles";
			return UST_RES_H_REFUSED;
		default:
			*why = "open_by_handle_at failed";
			return UST_RES_H_OTHER;
		}
	}
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != ust_res_kdev_to_dev(kdev) || (uint64_t)st.st_ino != ino) {
		close(*fd);
		*fd = -1;
		*why = "the handle opened another file";
		return UST_RES_H_OTHER;
	}
	return UST_RES_H_OK;
}
