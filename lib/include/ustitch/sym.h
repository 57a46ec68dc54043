/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_sym: file offset -> function+offset, source line and inlined frames.
 *
 * Every ELF file is opened once per cache; its function symbols are sorted
 * once and looked up by binary search, so the per-frame path never touches
 * the disk again.  Returned strings belong to the cache.
 */
#ifndef USTITCH_SYM_H
#define USTITCH_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ust_sym_cache;
struct ust_sym_file;

struct ust_sym_opts {
	/* Extra roots for separate debug files, tried before /usr/lib/debug. */
	const char *const *debug_dirs;
	int nr_debug_dirs;
	/*
	 * Asked last, when an object has no .symtab or no DWARF and no debug
	 * root has its debug file: the path of the debug file of @bid (e.g.
	 * fetched by debuginfod) into @path, 0, or a negative errno.  The
	 * file's build-id is checked here again.  NULL: not asked.
	 */
	int (*fetch_debug)(void *ctx, const uint8_t *bid, size_t bid_len, char *path,
			   size_t pathsz);
	void *fetch_ctx;
	/* Names as the symbol table spells them: no demangling of C++ and
	 * Rust names (by default they read as perf prints them). */
	bool raw_names;
};

struct ust_sym_frame {
	const char *func;	/* NULL when no symbol covers the address;
				 * demangled unless ust_sym_opts.raw_names */
	uint64_t func_off;	/* offset from the function's start */
	const char *src_file;	/* NULL without line info */
	unsigned int line;
	bool inlined;		/* this frame was inlined into the next one */
};

struct ust_sym_cache *ust_sym_cache_new(const struct ust_sym_opts *opts);
void ust_sym_cache_free(struct ust_sym_cache *c);
/*
 * The cache's serial: unique in the process, never 0, not reused after
 * the cache is freed (a file pointer kept elsewhere is tagged with it).
 */
uint64_t ust_sym_cache_serial(const struct ust_sym_cache *c);

/*
 * Load (once) the object at @path.  @build_id, if given, locates a separate
 * debug file when @path lacks symbols, and is enough on its own when @path
 * is NULL or missing.  Returns NULL, sets errno (ENOENT: no such file or
 * debug file, ENOMEM, EINVAL: not a usable ELF file) and fills @err on
 * failure; failures are cached too.
 */
struct ust_sym_file *ust_sym_cache_get(struct ust_sym_cache *c, const char *path,
				       const uint8_t *build_id, size_t build_id_len,
				       char *err, size_t errsz);

/*
 * Symbolize @file_off (a file offset as the kernel records it).
 * @is_return: the address is a return address; lines and inlines are looked
 * up at @file_off - 1, as perf does.  @want_lines: consult DWARF.
 * Fills up to @max frames, innermost (inlined) first, the containing real
 * function last.  Returns the number of frames (>= 1; frame[0].func may be
 * NULL when nothing covers the address), -ENOENT when @file_off lies in no
 * PT_LOAD segment, -EINVAL when @f is NULL or failed to load.
 */
int ust_sym_lookup(struct ust_sym_file *f, uint64_t file_off, bool is_return,
		   bool want_lines, struct ust_sym_frame *out, int max);

/* Reverse: the file offset and size of function @name, as the symbol
 * table spells it (mangled), for fixtures and address-range filters. 0 on success, -ENOENT if not found, -EINVAL when
 * @f is NULL or failed to load. */
int ust_sym_find_function(struct ust_sym_file *f, const char *name,
			  uint64_t *file_off, uint64_t *size);

const char *ust_sym_file_path(const struct ust_sym_file *f);
const char *ust_sym_file_basename(const struct ust_sym_file *f);
/* The separate debug file in use for @f (build-id or debuglink), or NULL. */
const char *ust_sym_file_debug_path(const struct ust_sym_file *f);
/* Build-id of the object (GNU note), 0 if none. */
size_t ust_sym_file_build_id(const struct ust_sym_file *f, const uint8_t **id);

/*
 * A C++ or Rust (legacy or v0) symbol name demangled as perf shows it
 * ("_ZN2ns1K4spinEi" -> "ns::K::spin(int)"), malloc()ed; NULL when @name
 * is not a mangled name or memory ran out.  ust_sym_lookup() does this
 * itself (once per name) unless ust_sym_opts.raw_names.
 */
char *ust_sym_demangle(const char *name);

/* Whether the ELF file @path lacks .symtab or DWARF (stripped): its
 * separate debug file would add to it.  False when it cannot be read. */
bool ust_sym_wants_debug_file(const char *path);

/* Read the GNU build-id note of @path without caching. Returns its length or 0. */
size_t ust_sym_read_build_id(const char *path, uint8_t *out, size_t max);

/*
 * The largest file the symbolizer and the resolver open: paths come from
 * the trace, and a file of any size could be named (a huge sparse file, a
 * device).  Above every real binary and debug file seen so far.
 */
#define UST_SYM_MAX_FILE	(8ULL << 30)
#define UST_SYM_MAX_FILE_TEXT	"larger than 8 GiB: not read"

#endif
