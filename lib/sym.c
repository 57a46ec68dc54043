// SPDX-License-Identifier: LGPL-2.1
/* placeholder stubs so the tree links; replaced by the symbolizer work */
#include "ustitch/sym.h"

struct ust_sym_cache *ust_sym_cache_new(const struct ust_sym_opts *opts) { (void)opts; return 0; }
void ust_sym_cache_free(struct ust_sym_cache *c) { (void)c; }
struct ust_sym_file *ust_sym_cache_get(struct ust_sym_cache *c, const char *path,
				       const uint8_t *build_id, size_t build_id_len,
				       char *err, size_t errlen)
{ (void)c; (void)path; (void)build_id; (void)build_id_len; (void)err; (void)errlen; return 0; }
int ust_sym_lookup(struct ust_sym_file *f, uint64_t file_off, bool is_return,
		   bool want_lines, struct ust_sym_frame *out, int max)
{ (void)f; (void)file_off; (void)is_return; (void)want_lines; (void)out; (void)max; return -1; }
int ust_sym_find_function(struct ust_sym_file *f, const char *name, uint64_t *file_off, uint64_t *size)
{ (void)f; (void)name; (void)file_off; (void)size; return -1; }
const char *ust_sym_file_path(const struct ust_sym_file *f) { (void)f; return 0; }
const char *ust_sym_file_basename(const struct ust_sym_file *f) { (void)f; return 0; }
size_t ust_sym_file_build_id(const struct ust_sym_file *f, const uint8_t **id) { (void)f; (void)id; return 0; }
size_t ust_sym_read_build_id(const char *path, uint8_t *out, size_t max) { (void)path; (void)out; (void)max; return 0; }
