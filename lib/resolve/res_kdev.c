// SPDX-License-Identifier: LGPL-2.1
/*
 * The kernel's dev_t (major << 20 | minor, include/linux/kdev_t.h) is not
 * user space's st_dev (glibc's makedev() splits the bits differently), so
 * every comparison with stat() goes through these two, and through
 * ust_res_path_matches(), the one check that a path is a (dev, inode).
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "res_internal.h"

dev_t ust_res_kdev_to_dev(uint32_t kdev)
{
	return makedev(UST_ABI_KDEV_MAJOR(kdev), UST_ABI_KDEV_MINOR(kdev));
}

uint32_t ust_res_dev_to_kdev(dev_t dev)
{
	return UST_ABI_MKKDEV(major(dev), minor(dev));
}

bool ust_res_path_matches(const char *path, uint32_t kdev, uint64_t ino)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_dev == ust_res_kdev_to_dev(kdev) && (uint64_t)st.st_ino == ino;
}
