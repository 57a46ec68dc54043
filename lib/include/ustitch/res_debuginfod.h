/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_res_debuginfod: files by build-id from the debuginfod servers of
 * DEBUGINFOD_URLS, through elfutils' libdebuginfod (which also reads
 * DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, ... itself).
 *
 * One per report, owned by the resolver (ust_res_set_debuginfod).  The
 * resolver asks for a traced file's executable when no local source has
 * the file with its recorded build-id; the symbolizer asks for its debug
 * file (ust_sym_opts.fetch_debug) when the file it has is stripped and no
 * debug root has one.  Rules, for a report of any size:
 *   - each (build-id, kind) is asked once; misses are remembered;
 *   - the first failure that is not "not found" (server down, timeout)
 *     stops all asking for the rest of the report: one bounded wait
 *     (DEBUGINFOD_TIMEOUT) at most, said once in the summary;
 *   - a file whose own build-id is not the one asked for is refused, and
 *     the frames of that file say so.
 */
#ifndef USTITCH_RES_DEBUGINFOD_H
#define USTITCH_RES_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ust_res;
struct ust_sb;

enum ust_res_dbgd_kind {
	UST_RES_DBGD_EXECUTABLE,
	UST_RES_DBGD_DEBUGINFO,
};

/* Whether asking is the default: DEBUGINFOD_URLS is set and not empty. */
bool ust_res_debuginfod_wanted(void);

/*
 * Turn asking on (@on) or off for @r's report.  0; -ENOTSUP with @err when
 * ustitch was built without libdebuginfod or the library cannot be
 * loaded; the rest of the report works without it.
 */
int ust_res_set_debuginfod(struct ust_res *r, bool on, char *err, size_t errsz);
bool ust_res_debuginfod_on(const struct ust_res *r);

/*
 * The file of @kind for build-id @bid: its path in the client's cache into
 * @path.  0; -ENOENT: the servers do not have it (or asking stopped, or is
 * off); -EINVAL: a file came back with another build-id (refused, see
 * ust_res_debuginfod_note); another -errno: the failure that stopped asking.
 */
int ust_res_debuginfod_find(struct ust_res *r, enum ust_res_dbgd_kind kind, const uint8_t *bid,
			    size_t bid_len, char *path, size_t pathsz);

/* ust_sym_opts.fetch_debug: @ctx is the struct ust_res. */
int ust_res_debuginfod_fetch_debug(void *ctx, const uint8_t *bid, size_t bid_len, char *path,
				   size_t pathsz);

/* What to say at the frames of @bid: "debuginfod: ...: refused", or NULL. */
const char *ust_res_debuginfod_note(const struct ust_res *r, const uint8_t *bid, size_t bid_len);

/* The end-of-report lines ("ustitch: debuginfod ...\n"); nothing when all was well. */
void ust_res_debuginfod_summary(const struct ust_res *r, struct ust_sb *out);

#endif
