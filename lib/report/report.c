// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_report: the report host's input.  A wrong candidate costs time,
 * never a wrong stack: the host keeps the scan that holds the very record
 * it prints (same file offset, same cookie).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/report.h"
#include "ustitch/resolve.h"
#include "ustitch/scan.h"

int ust_report_candidates(const char *forced, char out[][UST_REPORT_PATH_MAX], int max)
{
	char buf[65536];
	ssize_t len;
	int fd, n = 0;
	char *a;

	if (forced && forced[0]) {
		snprintf(out[n++], UST_REPORT_PATH_MAX, "%s", forced);
		return n;
	}
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	a = buf + strlen(buf) + 1;	/* skip argv[0] */
	for (; a < buf + len && n < max; a += strlen(a) + 1) {
		if (!strncmp(a, "-i", 2) && a[2])
			a += 2;		/* "-iFILE" */
		if (ust_scan_is_tracedat(a))
			snprintf(out[n++], UST_REPORT_PATH_MAX, "%s", a);
	}
	if (!n && ust_scan_is_tracedat("trace.dat"))
		snprintf(out[n++], UST_REPORT_PATH_MAX, "trace.dat");
	return n;
}

void ust_report_add_mappings(struct ust_res *res, const struct ust_scan *sc)
{
	unsigned long m;

	for (m = 0; res && m < sc->nr_maps; m++)
		ust_res_add_mapping(res, sc->maps[m].kdev, sc->maps[m].ino, sc->maps[m].path,
				    sc->maps[m].build_id_len ? sc->maps[m].build_id : NULL,
				    sc->maps[m].build_id_len);
}

int ust_report_setup(struct ust_res *res, const struct ust_scan *sc, const char *trace_path,
		     const char *archive, char *err, size_t errsz)
{
	int ret = 0;

	if (err && errsz)
		err[0] = '\0';
	if (!res)
		return -EINVAL;
	if (sc)
		trace_path = sc->path;
	if (trace_path)
		ret = ust_res_set_trace(res, trace_path, archive, err, errsz);
	if (sc)
		ust_report_add_mappings(res, sc);
	return ret;
}
