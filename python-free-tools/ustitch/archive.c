// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch archive [-i trace.dat] [-o DIR]: as `perf archive` does for
 * perf.data, copy every file the trace's user stacks touch, and its
 * separate debug file, into a build-id-keyed directory next to the trace
 * (trace.dat.ustitch/ by default), with a manifest of
 * (dev, inode) -> build-id -> original path.  `trace-cmd report` with the
 * plugin uses that directory automatically: a trace moved to a machine
 * without the files symbolizes as on the one it was recorded on.
 *
 * The files are found exactly as the report finds them (lib/resolve: the
 * trace's mapping records, file handles, /proc, the trace's directory, the
 * usual directories) and only when they are the traced ones: a file whose
 * build-id differs from the trace's, or that changed after the trace, is
 * not archived, and the command says so.
 *
 * -f PATH (no trace): the named files instead of a trace's, keyed by their
 * device and inode as they are now, for a trace ustitch cannot read (an
 * LTTng trace: babeltrace2's sink.ustitch.text reads such an archive with
 * -p archive=DIR); made before the files change, as a trace would be.
 *
 * --debuginfod: what the recording machine lacks (the file itself, or the
 * debug file of a stripped one) is fetched by build-id from the servers
 * of DEBUGINFOD_URLS (lib/resolve/res_debuginfod.c), checked the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/grow.h"
#include "ustitch/hmap.h"
#include "ustitch/progress.h"
#include "ustitch/report.h"
#include "ustitch/res_debuginfod.h"
#include "ustitch/resolve.h"
#include "ustitch/sb.h"
#include "ustitch/scan.h"
#include "ustitch/sym.h"
#include "archive.h"

#define PFX "ustitch archive: "
#define MAX_DEBUG_DIRS 16
#define MAX_FILES 256

struct key {
	uint32_t kdev;
	uint64_t ino;
};

struct arch {
	const char *dir;
	const char *debug_dirs[MAX_DEBUG_DIRS];
	int nr_debug_dirs;
	FILE *man;
	bool debuginfod;
	unsigned int files, debug, missing, refused, fetched;
	unsigned long long bytes;
	struct ust_progress prog;	/* over the files to archive */
};

void archive_usage(FILE *out)
{
	fputs("usage: ustitch archive [-i trace.dat] [-o DIR] [-d DEBUGDIR]... [--debuginfod]\n"
	      "       ustitch archive -o DIR -f FILE... [-d DEBUGDIR]... [--debuginfod]\n"
	      "\n"
	      "Copies every file the trace's user stacks touch (by device and inode, found\n"
	      "as trace-cmd report finds them), and its separate debug file, into DIR keyed\n"
	      "by build-id, with a manifest (dev, inode) -> build-id -> original path.\n"
	      "\n"
	      "  -i file    the trace (default: trace.dat)\n"
	      "  -f file    archive this file instead of a trace's (repeatable; needs -o):\n"
	      "             for an LTTng trace, the binaries and libraries of the traced\n"
	      "             application, read with babeltrace2 ... -c sink.ustitch.text\n"
	      "             -p 'archive=\"DIR\"'\n"
	      "  -o dir     the archive (default: the trace's path + .ustitch); the plugin\n"
	      "             uses TRACE.ustitch/ next to the trace by itself, another DIR\n"
	      "             with -O ustitch:archive=DIR\n"
	      "  -d dir     also look for debug files under DIR/.build-id/ (repeatable;\n"
	      "             /usr/lib/debug always)\n"
	      "  --debuginfod  fetch the files and debug files not found here by build-id\n"
	      "             from the servers of DEBUGINFOD_URLS\n", out);
}

