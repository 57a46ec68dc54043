// SPDX-License-Identifier: LGPL-2.1
/*
 * Files by build-id from debuginfod servers (ustitch/res_debuginfod.h).
 *
 * libdebuginfod is loaded with dlopen() on first use, as elfutils' own
 * libdwfl does, rather than linked: it links libcurl and its TLS stack,
 * and this library lives inside trace-cmd and babeltrace2 (the plugins)
 * and every host tool, most of whose reports never ask a server.  Built
 * without its header (no libdebuginfod-dev), the feature compiles out and
 * turning it on says so.
 *
 * The client does the HTTP, the cache and the environment
 * (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, ...); what
 * is here is the report's policy: ask each build-id once, stop at the
 * first failure that is not "not found", and never hand out a file whose
 * build-id is not the one asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/res_debuginfod.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"
#include "res_internal.h"

#ifdef UST_HAVE_DEBUGINFOD
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#endif

#define BID_MAX	64

/* One question asked: its answer, kept for the rest of the report. */
struct dbgd_ent {
	enum ust_res_dbgd_kind kind;
	uint8_t bid[BID_MAX];
	size_t bid_len;
	int rc;			/* 0, -ENOENT, -EINVAL (refused), or the stopping failure */
	char *path;		/* rc == 0 */
	char note[224];		/* rc == -EINVAL: said at the frames */
};

struct ust_res_dbgd {
	void *client;		/* debuginfod_client * */
	struct dbgd_ent **ents;		/* each its own allocation: notes are pointed at */
	size_t nr, cap;
	int down;		/* the failure that stopped asking, 0: none */
	char down_what[160];	/* what was being asked then */
	unsigned int skipped;	/* questions not asked because of it */
	unsigned int fetched, refused;
};

static void hex(const uint8_t *b, size_t n, char *out, size_t outsz)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < outsz; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

bool ust_res_debuginfod_wanted(void)
{
	const char *v = getenv("DEBUGINFOD_URLS");

	return v && v[strspn(v, " \t")];
}

#ifdef UST_HAVE_DEBUGINFOD
struct dbgd_lib {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_executable)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
};

/* Loaded once per process and never unloaded: libcurl does not like to be
 * unloaded, and a report asks again after the next plugin load. */
static const struct dbgd_lib *dbgd_lib(char *err, size_t errsz)
{
	static struct dbgd_lib lib;
	static bool tried, ok;
	static char why[200];
	void *h;

	if (!tried) {
		tried = true;
		h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, sizeof(why), "cannot load %s (install libdebuginfod1)",
				 DEBUGINFOD_SONAME);
		} else {
			*(void **)&lib.begin = dlsym(h, "debuginfod_begin");
			*(void **)&lib.end = dlsym(h, "debuginfod_end");
			*(void **)&lib.find_executable = dlsym(h, "debuginfod_find_executable");
			*(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
			*(void **)&lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
			ok = lib.begin && lib.end && lib.find_executable && lib.find_debuginfo;
			if (!ok)
				snprintf(why, sizeof(why), "%s lacks debuginfod_begin() and the find calls",
					 DEBUGINFOD_SONAME);
		}
	}
	if (!ok && err && errsz)
		snprintf(err, errsz, "debuginfod: %s", why);
	return ok ? &lib : NULL;
}

/* No progress on the terminal: trace-cmd's output is the report. */
static int quiet_progress(debuginfod_client *c, long a, long b)
{
	(void)c, (void)a, (void)b;
	return 0;
}
#endif

int ust_res_dbgd_new(struct ust_res_dbgd **out, char *err, size_t errsz)
{
#ifdef UST_HAVE_DEBUGINFOD
	const struct dbgd_lib *lib = dbgd_lib(err, errsz);
	struct ust_res_dbgd *d;

	*out = NULL;
	if (!lib)
		return -ENOTSUP;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->client = lib->begin();
	if (!d->client) {
		free(d);
		if (err && errsz)
			snprintf(err, errsz, "debuginfod: debuginfod_begin() failed");
		return -ENOMEM;
	}
	if (lib->set_progressfn && !getenv("DEBUGINFOD_PROGRESS"))
		lib->set_progressfn(d->client, quiet_progress);
	*out = d;
	return 0;
#else
	*out = NULL;
	if (err && errsz)
		snprintf(err, errsz, "debuginfod: ustitch was built without libdebuginfod (install libdebuginfod-dev and rebuild)");
	return -ENOTSUP;
#endif
}

void ust_res_dbgd_free(struct ust_res_dbgd *d)
{
	size_t i;

	if (!d)
		return;
#ifdef UST_HAVE_DEBUGINFOD
	if (d->client)
		dbgd_lib(NULL, 0)->end(d->client);
#endif
	for (i = 0; i < d->nr; i++) {
		free(d->ents[i]->path);
		free(d->ents[i]);
	}
	free(d->ents);
	free(d);
}

