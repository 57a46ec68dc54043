// SPDX-License-Identifier: LGPL-2.1
/*
 * sym-throughput: ust_sym against addr2line, eu-addr2line and
 * llvm-symbolizer on one large library, same addresses for all.
 *
 *   bench_sym [LIBRARY [N]]   (default libLLVM-14, else libc; N = 10000)
 *
 * The addresses are N points spread over the library's function symbols
 * by a fixed PRNG, so every run measures the same work.  N is kept at
 * 10000 by default because eu-addr2line needs about 3 ms per address on
 * libLLVM: the whole run then stays well under a minute.  ust_sym gets
 * file offsets (what the kernel records), the tools the matching virtual
 * addresses on stdin.  Each measurement is wall time of a whole run,
 * loading included: a fresh cache for ust_sym, one process per tool.
 * Tools are found through $UST_ADDR2LINE, $UST_EU_ADDR2LINE and
 * $UST_LLVM_SYMBOLIZER (meson sets them).  Function names are compared
 * as plain (mangled) strings; "alias" agreement also accepts another
 * name of the same function, as ust_sym_find_function knows it.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ustitch/sym.h"

extern char **environ;

struct pt {
	uint64_t vaddr, off;
	const char *ust_func;	/* ust_sym's answer (functions only) */
	uint64_t ust_start;	/* file offset of that function */
};

struct fsym {
	uint64_t addr, size;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* The sized function symbols and PT_LOAD images, read here with libelf. */
static int read_elf(const char *path, struct fsym **syms, size_t *nr, GElf_Phdr **ph,
		    size_t *nph, bool *has_dwarf)
{
	Elf_Scn *scn = NULL, *table = NULL;
	GElf_Shdr sh, tsh;
	size_t shstr, i, n;
	Elf_Data *d;
	int fd;
	Elf *e;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_getshdrstrndx(e, &shstr) || elf_getphdrnum(e, nph))
		return -1;
	*has_dwarf = false;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstr, sh.sh_name);
		if (name && !strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS)
			*has_dwarf = true;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !table)) {
			table = scn;
			tsh = sh;
		}
	}
	if (!table || !(d = elf_getdata(table, NULL)))
		return -1;
	n = tsh.sh_size / tsh.sh_entsize;
	*syms = malloc(n * sizeof(**syms));
	*nr = 0;
	for (i = 0; i < n; i++) {
		GElf_Sym s;

		if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
		    s.st_shndx != SHN_UNDEF && s.st_size)
			(*syms)[(*nr)++] = (struct fsym){ s.st_value, s.st_size };
	}
	*ph = malloc(*nph * sizeof(**ph));
	for (i = 0; i < *nph; i++)
		gelf_getphdr(e, (int)i, &(*ph)[i]);
	elf_end(e);
	close(fd);
	return 0;
}

static int vaddr_to_off(const GElf_Phdr *ph, size_t nph, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < nph; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr < ph[i].p_vaddr + ph[i].p_filesz) {
			*off = vaddr - ph[i].p_vaddr + ph[i].p_offset;
			return 0;
		}
	return -1;
}

/* One ust_sym run over all points; its wall time. */
static double run_ust(const char *lib, struct pt *pts, size_t n, bool lines, size_t *named,
		      struct ust_sym_cache **keep, double *t_load)
{
	struct ust_sym_cache *c;
	struct ust_sym_frame fr[16];
	struct ust_sym_file *f;
	char err[256];
	double t0 = now();

	c = ust_sym_cache_new(NULL);
	f = ust_sym_cache_get(c, lib, NULL, 0, err, sizeof(err));
	if (!f) {
		fprintf(stderr, "%s: %s\n", lib, err);
		exit(1);
	}
	*t_load = now() - t0;
	*named = 0;
	for (size_t i = 0; i < n; i++) {
		int k = ust_sym_lookup(f, pts[i].off, false, lines, fr, 16);

		if (k < 1)
			continue;
		if (fr[k - 1].func)
			(*named)++;
		if (keep) {
			pts[i].ust_func = fr[k - 1].func;
			pts[i].ust_start = pts[i].off - fr[k - 1].func_off;
		}
	}
	t0 = now() - t0;
	if (keep)
		*keep = c;	/* the names stay valid for the comparisons */
	else
		ust_sym_cache_free(c);
	return t0;
}