/* Copy @from (an fd-path or a path) to DIR/@rel via a temporary name. */
static int copy_file(const char *from, const char *dir, const char *rel, unsigned long long *bytes,
		     char *err, size_t errsz)
{
	char dst[8192], tmp[8300], buf[1 << 16], *slash;
	struct stat st, dst_st;
	ssize_t n;
	int in, out;

	snprintf(dst, sizeof(dst), "%s/%s", dir, rel);
	/* The directories of the key: DIR/.build-id/xx/ */
	for (slash = strchr(dst + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dst, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errsz, "cannot create %s: %s", dst, strerror(errno));
			return -1;
		}
		*slash = '/';
	}
	in = open(from, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "cannot read %s: %s", from, in < 0 ? strerror(errno) : "not a regular file");
		if (in >= 0)
			close(in);
		return -1;
	}
	/* Already there, same size: keyed by content, so the same file. */
	if (lstat(dst, &dst_st) == 0 && S_ISREG(dst_st.st_mode) && dst_st.st_size == st.st_size) {
		close(in);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out < 0) {
		snprintf(err, errsz, "cannot create %s: %s", tmp, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	}
	close(in);
	if (n < 0 || close(out) != 0 || rename(tmp, dst) != 0) {
		snprintf(err, errsz, "cannot write %s: %s", dst, strerror(errno));
		unlink(tmp);
		return -1;
	}
	*bytes += (unsigned long long)st.st_size;
	return 0;
}

