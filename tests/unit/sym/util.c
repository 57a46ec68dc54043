// SPDX-License-Identifier: LGPL-2.1
/* Helpers of the ust_sym / ust_res tests: see util.h. */
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

const char *tu_env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v) {
		fprintf(stderr, "environment variable %s is not set (run through meson test)\n",
			name);
		exit(2);
	}
	return v;
}

const char *tu_env_opt(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Bounded copy that says so (snprintf("%s") would warn about truncation). */
static void cpy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static FILE *run(const char *fmt, const char *a, const char *b, const char *c)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), fmt, a, b, c);
	return popen(cmd, "r");
}

int tu_nm(const char *nm, const char *path, bool dynamic, struct tu_sym **out)
{
	char line[1024];
	int n = 0, cap = 0;
	FILE *fp;

	*out = NULL;
	fp = run("'%s' -S --defined-only %s '%s' 2>/dev/null", nm, dynamic ? "-D" : "", path);
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char f1[512], f2[512], f3[512], name[512], *at;
		struct tu_sym s = { 0 };
		int k = sscanf(line, "%511s %511s %511s %511s", f1, f2, f3, name);

		if (k == 4) {
			s.addr = strtoull(f1, NULL, 16);
			s.size = strtoull(f2, NULL, 16);
			s.type = f3[0];
		} else if (k == 3) {
			s.addr = strtoull(f1, NULL, 16);
			s.type = f2[0];
			cpy(name, sizeof(name), f3);
		} else {
			continue;
		}
		if (!strchr("TtWwi", s.type))
			continue;
		at = strchr(name, '@');
		if (at) {
			s.old_version = at[1] != '@';
			*at = '\0';
		}
		cpy(s.name, sizeof(s.name), name);
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = realloc(*out, (size_t)cap * sizeof(**out));
		}
		(*out)[n++] = s;
	}
	pclose(fp);
	return n;
}

const struct tu_sym *tu_nm_find(const struct tu_sym *s, int n, const char *name)
{
	const struct tu_sym *old = NULL;

	for (int i = 0; i < n; i++) {
		if (strcmp(s[i].name, name) != 0)
			continue;
		if (!s[i].old_version)
			return &s[i];
		old = &s[i];
	}
	return old;
}

bool tu_nm_alias(const struct tu_sym *s, int n, uint64_t addr, const char *name)
{
	for (int i = 0; i < n; i++)
		if (s[i].addr == addr && strcmp(s[i].name, name) == 0)
			return true;
	return false;
}

/* "file:line[:col]" or "??:0" */
static void parse_loc(char *s, struct tu_frame *f)
{
	char *c1, *c2;

	s[strcspn(s, "\n")] = '\0';
	f->file[0] = '\0';
	f->line = 0;
	if (strncmp(s, "??", 2) == 0)
		return;
	c1 = strrchr(s, ':');
	if (!c1)
		return;
	*c1 = '\0';
	c2 = strrchr(s, ':');
	if (c2 && c2[1] >= '0' && c2[1] <= '9') {
		/* file:line:col */
		*c2 = '\0';
		f->line = (unsigned int)strtoul(c2 + 1, NULL, 10);
	} else {
		f->line = (unsigned int)strtoul(c1 + 1, NULL, 10);
	}
	cpy(f->file, sizeof(f->file), s);
}

int tu_addr2line(const char *tool, const char *path, uint64_t addr,
		 struct tu_frame *out, int max)
{
	char a[32], name[1024], loc[2048];
	int n = 0;
	FILE *fp;

	snprintf(a, sizeof(a), "0x%" PRIx64, addr);
	fp = run("'%s' -i -f -e '%s' %s 2>/dev/null", tool, path, a);
	if (!fp)
		return -1;
	while (n < max && fgets(name, sizeof(name), fp) && fgets(loc, sizeof(loc), fp)) {
		char *cut;

		name[strcspn(name, "\n")] = '\0';
		cut = strstr(name, " inlined at ");
		if (cut)
			*cut = '\0';
		cpy(out[n].func, sizeof(out[n].func), name);
		parse_loc(loc, &out[n]);
		n++;
	}
	pclose(fp);
	return n;
}

uint64_t tu_return_addr(const char *objdump, const char *path, const char *func,
			const char *callee)
{
	char line[1024], want[300], callee_ref[300];
	bool in_func = false, take_next = false;
	uint64_t ret = 0;
	FILE *fp;

	snprintf(want, sizeof(want), "<%s>:", func);
	snprintf(callee_ref, sizeof(callee_ref), "<%s", callee);
	fp = run("'%s' -d --no-show-raw-insn '%s'%s 2>/dev/null", objdump, path, "");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		if (strstr(line, ">:")) {
			in_func = strstr(line, want) != NULL;
			continue;
		}
		if (take_next) {
			ret = strtoull(line, NULL, 16);
			if (ret)
				break;
		}
		if (in_func && strstr(line, "call") && strstr(line, callee_ref))
			take_next = true;
	}
	pclose(fp);
	return ret;
}

static Elf *open_elf(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	if (*fd < 0)
		return NULL;
	return elf_begin(*fd, ELF_C_READ, NULL);
}

int tu_vaddr_to_off(const char *path, uint64_t vaddr, uint64_t *off)
{
	size_t n, i;
	int fd, ret = -1;
	Elf *e = open_elf(path, &fd);

	if (!e)
		goto out;
	if (elf_getphdrnum(e, &n) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			ret = 0;
			break;
		}
	}
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return ret;
}

int64_t tu_exec_delta(const char *path)
{
	int64_t d = 0;
	size_t n, i;
	int fd;
	Elf *e = open_elf(path, &fd);

	if (e && elf_getphdrnum(e, &n) == 0)
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				d = (int64_t)(ph.p_vaddr - ph.p_offset);
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return d;
}

size_t tu_readelf_build_id(const char *readelf, const char *path, uint8_t *out, size_t max)
{
	char line[1024];
	size_t len = 0;
	FILE *fp = run("'%s' -n '%s'%s 2>/dev/null", readelf, path, "");

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		char *p = strstr(line, "Build ID: ");

		if (!p)
			continue;
		for (p += 10; len < max && p[0] && p[1] && p[0] != '\n'; p += 2) {
			char hex[3] = { p[0], p[1], 0 };

			out[len++] = (uint8_t)strtoul(hex, NULL, 16);
		}
		break;
	}
	pclose(fp);
	return len;
}

char *tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s/ust-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(buf))
		return NULL;
	return strdup(buf);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tu_rmtree(const char *dir)
{
	if (dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tu_write(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");
	int ret;

	if (!fp)
		return -1;
	ret = len && fwrite(buf, 1, len, fp) != len ? -1 : 0;
	if (fclose(fp) != 0)
		ret = -1;
	return ret;
}

void *tu_read(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(fp);
	return buf;
}

int tu_copy(const char *from, const char *to)
{
	size_t len;
	void *buf = tu_read(from, &len);
	int ret;

	if (!buf)
		return -1;
	ret = tu_write(to, buf, len);
	free(buf);
	if (ret == 0)
		chmod(to, 0755);
	return ret;
}

uint64_t tu_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}