static struct dbgd_ent *lookup(struct ust_res_dbgd *d, enum ust_res_dbgd_kind kind,
			       const uint8_t *bid, size_t len)
{
	size_t i;

	for (i = 0; i < d->nr; i++)
		if (d->ents[i]->kind == kind && d->ents[i]->bid_len == len &&
		    !memcmp(d->ents[i]->bid, bid, len))
			return d->ents[i];
	return NULL;
}

static struct dbgd_ent *add(struct ust_res_dbgd *d, enum ust_res_dbgd_kind kind,
			    const uint8_t *bid, size_t len)
{
	struct dbgd_ent *e, **v;

	if (d->nr == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;

		v = realloc(d->ents, cap * sizeof(*v));
		if (!v)
			return NULL;
		d->ents = v;
		d->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	d->ents[d->nr++] = e;
	e->kind = kind;
	memcpy(e->bid, bid, len);
	e->bid_len = len;
	return e;
}

static const char *kind_name(enum ust_res_dbgd_kind kind)
{
	return kind == UST_RES_DBGD_EXECUTABLE ? "executable" : "debuginfo";
}

/* Ask the servers; fills @e. */
static void ask(struct ust_res_dbgd *d, struct dbgd_ent *e)
{
#ifdef UST_HAVE_DEBUGINFOD
	const struct dbgd_lib *lib = dbgd_lib(NULL, 0);
	char want[2 * BID_MAX + 1], got_hex[2 * BID_MAX + 1];
	uint8_t got[BID_MAX];
	char *path = NULL;
	size_t got_len;
	int fd;

	fd = e->kind == UST_RES_DBGD_EXECUTABLE ?
		lib->find_executable(d->client, e->bid, (int)e->bid_len, &path) :
		lib->find_debuginfo(d->client, e->bid, (int)e->bid_len, &path);
	if (fd < 0) {
		free(path);
		/* -ENOSYS: DEBUGINFOD_URLS is empty; -ENOENT: not on any server. */
		e->rc = fd == -ENOSYS ? -ENOENT : fd;
		if (fd != -ENOENT && fd != -ENOSYS) {
			d->down = fd;
			hex(e->bid, e->bid_len, want, sizeof(want));
			snprintf(d->down_what, sizeof(d->down_what), "%s of build-id %s",
				 kind_name(e->kind), want);
		}
		return;
	}
	close(fd);
	/* The server's word is not enough: the file must be the one asked for. */
	got_len = path ? ust_sym_read_build_id(path, got, sizeof(got)) : 0;
	if (!path || got_len != e->bid_len || memcmp(got, e->bid, got_len)) {
		hex(e->bid, e->bid_len, want, sizeof(want));
		hex(got, got_len, got_hex, sizeof(got_hex));
		snprintf(e->note, sizeof(e->note), "debuginfod: %s for build-id %.40s has %s%.40s: refused",
			 e->kind == UST_RES_DBGD_EXECUTABLE ? "file" : "debug file", want,
			 got_len ? "build-id " : "no build-id", got_hex);
		free(path);
		e->rc = -EINVAL;
		d->refused++;
		return;
	}
	e->path = path;
	e->rc = 0;
	d->fetched++;
#else
	(void)d;
	e->rc = -ENOENT;
#endif
}

int ust_res_dbgd_find(struct ust_res_dbgd *d, enum ust_res_dbgd_kind kind, const uint8_t *bid,
		      size_t bid_len, char *path, size_t pathsz)
{
	struct dbgd_ent *e;

	if (!d || !bid || bid_len < 2 || bid_len > BID_MAX)
		return -ENOENT;
	e = lookup(d, kind, bid, bid_len);
	if (!e) {
		/* A server down answers nothing more in this report. */
		if (d->down) {
			d->skipped++;
			return -ENOENT;
		}
		e = add(d, kind, bid, bid_len);
		if (!e)
			return -ENOMEM;
		ask(d, e);
	}
	if (e->rc)
		return e->rc;
	if (snprintf(path, pathsz, "%s", e->path) >= (int)pathsz)
		return -ENAMETOOLONG;
	return 0;
}

const char *ust_res_dbgd_note(const struct ust_res_dbgd *d, const uint8_t *bid, size_t bid_len)
{
	size_t i;

	for (i = 0; d && bid && i < d->nr; i++)
		if (d->ents[i]->rc == -EINVAL && d->ents[i]->bid_len == bid_len &&
		    !memcmp(d->ents[i]->bid, bid, bid_len))
			return d->ents[i]->note;
	return NULL;
}

void ust_res_dbgd_summary(const struct ust_res_dbgd *d, struct ust_sb *out)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!d || !d->down)
		return;
	ust_sb_printf(out, "ustitch: debuginfod (%.200s): %s, asking for the %s: not asked again in this report",
		      urls ? urls : "", strerror(-d->down), d->down_what);
	if (d->skipped)
		ust_sb_printf(out, " (%u more request%s not made)", d->skipped,
			      d->skipped == 1 ? "" : "s");
	ust_sb_puts(out, "\n");
}
