// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch record --compression ALGO, as trace-cmd record's: a trace.dat of
 * file version 7 whose sections and per-CPU data are compressed.
 *
 * ustitch writes version 6 (lib/tdw); libtracecmd, which has the version 7
 * writer and its compression plugins, exports no API for it, so the file is
 * converted by `trace-cmd convert` once the recording is complete, into a
 * temporary file next to it that then replaces it.  Every reader of the
 * result (trace-cmd report and our plugin, ustitch archive) goes through
 * libtracecmd, which reads either version.  The algorithm is checked
 * against `trace-cmd list -c` before anything is recorded.
 *
 * Without the option the file is compressed as by `--compression any`
 * (the best algorithm trace-cmd has), when trace-cmd is there to do it:
 * the records of a recording of stacks repeat, and zstd takes 6 to 16
 * times off them (bench/README.md, dwarf).  `--compression none` keeps
 * version 6, which older readers take.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec_compress.h"

#define PFX "ustitch record: "

extern char **environ;

/*
 * Run trace-cmd with @argv (argv[0] "trace-cmd"), its stdout to @out_fd
 * and its stderr to @err_fd (-1: ours).
 */
static int run(char *const argv[], int out_fd, int err_fd, int *status)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int ret;

	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	ret = posix_spawnp(&pid, "trace-cmd", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return -ret;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* An unlinked temporary file, or -1. */
static int tmpfd(void)
{
	char tmpl[] = "/tmp/ustitch-compress-XXXXXX";
	int fd = mkstemp(tmpl);

	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

/* What trace-cmd said in @fd, on our stderr, its lines prefixed. */
static void show(int fd)
{
	char line[512];
	FILE *f;

	if (fd < 0 || lseek(fd, 0, SEEK_SET) || !(f = fdopen(dup(fd), "r")))
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, PFX "trace-cmd convert: %s", line);
	fclose(f);
}

int rec_compress_check(const char *name, bool by_default)
{
	char *argv[] = { "trace-cmd", "list", "-c", NULL };
	bool found = false;
	int fd, status, ret;
	char line[256];
	FILE *f;

	if (!strcmp(name, "none"))
		return 0;
	fd = tmpfd();
	if (fd < 0) {
		fprintf(stderr, PFX "--compression: %s\n", strerror(errno));
		return 2;
	}
	ret = run(argv, fd, -1, &status);
	if (ret && by_default) {
		close(fd);
		return 1;
	}
	if (ret) {
		fprintf(stderr, PFX "--compression %s: trace-cmd, which writes compressed trace.dat files, cannot be run: %s\n",
			name, strerror(-ret));
		close(fd);
		return 2;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 2;
	}
	rewind(f);
	/* "Supported compression algorithms:", then "\tzstd, 1.5.4" lines. */
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");
		size_t n = strcspn(p, ", \n");

		if (n && p != line && (!strcmp(name, "any") || (strlen(name) == n && !strncmp(p, name, n))))
			found = true;
	}
	fclose(f);
	if (!found && by_default)
		return 1;
	if (!found) {
		fprintf(stderr, PFX "--compression %s: not an algorithm this trace-cmd has (trace-cmd list -c)%s\n",
			name, strcmp(name, "any") ? "" : ": it has none");
		return 2;
	}
	return 0;
}

int rec_compress(const char *path, const char *name, bool quiet, FILE *out)
{
	size_t len = strlen(path) + 32;
	char *tmp = malloc(len);
	struct stat before, after;
	int status = 0, ret;

	if (!strcmp(name, "none"))
		return 0;
	if (!tmp || stat(path, &before)) {
		free(tmp);
		fprintf(stderr, PFX "--compression: %s: %s\n", path, strerror(errno ? errno : ENOMEM));
		return 1;
	}
	if (!S_ISREG(before.st_mode)) {
		free(tmp);
		fprintf(stderr, PFX "--compression %s: %s is not a regular file; left as written\n", name, path);
		return 1;
	}
	snprintf(tmp, len, "%s.ustitch-%d", path, (int)getpid());
	{
		char *argv[] = { "trace-cmd", "convert", "--file-version", "7", "--compression",
				 (char *)name, "-i", (char *)path, "-o", tmp, NULL };
		/* convert reports each CPU's data: shown only if it fails. */
		int msgs = tmpfd();

		ret = run(argv, msgs, msgs, &status);
		if (ret || !WIFEXITED(status) || WEXITSTATUS(status) || stat(tmp, &after)) {
			show(msgs);
			if (msgs >= 0)
				close(msgs);
			unlink(tmp);
			fprintf(stderr, PFX "--compression %s: trace-cmd convert failed%s%s; %s is left uncompressed\n",
				name, ret ? ": " : "", ret ? strerror(-ret) : "", path);
			free(tmp);
			return 1;
		}
		if (msgs >= 0)
			close(msgs);
	}
	if (rename(tmp, path)) {
		fprintf(stderr, PFX "--compression: replacing %s: %s\n", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return 1;
	}
	if (!quiet) {
		/* Small files in kB: a short recording's are a few of them. */
		bool kb = before.st_size < 1000000;

		fprintf(out ? out : stderr, PFX "compressed %s (%s, trace.dat version 7): %.1f %s -> %.1f %s\n", path,
			name, (double)before.st_size / (kb ? 1e3 : 1e6), kb ? "kB" : "MB",
			(double)after.st_size / (kb ? 1e3 : 1e6), kb ? "kB" : "MB");
	}
	free(tmp);
	return 0;
}
