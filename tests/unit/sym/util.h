/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Helpers of the ust_sym / ust_res tests: the reference tools (nm,
 * eu-addr2line, objdump) run at test time, an ELF reader independent of
 * the code under test, and scratch files.
 */
#ifndef UST_TEST_SYM_UTIL_H
#define UST_TEST_SYM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An environment variable the meson test sets; the test fails without it. */
const char *tu_env(const char *name);
/* Same, NULL when unset or empty (optional tools). */
const char *tu_env_opt(const char *name);

struct tu_sym {
	uint64_t addr, size;
	char type;		/* nm's letter */
	char name[256];		/* without @VERSION */
	bool old_version;	/* was name@VER, not name@@VER */
};

/* Function symbols (T t W w i) from `nm -S --defined-only [-D] path`. */
int tu_nm(const char *nm, const char *path, bool dynamic, struct tu_sym **out);
/* By name, the default version first. */
const struct tu_sym *tu_nm_find(const struct tu_sym *s, int n, const char *name);
/* Is @name one of the function symbols at @addr? */
bool tu_nm_alias(const struct tu_sym *s, int n, uint64_t addr, const char *name);

struct tu_frame {
	char func[256];
	char file[1024];	/* "" for ?? */
	unsigned int line;
};

/* `eu-addr2line -i -f -e path 0xADDR`: frames innermost first; count or -1. */
int tu_addr2line(const char *tool, const char *path, uint64_t addr,
		 struct tu_frame *out, int max);

/* Return address following the first `call ... <callee>` in @func. */
uint64_t tu_return_addr(const char *objdump, const char *path, const char *func,
			const char *callee);

/* PT_LOAD translation read here with libelf, independently of ust_sym. */
int tu_vaddr_to_off(const char *path, uint64_t vaddr, uint64_t *off);
/* The executable segment's p_vaddr - p_offset. */
int64_t tu_exec_delta(const char *path);

/* Build-id from `readelf -n`, as bytes; its length or 0. */
size_t tu_readelf_build_id(const char *readelf, const char *path, uint8_t *out, size_t max);

/* Scratch: a fresh directory under $TMPDIR; removed by tu_rmtree. */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
int tu_copy(const char *from, const char *to);
int tu_write(const char *path, const void *buf, size_t len);
/* Whole file into a malloc'ed buffer. */
void *tu_read(const char *path, size_t *len);

/* Deterministic PRNG (xorshift64*). */
uint64_t tu_rand(uint64_t *state);

#endif
