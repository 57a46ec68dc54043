// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the first pass and stitching over a whole trace.dat, as the
 * plugin runs them (ust_scan_file() on a file, through libtracecmd), with
 * mutated pages.
 *
 * libtracecmd 1.3.1 itself crashes on many corrupt file headers (in
 * tracecmd_open_fd(): not our code, see tests/README.md), so the bytes mutated are
 * those of the ring-buffer pages: the templates are the e2e specs written
 * by ust-mktrace (seeds.sh, directory $UST_FUZZ_SCAN_TEMPLATES), and an
 * input is
 *   [0]   which template (modulo their number, in name order)
 *   [1..] the CPU data of every buffer: replaces the template's pages
 *         (truncated or padded with the template's own bytes to its size),
 *         except the 16-byte page headers, kept from the template
 * The file written keeps the template's headers, formats, options and
 * flyrecord tables.
 *
 * UST_FUZZ_SCAN_MKSEEDS=DIR: write one seed per template into DIR (the
 * template's own pages) and exit.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "ustitch/scan.h"
#include "ustitch/stitch.h"

#define MAX_TEMPLATES	64

struct tmpl {
	uint8_t *b;
	size_t size;
	size_t data;	/* where the CPU data starts */
};

static struct tmpl tmpls[MAX_TEMPLATES];
static int nr_tmpls;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first CPU data offset of the top buffer's flyrecord table. */
static size_t data_start(const uint8_t *b, size_t size)
{
	const uint8_t *p = memmem(b, size, "flyrecord", 10);
	uint64_t off;

	if (!p || (size_t)(p - b) + 10 + 8 > size)
		return 0;
	memcpy(&off, p + 10, 8);
	if (off <= (uint64_t)(p - b) || off >= size || off % 4096)
		return 0;
	return off;
}

static void load_templates(void)
{
	const char *dir = getenv("UST_FUZZ_SCAN_TEMPLATES");
	char *names[MAX_TEMPLATES], path[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (!dir || !(d = opendir(dir))) {
		fprintf(stderr, "fuzz_scan: set UST_FUZZ_SCAN_TEMPLATES to the templates' directory "
				"(BUILDDIR/fuzz-corpus/scan-templates)\n");
		exit(2);
	}
	while ((de = readdir(d)) && n < MAX_TEMPLATES)
		if (strstr(de->d_name, ".dat"))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (int i = 0; i < n; i++) {
		struct tmpl *t = &tmpls[nr_tmpls];
		FILE *f;
		long sz;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		free(names[i]);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		sz = ftell(f);
		rewind(f);
		t->b = malloc(sz > 0 ? (size_t)sz : 1);
		if (sz <= 0 || fread(t->b, 1, (size_t)sz, f) != (size_t)sz) {
			fclose(f);
			free(t->b);
			continue;
		}
		fclose(f);
		t->size = (size_t)sz;
		t->data = data_start(t->b, t->size);
		if (t->data)
			nr_tmpls++;
		else
			free(t->b);
	}
	if (!nr_tmpls) {
		fprintf(stderr, "fuzz_scan: no trace.dat template in %s\n", dir);
		exit(2);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *mk = getenv("UST_FUZZ_SCAN_MKSEEDS");

	(void)argc;
	(void)argv;
	load_templates();
	if (mk) {
		for (int i = 0; i < nr_tmpls; i++) {
			char path[4096];
			uint8_t idx = (uint8_t)i;
			FILE *f;

			snprintf(path, sizeof(path), "%s/t%02d", mk, i);
			f = fopen(path, "wb");
			if (!f || fwrite(&idx, 1, 1, f) != 1 ||
			    fwrite(tmpls[i].b + tmpls[i].data, 1, tmpls[i].size - tmpls[i].data, f) !=
				    tmpls[i].size - tmpls[i].data ||
			    fclose(f)) {
				perror(path);
				exit(1);
			}
		}
		exit(0);
	}
	return 0;
}

/*
 * libtracecmd 1.3.1 leaves one mapping of the file per CPU behind after
 * tracecmd_close(), even for a valid file (a plain open, read, close loop
 * shows it): the fuzzer would reach vm.max_map_count after some 30k inputs.
 * Once every handle is closed, whatever still maps the input file (this
 * one or an earlier one, deleted, at the same path) is libtracecmd's
 * leftover: unmap it.  Nothing refers to it any more (tracecmd_close()
 * frees its page_map bookkeeping without the munmap()).  What stays
 * mapped between two calls decides what lies after a new page map: a
 * read past a page's end crashed in one run and not in the next.
 */
static void unmap_leftovers(const char *path)
{
	size_t len = strlen(path);
	char line[4352];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char *p = strchr(line, '/');

		if (!p || strncmp(p, path, len) || (p[len] != '\n' && p[len] != ' '))
			continue;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			munmap((void *)lo, hi - lo);
	}
	fclose(f);
}

static uint32_t rd4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Would libtraceevent's kbuffer (1.7.1, Debian 12's) walk page @pg forever?
 * It takes a record's length as an int (a data record's stored length
 * minus 4, a padding's stored length as is) and moves to index + length
 * while that stays below the page's commit: a length that does not move
 * forward (0 <= next <= current) brings it back to a record it has seen,
 * and it never returns.  trace-cmd itself hangs on such a file, in its own
 * tracecmd_open() and without ustitch's plugin loaded; the harness leaves
 * those inputs out, as it keeps the headers libtracecmd crashes on.
 */
static bool kbuffer_loops(const uint8_t *pg, size_t avail)
{
	uint64_t commit;
	int64_t curr = 0, size, next, index, length, end = (int64_t)avail - 16;

	if (avail < 16)
		return false;
	memcpy(&commit, pg + 8, 8);
	size = (int64_t)(commit & ((1U << 27) - 1));
	if (size > end - 4)
		size = end - 4;
	pg += 16;
	while (curr < size) {
		uint32_t tl = rd4(pg + curr) & 31;

		if (tl == 29) {			/* padding */
			index = curr + 4;
			length = curr + 8 <= end ? (int32_t)rd4(pg + curr + 4) : 0;
		} else if (tl == 30) {		/* time extend */
			index = curr + 8, length = 0;
		} else if (tl == 31) {		/* time stamp */
			index = curr + 16, length = 0;
		} else if (tl == 0) {
			index = curr + 8;
			length = curr + 8 <= end ? (int32_t)(rd4(pg + curr + 4) - 4) : 0;
			length = (int32_t)(((uint32_t)length + 3) & ~3U);
		} else {
			index = curr + 4, length = tl * 4;
		}
		next = (int64_t)(uint32_t)(index + length);
		if (next <= curr)
			return true;
		curr = next;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tmpl *t;
	struct ust_scan sc;
	const char *path;
	char err[512];
	uint8_t *file;
	size_t n;

	if (size < 1)
		return 0;
	t = &tmpls[data[0] % nr_tmpls];
	file = malloc(t->size);
	if (!file)
		abort();
	memcpy(file, t->b, t->size);
	n = size - 1;
	if (n > t->size - t->data)
		n = t->size - t->data;
	memcpy(file + t->data, data + 1, n);
	/* Each page keeps its header (timestamp, commit): libtracecmd crashes
	 * in tracecmd_buffer_instance_handle() when a CPU's first page does not
	 * load.  The records inside the pages are the fuzzer's. */
	for (size_t p = t->data; p + 16 <= t->size; p += 4096)
		memcpy(file + p, t->b + p, 16);
	for (size_t p = t->data; p + 16 <= t->size; p += 4096)
		if (kbuffer_loops(file + p, t->size - p < 4096 ? t->size - p : 4096)) {
			free(file);
			return 0;
		}
	path = fuzz_tmpfile(file, t->size, "scan");
	free(file);
	if (!path)
		return 0;
	memset(&sc, 0, sizeof(sc));
	if (ust_scan_file(&sc, path, UST_SCAN_SAMPLES, err, sizeof(err)) == 0) {
		/* What the printing pass asks of the index. */
		for (unsigned long i = 0; i < sc.nr_samples; i++)
			if (sc.samples[i].has_cookie)
				(void)ust_stitch_lookup(&sc.st, sc.samples[i].cookie,
							sc.samples[i].buf);
		(void)ust_stitch_lost_after(&sc.st, 0);
		(void)ust_stitch_lost_after(&sc.st, UINT64_MAX);
	}
	ust_scan_fini(&sc);
	{
		static unsigned int calls;

		if (++calls % 64 == 0)	/* /proc/self/maps is long under ASan */
			unmap_leftovers(path);
	}
	unlink(path);
	return 0;
}