/* Runs argv with stdin from @in and stdout to @out; wall time, < 0 on error. */
static double run_tool(char *const argv[], const char *in, const char *out)
{
	posix_spawn_file_actions_t fa;
	double t0 = now();
	int status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	/* eu-addr2line exits 1 when some address had no line: still a run. */
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return -1;
	return now() - t0;
}

/*
 * The outermost function of each address from a tool's output.  @style
 * 'a': addr2line/eu-addr2line -a -i -f (a "0x..." line opens each
 * address, then name/location pairs); 'l': llvm-symbolizer (blocks of
 * name/location pairs separated by blank lines).
 */
static char **parse(const char *out, size_t n, char style)
{
	char **names = calloc(n, sizeof(*names)), line[8192];
	FILE *fp = fopen(out, "r");
	long idx = -1;
	bool expect_name = false, block_open = false;

	if (!fp)
		return names;
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		if (style == 'a' && strncmp(line, "0x", 2) == 0) {
			idx++;
			expect_name = true;
			continue;
		}
		if (style == 'l') {
			if (!line[0]) {
				block_open = false;
				continue;
			}
			if (!block_open) {
				block_open = true;
				idx++;
				expect_name = true;
			}
		}
		if (idx < 0 || (size_t)idx >= n)
			continue;
		if (expect_name) {
			/* eu-addr2line: "inner inlined at F:L in outer" without -i */
			char *cut = strstr(line, " inlined at ");

			if (cut)
				*cut = '\0';
			free(names[idx]);
			names[idx] = strcmp(line, "??") ? strdup(line) : NULL;
		}
		expect_name = !expect_name;
	}
	fclose(fp);
	return names;
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : NULL;
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 0) : 10000, nsyms, nph, named, i;
	char dir[] = "/tmp/ust-bench-XXXXXX", in[64], out[64], objarg[4200];
	struct ust_sym_cache *keep = NULL;
	struct ust_sym_file *f;
	double t_fn, t_ln = -1, t_load, rate_fn, rate_ln = 0;
	struct fsym *syms;
	GElf_Phdr *ph;
	bool dwarf;
	uint64_t seed = 0x5eed;
	struct pt *pts;
	FILE *fp;
	char err[256];

	if (!lib)
		lib = access("/usr/lib/llvm-14/lib/libLLVM-14.so.1", R_OK) == 0 ?
		      "/usr/lib/llvm-14/lib/libLLVM-14.so.1" : "/lib/x86_64-linux-gnu/libc.so.6";
	if (read_elf(lib, &syms, &nsyms, &ph, &nph, &dwarf) || !nsyms) {
		fprintf(stderr, "%s: no function symbols\n", lib);
		return 1;
	}
	pts = calloc(n, sizeof(*pts));
	for (i = 0; i < n; i++) {
		const struct fsym *s = &syms[rnd(&seed) % nsyms];

		pts[i].vaddr = s->addr + rnd(&seed) % s->size;
		if (vaddr_to_off(ph, nph, pts[i].vaddr, &pts[i].off)) {
			i--;	/* a symbol outside the file image: pick again */
			continue;
		}
	}
	printf("library: %s (%zu function symbols)\naddresses: %zu\n", lib, nsyms, n);

	t_fn = run_ust(lib, pts, n, false, &named, &keep, &t_load);
	rate_fn = (double)n / t_fn;
	printf("%-28s %10.0f addr/s  (%.3f s: load %.3f s; %zu named)\n",
	       "ustitch (functions)", rate_fn, t_fn, t_load, named);
	/* Lines when there is DWARF, in the file or in a separate debug file. */
	{
		struct ust_sym_cache *c = ust_sym_cache_new(NULL);
		struct ust_sym_frame fr[16];

		f = ust_sym_cache_get(c, lib, NULL, 0, err, sizeof(err));
		for (i = 0; f && i < n && i < 64; i++)
			if (ust_sym_lookup(f, pts[i].off, false, true, fr, 16) >= 1 &&
			    fr[0].src_file)
				dwarf = true;
		ust_sym_cache_free(c);
	}
	if (dwarf) {
		t_ln = run_ust(lib, pts, n, true, &named, NULL, &t_load);
		rate_ln = (double)n / t_ln;
		printf("%-28s %10.0f addr/s  (%.3f s: load %.3f s)\n", "ustitch (lines+inlines)",
		       rate_ln, t_ln, t_load);
	} else {
		printf("%-28s skipped: no DWARF for %s\n", "ustitch (lines+inlines)", lib);
	}

	if (!mkdtemp(dir))
		return 1;
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	fp = fopen(in, "w");
	for (i = 0; i < n; i++)
		fprintf(fp, "0x%" PRIx64 "\n", pts[i].vaddr);
	fclose(fp);
	snprintf(objarg, sizeof(objarg), "--obj=%s", lib);

	struct {
		const char *label, *env;
		char style;
		char *argv[8];
	} tools[] = {
		{ "addr2line", "UST_ADDR2LINE", 'a',
		  { NULL, "-a", "-i", "-f", "-e", (char *)lib, NULL } },
		{ "eu-addr2line", "UST_EU_ADDR2LINE", 'a',
		  { NULL, "-a", "-i", "-f", "-e", (char *)lib, NULL } },
		{ "llvm-symbolizer-14", "UST_LLVM_SYMBOLIZER", 'l',
		  { NULL, objarg, "--no-demangle", NULL } },
	};
	for (size_t t = 0; t < sizeof(tools) / sizeof(tools[0]); t++) {
		const char *exe = getenv(tools[t].env);
		size_t agree = 0, alias = 0;
		double secs, rate;
		char **names;

		if (!exe || !*exe || access(exe, X_OK) != 0) {
			printf("%-28s skipped: %s not found\n", tools[t].label, tools[t].label);
			continue;
		}
		tools[t].argv[0] = (char *)exe;
		secs = run_tool(tools[t].argv, in, out);
		if (secs < 0) {
			printf("%-28s skipped: %s failed\n", tools[t].label, tools[t].label);
			continue;
		}
		rate = (double)n / secs;
		names = parse(out, n, tools[t].style);
		f = ust_sym_cache_get(keep, lib, NULL, 0, err, sizeof(err));
		for (i = 0; i < n; i++) {
			uint64_t off;

			if (!names[i] || !pts[i].ust_func) {
				agree += !names[i] && !pts[i].ust_func;
				alias += !names[i] && !pts[i].ust_func;
			} else if (!strcmp(names[i], pts[i].ust_func)) {
				agree++;
				alias++;
			} else if (!ust_sym_find_function(f, names[i], &off, NULL) &&
				   off == pts[i].ust_start) {
				alias++;
			}
			free(names[i]);
		}
		free(names);
		printf("%-28s %10.0f addr/s  (%.3f s)  ustitch/tool: functions %.1fx",
		       tools[t].label, rate, secs, rate_fn / rate);
		if (dwarf)
			printf(", lines %.1fx", rate_ln / rate);
		printf("  names agree: %.2f%% (aliases: %.2f%%)\n", 100.0 * (double)agree / (double)n,
		       100.0 * (double)alias / (double)n);
	}
	unlink(in);
	unlink(out);
	rmdir(dir);
	ust_sym_cache_free(keep);
	free(pts);
	free(syms);
	free(ph);
	return 0;
}
