// SPDX-License-Identifier: LGPL-2.1
/*
 * Unwind tables for the traced processes, and what the walk made of them.
 *
 * The BPF walk asks for a file's table the first time it meets the file,
 * and until the table is there it goes on by frame pointers (marking the
 * stack).  Loading the command's program and libraries, and what the -P
 * processes map, before tracing starts makes their first stacks complete.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/bpfu.h"
#include "ustitch/encode.h"
#include "ustitch/rec.h"
#include "rec_priv.h"

#define PFX UST_REC_PFX

const char *ust_rec_tables_cmd_path(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char *dirs, *d, *save = NULL;

	if (strchr(cmd, '/'))
		return realpath(cmd, buf) ? buf : NULL;
	dirs = strdup(path ? path : "/usr/bin:/bin");
	for (d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", d, cmd);
		if (!access(buf, X_OK)) {
			free(dirs);
			return buf;
		}
	}
	free(dirs);
	return NULL;
}

/* System-wide: what every process maps now (each file once: by dev, inode). */
static void preload_all(struct ust_bpfu *u)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			ust_bpfu_tables_pid(u, (pid_t)atoi(e->d_name));
	closedir(d);
}

void ust_rec_tables_preload(struct ust_bpfu *u, const struct ust_rec_opts *o)
{
	char path[4096];
	int i;

	if (!ust_bpfu_has_tables(u))
		return;
	if (o->cmd && ust_rec_tables_cmd_path(o->cmd[0], path, sizeof(path)))
		ust_bpfu_tables_program(u, path);
	for (i = 0; i < o->nr_pids; i++)
		ust_bpfu_tables_pid(u, o->pids[i]);
	if (ust_rec_whole_machine(o))
		preload_all(u);
	/* Built in parallel; all in the maps before the first event. */
	ust_bpfu_tables_wait(u);
}

int ust_rec_tables_flags_record(struct ust_rec_spool *spool, uint16_t flags_id, const struct ust_bpfu_rec *rec)
{
	unsigned char fb[24];
	int n;

	if (!(rec->flags & UST_BPFU_STACK_ABI_MASK) || !flags_id)
		return 0;
	n = ust_enc_stack_flags(fb, sizeof(fb), flags_id, rec->tid, rec->cookie,
				rec->flags & UST_BPFU_STACK_ABI_MASK);
	if (n <= 0) {
		errno = EINVAL;
		return -EINVAL;
	}
	return ust_rec_spool_add(spool, rec->cpu, rec->ts, fb, (size_t)n);
}

void ust_rec_tables_count(struct ust_rec_stack_counts *n, unsigned int flags)
{
	n->stacks++;
	if (flags & UST_BPFU_STACK_BOTTOM) {
		if (flags & UST_BPFU_STACK_FP)
			n->bottom_fp++;
		else
			n->bottom_cfi++;
	}
	if (flags & UST_BPFU_STACK_NO_TABLE)
		n->no_table++;
	if (flags & UST_BPFU_STACK_BAD_CFA)
		n->bad_cfa++;
	if (flags & UST_BPFU_STACK_FAULT)
		n->fault++;
	if (flags & UST_BPFU_STACK_NO_UNWIND)
		n->no_unwind++;
	if (flags & UST_BPFU_STACK_NOT_EXEC)
		n->not_exec++;
	if (flags & UST_BPFU_STACK_TRUNCATED)
		n->truncated++;
}

