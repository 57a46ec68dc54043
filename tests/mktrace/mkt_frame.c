// SPDX-License-Identifier: LGPL-2.1
/*
 * Frames of `stack` lines, as the kernel would report them with inodes:
 * a file offset with the (inode, kernel dev_t) of the mapped file, or a
 * bare address with inode 0 when no file backs it.
 *
 *   PATH:SYMBOL[+0xOFF]        offset of SYMBOL in PATH (ust_sym_find_function) + OFF
 *   PATH@0xFILEOFF             a file offset in PATH
 *   raw:0xADDR                 no VMA: inode 0, dev 0
 *   kdev:MAJ:MIN:ino=N@0xOFF   everything explicit, no file needed
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"
#include "mkt.h"

static int stat_file(struct ust_mkt *m, const char *path, struct ust_mkt_frame *fr)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return ust_mkt_set_error(m, "%s: %s", path, strerror(errno));
	fr->ino = st.st_ino;
	fr->kdev = ust_res_dev_to_kdev(st.st_dev);
	return 0;
}

static int parse_kdev(struct ust_mkt *m, const char *text, struct ust_mkt_frame *fr)
{
	uint64_t ma, mi, ino, off;
	char *s = strdup(text + 5), *p, *q, *at;
	int ret = -1;

	if (!s)
		return ust_mkt_set_error(m, "out of memory");
	p = strchr(s, ':');
	q = p ? strchr(p + 1, ':') : NULL;
	at = q ? strrchr(q + 1, '@') : NULL;
	if (!p || !q || !at || strncmp(q + 1, "ino=", 4))
		goto bad;
	*p = *q = *at = '\0';
	if (!ust_mkt_parse_u64(s, &ma) || !ust_mkt_parse_u64(p + 1, &mi) ||
	    !ust_mkt_parse_u64(q + 5, &ino) || !ust_mkt_parse_u64(at + 1, &off) ||
	    ma > (UINT32_MAX >> UST_ABI_KDEV_MINORBITS) || mi > UST_ABI_KDEV_MINORMASK)
		goto bad;
	fr->kdev = UST_ABI_MKKDEV(ma, mi);
	fr->ino = ino;
	fr->addr = off;
	ret = 0;
	goto out;
bad:
	ust_mkt_set_error(m, "bad frame \"%s\" (kdev:MAJ:MIN:ino=N@0xOFF)", text);
out:
	free(s);
	return ret;
}

static int symbol_offset(struct ust_mkt *m, const char *path, const char *sym,
			 uint64_t *off)
{
	struct ust_sym_file *f;
	char err[256] = "";
	uint64_t size;

	if (!m->syms)
		m->syms = ust_sym_cache_new(NULL);
	if (!m->syms)
		return ust_mkt_set_error(m, "%s:%s: no symbol cache", path, sym);
	f = ust_sym_cache_get(m->syms, path, NULL, 0, err, sizeof(err));
	if (!f)
		return ust_mkt_set_error(m, "%s: %s", path, err[0] ? err : "cannot load symbols");
	if (ust_sym_find_function(f, sym, off, &size) < 0)
		return ust_mkt_set_error(m, "%s: no function \"%s\"", path, sym);
	return 0;
}

static int parse_symbol(struct ust_mkt *m, const char *text, struct ust_mkt_frame *fr)
{
	char *s = strdup(text), *colon, *plus;
	uint64_t base, add = 0;
	int ret = -1;

	if (!s)
		return ust_mkt_set_error(m, "out of memory");
	colon = strrchr(s, ':');
	if (!colon || colon == s || !colon[1]) {
		ust_mkt_set_error(m, "bad frame \"%s\" (PATH:SYMBOL+0xOFF, PATH@0xOFF, "
				  "raw:0xADDR or kdev:MAJ:MIN:ino=N@0xOFF)", text);
		goto out;
	}
	*colon = '\0';
	/* "+OFF" is optional; a '+' not followed by a number belongs to the name. */
	plus = strrchr(colon + 1, '+');
	if (plus && ust_mkt_parse_u64(plus + 1, &add))
		*plus = '\0';
	else
		add = 0;
	if (stat_file(m, s, fr) < 0 || symbol_offset(m, s, colon + 1, &base) < 0)
		goto out;
	fr->addr = base + add;
	ret = 0;
out:
	free(s);
	return ret;
}

int ust_mkt_parse_frame(struct ust_mkt *m, const char *text, struct ust_mkt_frame *fr)
{
	const char *at;
	char *path;
	int ret;

	memset(fr, 0, sizeof(*fr));
	if (!strncmp(text, "raw:", 4)) {
		if (!ust_mkt_parse_u64(text + 4, &fr->addr))
			return ust_mkt_set_error(m, "bad frame \"%s\" (raw:0xADDR)", text);
		return 0;
	}
	if (!strncmp(text, "kdev:", 5))
		return parse_kdev(m, text, fr);
	at = strrchr(text, '@');
	if (at && at != text && ust_mkt_parse_u64(at + 1, &fr->addr)) {
		path = strndup(text, at - text);
		if (!path)
			return ust_mkt_set_error(m, "out of memory");
		ret = stat_file(m, path, fr);
		free(path);
		return ret;
	}
	return parse_symbol(m, text, fr);
}