/* The separate debug file of @bid, if any root has one with that build-id. */
static int find_debug(const struct arch *a, const uint8_t *bid, size_t len, char *out, size_t outsz)
{
	char hex[2 * 64 + 1];
	uint8_t got[64];
	size_t i;
	int r;

	if (len < 2 || len > 64)
		return -1;
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	for (r = 0; r <= a->nr_debug_dirs; r++) {
		const char *root = r < a->nr_debug_dirs ? a->debug_dirs[r] : "/usr/lib/debug";

		snprintf(out, outsz, "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
		if (ust_sym_read_build_id(out, got, sizeof(got)) == len && !memcmp(got, bid, len))
			return 0;
	}
	return -1;
}

static void put_path(FILE *f, const char *p)
{
	for (; *p; p++) {
		if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\\')
			fputs("\\\\", f);
		else
			fputc(*p, f);
	}
	fputc('\n', f);
}

static void archive_one(struct arch *a, struct ust_res *res, uint32_t kdev, uint64_t ino)
{
	unsigned int maj = UST_ABI_KDEV_MAJOR(kdev), min = UST_ABI_KDEV_MINOR(kdev);
	char rel[512], dbg[4096], err[8500];
	struct ust_res_hit hit;
	struct stat st;
	uint8_t bid[64];
	size_t len, i;

	if (ust_res_lookup(res, kdev, ino, &hit) != 0 || !hit.path || stat(hit.path, &st) != 0) {
		a->missing++;
		ust_progress_hide(&a->prog);
		printf("  dev %u:%u ino %" PRIu64 "%s%s: %s\n", maj, min, ino,
		       hit.name ? " " : "", hit.name ? hit.name : "",
		       hit.note ? hit.note : "not found on this machine: its frames stay unnamed");
		return;
	}
	if (hit.uncertain) {
		a->refused++;
		ust_progress_hide(&a->prog);
		printf("  %s (dev %u:%u ino %" PRIu64 "): not archived: %s, and the trace has no build-id for it\n",
		       hit.name, maj, min, ino, hit.note);
		return;
	}
	len = ust_sym_read_build_id(hit.path, bid, sizeof(bid));
	ust_res_archive_name(kdev, ino, len ? bid : NULL, len, rel, sizeof(rel));
	if (copy_file(hit.path, a->dir, rel, &a->bytes, err, sizeof(err)) != 0) {
		a->refused++;
		ust_progress_hide(&a->prog);
		printf("  %s: not archived: %s\n", hit.name, err);
		return;
	}
	a->files++;
	fprintf(a->man, "%u:%u %" PRIu64 " ", maj, min, ino);
	for (i = 0; i < len; i++)
		fprintf(a->man, "%02x", bid[i]);
	fprintf(a->man, "%s %llu ", len ? "" : "-", (unsigned long long)st.st_size);
	put_path(a->man, hit.name);
	if (hit.source && !strcmp(hit.source, "debuginfod"))
		a->fetched++;
	if (len && (find_debug(a, bid, len, dbg, sizeof(dbg)) == 0 ||
		    (a->debuginfod && ust_sym_wants_debug_file(hit.path) &&
		     ust_res_debuginfod_find(res, UST_RES_DBGD_DEBUGINFO, bid, len,
							      dbg, sizeof(dbg)) == 0 &&
		     strcmp(dbg, hit.path) != 0 && ++a->fetched))) {
		strncat(rel, ".debug", sizeof(rel) - strlen(rel) - 1);
		if (copy_file(dbg, a->dir, rel, &a->bytes, err, sizeof(err)) == 0) {
			a->debug++;
		} else {
			ust_progress_hide(&a->prog);
			printf("  %s: debug file not archived: %s\n", hit.name, err);
		}
	}
}

/*
 * -f PATH: the file as it is now is the traced one (its device, inode and
 * build-id, as a mapping record would say), found by lib/resolve like any.
 */
static int archive_path(struct arch *a, struct ust_res *res, const char *path)
{
	uint8_t bid[64];
	struct stat st;
	char *abs;
	size_t len;
	int ret;

	if (stat(path, &st) != 0) {
		fprintf(stderr, PFX "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, PFX "%s: not a regular file\n", path);
		return -1;
	}
	len = ust_sym_read_build_id(path, bid, sizeof(bid));
	/* The manifest names it as a trace would: by its absolute path. */
	abs = realpath(path, NULL);
	ret = ust_res_add_mapping(res, ust_res_dev_to_kdev(st.st_dev), (uint64_t)st.st_ino,
				  abs ? abs : path, len ? bid : NULL, len);
	free(abs);
	if (ret != 0) {
		fprintf(stderr, PFX "out of memory\n");
		return -1;
	}
	archive_one(a, res, ust_res_dev_to_kdev(st.st_dev), (uint64_t)st.st_ino);
	return 0;
}

int archive_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "debuginfod", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct ust_res_opts ro = { .no_archive = true };
	const char *in = "trace.dat", *out = NULL, *files[MAX_FILES];
	int nr_files = 0, i;
	bool has_in = false;
	char defdir[4096], man[4200], mantmp[4300], err[512];
	struct ust_hmap seen;
	struct ust_scan sc;
	struct ust_res *res;
	struct arch a = { 0 };
	struct key *keys = NULL;
	size_t nr_keys = 0, cap_keys = 0, ki;
	unsigned long s;
	int c, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+i:o:d:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			has_in = true;
			break;
		case 'f':
			if (nr_files == MAX_FILES) {
				fprintf(stderr, PFX "at most %d -f files\n", MAX_FILES);
				return 2;
			}
			files[nr_files++] = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'd':
			if (a.nr_debug_dirs == MAX_DEBUG_DIRS) {
				fprintf(stderr, PFX "at most %d -d directories\n", MAX_DEBUG_DIRS);
				return 2;
			}
			a.debug_dirs[a.nr_debug_dirs++] = optarg;
			break;
		case 'D':
			a.debuginfod = true;
			break;
		case 'h':
			archive_usage(stdout);
			return 0;
		default:
			archive_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PFX "unexpected argument '%s'\n", argv[optind]);
		archive_usage(stderr);
		return 2;
	}
	if (nr_files && (has_in || !out)) {
		fprintf(stderr, PFX "-f names the files instead of a trace: %s\n",
			has_in ? "not with -i" : "say where with -o DIR");
		return 2;
	}
	memset(&sc, 0, sizeof(sc));
	if (!nr_files && !ust_scan_is_tracedat(in)) {
		fprintf(stderr, PFX "%s: %s\n", in, access(in, F_OK) ? strerror(errno) : "not a trace.dat file");
		return 1;
	}
	if (!out) {
		snprintf(defdir, sizeof(defdir), "%s.ustitch", in);
		out = defdir;
	}
	if (!nr_files && ust_scan_file(&sc, in, UST_SCAN_PROGRESS, err, sizeof(err)) != 0) {
		fprintf(stderr, PFX "%s\n", err);
		return 1;
	}
	res = ust_res_new(&ro);
	if (!res) {
		fprintf(stderr, PFX "out of memory\n");
		goto out_scan;
	}
	if (a.debuginfod) {
		if (!ust_res_debuginfod_wanted())
			fprintf(stderr, PFX "--debuginfod: DEBUGINFOD_URLS is not set: no server to ask\n");
		if (ust_res_set_debuginfod(res, true, err, sizeof(err)) != 0) {
			fprintf(stderr, PFX "%s\n", err);
			ret = 2;
			goto out_res;
		}
	}
	if (!nr_files)
		ust_report_setup(res, &sc, NULL, NULL, NULL, 0);
	if (mkdir(out, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, PFX "cannot create %s: %s\n", out, strerror(errno));
		goto out_res;
	}
	a.dir = out;
	snprintf(man, sizeof(man), "%s/manifest", out);
	snprintf(mantmp, sizeof(mantmp), "%s/manifest.tmp", out);
	a.man = fopen(mantmp, "we");
	if (!a.man) {
		fprintf(stderr, PFX "cannot write %s: %s\n", mantmp, strerror(errno));
		goto out_res;
	}
	fprintf(a.man, "# ustitch archive 1 of %s\n# dev inode build-id size path\n",
		nr_files ? "files named with -f" : in);
	for (i = 0; i < nr_files; i++)
		if (archive_path(&a, res, files[i]) != 0) {
			fclose(a.man);
			unlink(mantmp);
			goto out_res;
		}
	/* The files first, then each archived with the progress line over them. */
	ust_hmap_init(&seen);
	for (s = 0; s < sc.st.nr_stacks; s++) {
		const struct ust_stitch_stack *st = &sc.st.stacks[s];
		unsigned int f;

		if (!st->has_files || st->bad)
			continue;
		for (f = 0; f < st->nr; f++) {
			const struct ust_dec_frame *fr = &st->frames[f];
			uint64_t k = ust_hmap_mix(fr->ino ^ ust_hmap_mix((uint64_t)fr->kdev + 1)), v;
			struct key *nk;

			if (!fr->ino)
				continue;
			/* Keyed by a hash of the pair; a collision is checked below. */
			if (ust_hmap_get(&seen, k, &v) && v == fr->ino)
				continue;
			ust_hmap_put(&seen, k, fr->ino);
			nk = ust_grow(keys, &cap_keys, nr_keys + 1, sizeof(*keys), 16);
			if (!nk) {
				fprintf(stderr, PFX "out of memory\n");
				ust_hmap_fini(&seen);
				fclose(a.man);
				unlink(mantmp);
				goto out_res;
			}
			keys = nk;
			keys[nr_keys++] = (struct key){ fr->kdev, fr->ino };
		}
	}
	ust_progress_start(&a.prog, "ustitch archive: copying the files", nr_keys, 0.5);
	for (ki = 0; ki < nr_keys; ki++) {
		ust_progress_update(&a.prog, ki);
		archive_one(&a, res, keys[ki].kdev, keys[ki].ino);
	}
	ust_progress_end(&a.prog);
	ust_hmap_fini(&seen);
	if (fclose(a.man) != 0 || rename(mantmp, man) != 0) {
		fprintf(stderr, PFX "cannot write %s: %s\n", man, strerror(errno));
		goto out_res;
	}
	printf("%u file%s and %u debug file%s (%.1f MiB) archived in %s",
	       a.files, a.files == 1 ? "" : "s", a.debug, a.debug == 1 ? "" : "s",
	       (double)a.bytes / (1024.0 * 1024.0), out);
	if (a.fetched)
		printf("; %u fetched from debuginfod", a.fetched);
	if (a.missing || a.refused)
		printf("; %u not found, %u not archived (above)", a.missing, a.refused);
	if (nr_files)
		printf("\n\nNow copy it along with the trace, and read the trace with:\n\n"
		       "$ babeltrace2 TRACE -c sink.ustitch.text -p 'archive=\"%s\"'\n", out);
	else
		printf("\n\nNow copy it along with the trace:\n\n$ tar cf %s.tar %s %s\n\n"
		       "wherever you need to run 'trace-cmd report' on it. Next to the trace it is\n"
		       "used by itself; elsewhere, say where: -O ustitch:archive=DIR.\n", in, in, out);
	ret = 0;
	{
		struct ust_sb sb;

		/* A server that stopped answering: said once. */
		ust_sb_init(&sb);
		ust_res_debuginfod_summary(res, &sb);
		fputs(ust_sb_str(&sb), stderr);
		ust_sb_fini(&sb);
	}
out_res:
	free(keys);
	ust_res_free(res);
out_scan:
	ust_scan_fini(&sc);
	return ret;
}
