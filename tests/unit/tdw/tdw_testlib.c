// SPDX-License-Identifier: LGPL-2.1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "tdw_testlib.h"

struct tt_env tt;

int tt_init(int argc, char **argv, bool need_mktrace)
{
	const char *tmp = getenv("TMPDIR");

	if (argc < 2 || !argv[1][0] || access(argv[1], X_OK) != 0) {
		fprintf(stderr, "trace-cmd not available: skipped\n");
		return 77;
	}
	tt.trace_cmd = argv[1];
	if (need_mktrace) {
		if (argc < 3 || access(argv[2], X_OK) != 0) {
			fprintf(stderr, "ust-mktrace not available: skipped\n");
			return 77;
		}
		tt.mktrace = argv[2];
	}
	snprintf(tt.dir, sizeof(tt.dir), "%s/ust-tdw-test.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(tt.dir)) {
		perror("mkdtemp");
		return 1;
	}
	return 0;
}

void tt_fini(void)
{
	struct dirent *de;
	DIR *d;

	if (!tt.dir[0] || getenv("UST_TEST_KEEP"))
		return;
	d = opendir(tt.dir);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlink(tt_path(de->d_name));
	if (d)
		closedir(d);
	rmdir(tt.dir);
}

const char *tt_path(const char *name)
{
	static char bufs[4][512];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", tt.dir, name);
	return b;
}

void tt_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	struct stat st;
	char *s;
	FILE *f = fopen(path, "r");

	if (!f)
		return strdup("");
	fstat(fileno(f), &st);
	s = calloc(1, st.st_size + 1);
	if (s && st.st_size && fread(s, 1, st.st_size, f) != (size_t)st.st_size)
		s[0] = '\0';
	fclose(f);
	return s;
}

int tt_run(const char *const *argv, const char *in, char **out, char **err)
{
	char inp[512], outp[512], errp[512];
	int status, fd;
	pid_t pid;

	snprintf(inp, sizeof(inp), "%s/.stdin", tt.dir);
	snprintf(outp, sizeof(outp), "%s/.stdout", tt.dir);
	snprintf(errp, sizeof(errp), "%s/.stderr", tt.dir);
	tt_write_file(inp, in ? in : "");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(inp, O_RDONLY);
		dup2(fd, 0);
		fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	if (out)
		*out = slurp(outp);
	if (err)
		*err = slurp(errp);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *tt_report(const char *file, const char *opt)
{
	const char *argv[] = { tt.trace_cmd, "report", "-N", opt ? opt : file,
			       opt ? file : NULL, NULL };
	char *out, *err;
	int ret = tt_run(argv, NULL, &out, &err);

	if (ret != 0) {
		fprintf(stderr, "trace-cmd report %s: exit %d\n%s", file, ret, err);
		free(out);
		out = NULL;
	}
	free(err);
	return out;
}

bool tt_dump_valid(const char *file)
{
	const char *argv[] = { tt.trace_cmd, "dump", "-v", "-i", file, NULL };
	char *out, *err;
	bool ok;
	int ret = tt_run(argv, NULL, &out, &err);

	ok = ret == 0 && strstr(out, "is a valid trace-cmd file");
	if (!ok)
		fprintf(stderr, "trace-cmd dump -v %s: exit %d\n%s%s", file, ret, out, err);
	free(out);
	free(err);
	return ok;
}

char *tt_convert_v7_report(const char *file)
{
	char v7[600];
	const char *argv[] = { tt.trace_cmd, "convert", "--file-version", "7", "-i", file,
			       "-o", v7, NULL };
	char *out, *err;
	int ret;

	snprintf(v7, sizeof(v7), "%s.v7", file);
	ret = tt_run(argv, NULL, &out, &err);
	if (ret != 0)
		fprintf(stderr, "trace-cmd convert %s: exit %d\n%s", file, ret, err);
	free(out);
	free(err);
	if (ret != 0)
		return NULL;
	out = tt_report(v7, NULL);
	unlink(v7);
	return out;
}

static int read_handle(struct tracecmd_input *h, const char *name, int nr_cpus,
		       struct tt_rec **v, int *n)
{
	struct tep_record *r;
	struct tt_rec *nv;
	int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		for (r = tracecmd_read_cpu_first(h, cpu); r; r = tracecmd_read_data(h, cpu)) {
			nv = realloc(*v, (*n + 1) * sizeof(**v));
			if (!nv)
				abort();
			*v = nv;
			nv = &(*v)[(*n)++];
			memset(nv, 0, sizeof(*nv));
			snprintf(nv->buf, sizeof(nv->buf), "%s", name);
			nv->cpu = cpu;
			nv->ts = r->ts;
			nv->size = r->size;
			nv->missed = r->missed_events;
			nv->offset = r->offset;
			nv->data = malloc(r->size ? r->size : 1);
			memcpy(nv->data, r->data, r->size);
			tracecmd_free_record(r);
		}
	}
	return 0;
}

int tt_read_records(const char *file, int nr_cpus, struct tt_rec **out)
{
	struct tracecmd_input *h, *ih;
	struct tt_rec *v = NULL;
	int n = 0, i;

	h = tracecmd_open(file, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!h)
		return -1;
	read_handle(h, "", nr_cpus, &v, &n);
	for (i = 0; i < tracecmd_buffer_instances(h); i++) {
		ih = tracecmd_buffer_instance_handle(h, i);
		if (!ih)
			continue;
		read_handle(ih, tracecmd_buffer_instance_name(h, i), nr_cpus, &v, &n);
		tracecmd_close(ih);
	}
	tracecmd_close(h);
	*out = v;
	return n;
}

void tt_free_records(struct tt_rec *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(r[i].data);
	free(r);
}

int tt_read_page(const char *file, uint64_t off, unsigned char *page)
{
	int fd = open(file, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, page, 4096, (off_t)(off & ~4095ULL));
	close(fd);
	return n == 4096 ? 0 : -1;
}

uint16_t tt_u16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

uint32_t tt_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

uint64_t tt_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}