void ust_rec_tables_summary(struct ust_bpfu *u, const struct ust_rec_stack_counts *n, FILE *out)
{
	struct ust_bpfu_stats st;
	unsigned long other;

	if (!n->stacks || ust_bpfu_get_stats(u, &st))
		return;
	if (!ust_bpfu_has_tables(u)) {
		fprintf(out, PFX "user stacks walked by frame pointers only (%s)\n",
			strstr(ust_bpfu_notes(u), "no CFI walk") ? "this kernel refused the CFI walk" :
			"--unwind fp");
		return;
	}
	other = n->stacks - n->bottom_cfi - n->bottom_fp - n->truncated;
	fprintf(out, PFX "user stacks: %lu complete by CFI, %lu complete with frame pointers "
		"for some frames, %lu cut at %d frames, %lu ended early",
		n->bottom_cfi, n->bottom_fp, n->truncated, UST_BPFU_MAX_STACK, other);
	if (n->no_table || n->bad_cfa || n->fault || n->no_unwind || n->not_exec)
		fprintf(out, " (%lu before a table was loaded, %lu at a bad CFA, %lu at a read fault, "
			"%lu at code with neither CFI nor frame pointers, %lu at a return address in "
			"no executable mapping)",
			n->no_table, n->bad_cfa, n->fault, n->no_unwind, n->not_exec);
	fputc('\n', out);
	if (st.parks || st.later || st.park_lost || st.park_no_room)
		fprintf(out, PFX "user stacks parked at a file without its unwind table: %llu "
			"(%llu KiB of stack copied: the words a walk may use of %llu KiB, %llu parks whole; "
			"%llu copies short of the stack's end: a page not present; "
			"%llu not parked: no room in the ring), %llu completed "
			"after recording (%llu not in time; %llu needed more stack than was copied, the "
			"most any read: %llu bytes), %llu whose copy was lost\n",
			(unsigned long long)st.parks, (unsigned long long)(st.park_bytes >> 10),
			(unsigned long long)(st.park_span >> 10), (unsigned long long)st.park_whole,
			(unsigned long long)st.park_short, (unsigned long long)st.park_no_room,
			(unsigned long long)st.later, (unsigned long long)st.later_not_in_time,
			(unsigned long long)st.park_beyond_copy, (unsigned long long)st.park_used_max,
			(unsigned long long)st.park_lost);
	if (st.vma_code || st.vma_fail)
		fprintf(out, PFX "frames whose mapping lookup was refused (a sample's interrupt after "
			"the process mapped something): %llu placed by the process's code table in BPF, "
			"%llu not\n", (unsigned long long)st.vma_code, (unsigned long long)st.vma_fail);
	if (st.exit_walks || st.exit_faults)
		fprintf(out, PFX "user stacks taken at the system call's exit: %llu (%llu by task_work, "
			"as a read would have faulted or the mmap lock was busy)\n",
			(unsigned long long)st.exit_walks, (unsigned long long)st.exit_faults);
	if (st.memo_walks)
		fprintf(out, PFX "user stacks that were their task's last walk, every stack word it "
			"read unchanged: %llu\n", (unsigned long long)st.memo_walks);
	if (st.repeats_lost)
		fprintf(out, PFX "user stacks lost with their task's last one, which they repeat: %llu\n",
			(unsigned long long)st.repeats_lost);
	if (st.sample_walks || st.sample_faults)
		fprintf(out, PFX "user stacks of samples in user code, taken at the sample: %llu "
			"(%llu by task_work, as a read would have faulted or the mmap lock was busy)\n",
			(unsigned long long)st.sample_walks, (unsigned long long)st.sample_faults);
	/* ms: each table's load, summed over the worker threads that ran them side by side. */
	fprintf(out, PFX "unwind tables: %u files (%u rows of %u, %u built, %u from the cache, "
		"%.0f ms over %u threads, the longest %.0f ms; %u asked for while recording, "
		"%u when mapped executable), %u without",
		st.cfi.files, st.cfi.rows, st.cfi.cap, st.cfi.builds, st.cfi.disk_loads,
		st.cfi.load_ms, st.cfi.threads, st.cfi.longest_ms, st.cfi.asked, st.cfi.asked_mmap,
		st.cfi.files_none);
	if (st.cfi.failed || st.cfi.full)
		fprintf(out, "; %u failed, last: %s", st.cfi.failed + st.cfi.full, st.cfi.last_error);
	fputc('\n', out);
}
