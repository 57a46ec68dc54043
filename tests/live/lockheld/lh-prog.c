// SPDX-License-Identifier: LGPL-2.1
/*
 * The lock_held() live tests' workload: phases whose lock state is known,
 * each ended by a getppid() marker (recorded through ftrace, so the test
 * can tell the phases apart by time):
 *
 *   1 A  touch fresh anonymous pages: faults under the VMA lock, no
 *        mmap_lock (the region's first fault, which may take mmap_lock to
 *        set up the anon_vma, happens before marker 1)
 *   2 B  madvise(MADV_POPULATE_WRITE): the same page allocations under
 *        mmap_read_lock()
 *   3 C  mmap() + munmap(): mmap_write_lock()
 *   4 D  signals: kill() to itself (signal_generate under rcu_read_lock(),
 *        in kill_pid_info()), and SIGSEGV from a write to a PROT_NONE page
 *        (raised by the page fault handler, outside any RCU read section)
 *   5    end; with "track", more phases for held-lock tracking:
 *   5 E  pipe write()s: pipe_write() allocates each buffer page under
 *        pipe->mutex (a mutex), and no rw_semaphore
 *   6 F  write()s to a file with an inotify watch: fsnotify() delivers
 *        inside srcu_read_lock(&fsnotify_mark_srcu), and inotify
 *        allocates each event there (inotify_handle_inode_event)
 *   7 G  page-sized pwrite()s to a new file in /tmp: each page of a tmpfs
 *        file is allocated inside shmem_file_write_iter(), under the
 *        inode's i_rwsem (an rw_semaphore in a shmem_inode_cache object)
 *   8    end
 *
 * usage: lh-prog [pages [track]]
 */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define ROUNDS 8

static sigjmp_buf jb;
static volatile sig_atomic_t usr1;

static void marker(void)
{
	syscall(SYS_getppid);
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

/* Phases E and F; the buffers are touched and the files set up first. */
static int track_phases(void)
{
	static char buf[4 * 4096], ev[4096];
	char path[] = "/tmp/lh-prog.XXXXXX", gpath[] = "/tmp/lh-prog-g.XXXXXX";
	int p[2], fd, in, g, i;

	memset(buf, 1, sizeof(buf));
	memset(ev, 0, sizeof(ev));
	fd = mkstemp(path);
	if (fd < 0 || pipe(p))
		return 5;
	in = inotify_init1(IN_NONBLOCK);
	if (in < 0 || inotify_add_watch(in, path, IN_MODIFY) < 0)
		return 6;
	unlink(path);	/* the watch keeps the inode */
	g = mkstemp(gpath);
	if (g < 0)
		return 9;
	unlink(gpath);
	marker();		/* 5: phase E, after the setup's own allocations */
	for (i = 0; i < ROUNDS; i++) {	/* pipe capacity: 16 pages */
		if (write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
		    read(p[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 7;
	}
	marker();		/* 6: phase F */
	for (i = 0; i < ROUNDS; i++) {
		if (write(fd, buf, 1) != 1 || read(in, ev, sizeof(ev)) <= 0)
			return 8;
	}
	marker();		/* 7: phase G */
	for (i = 0; i < ROUNDS; i++) {
		if (pwrite(g, buf, 4096, (off_t)i * 4096) != 4096)
			return 9;
	}
	marker();		/* 8: end */
	return 0;
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 64, pg = sysconf(_SC_PAGESIZE), i;
	size_t len = (size_t)(pages + 1) * (size_t)pg;
	struct sigaction sa;
	char *a, *b, *guard;

	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || guard == MAP_FAILED)
		return 1;
	madvise(a, len, MADV_NOHUGEPAGE);
	madvise(b, len, MADV_NOHUGEPAGE);
	a[0] = 1;		/* the anon_vma: set up outside phase A */
	b[0] = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	marker();		/* 1: phase A */
	for (i = 1; i <= pages; i++)
		a[i * pg] = 1;
	marker();		/* 2: phase B */
	if (madvise(b + pg, (size_t)(pages * pg), MADV_POPULATE_WRITE))
		return 2;
	marker();		/* 3: phase C */
	for (i = 0; i < ROUNDS; i++) {
		void *p = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 3;
		munmap(p, (size_t)pg);
	}
	marker();		/* 4: phase D */
	for (i = 0; i < ROUNDS; i++) {
		kill(getpid(), SIGUSR1);
		if (!sigsetjmp(jb, 1))
			*(volatile char *)guard = 1;
	}
	if (usr1 != ROUNDS)
		return 4;
	if (argc > 2 && !strcmp(argv[2], "track"))
		return track_phases();
	marker();		/* 5: end */
	return 0;
}
