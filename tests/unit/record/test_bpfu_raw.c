// SPDX-License-Identifier: LGPL-2.1
/*
 * Unit tests of ust_bpfu_raw (lib/record/bpfu_raw.c): frames the BPF walk
 * left as addresses (raw) get their file from /proc/TGID/maps.  The
 * process is this test itself: an address of libc's code and one of the
 * test's own must come back as (offset, inode, device) of the mapping that
 * holds them, read independently here; frames with a file stay as they
 * are; a raw return address in no executable file mapping (the stack, a
 * JIT-like anonymous page, a process gone before its maps were read) cuts
 * the stack before it, a raw frame 0 stays an address.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/abi.h"
#include "bpfu_raw.h"
#include "self_maps.h"

/* The mapping holding @addr: its offset, inode, device. */
static int truth(uint64_t addr, uint64_t *off, uint64_t *ino, uint32_t *kdev)
{
	struct self_mapping m;

	if (!self_mapping(addr, NULL, &m))
		return 0;
	*off = addr - m.start + (m.pgoff << 12);
	*ino = m.ino;
	*kdev = m.kdev;
	return 1;
}

static void test_named(void **state)
{
	struct ust_bpfu_raw *r = ust_bpfu_raw_new();
	uint64_t addr[3] = { (uint64_t)(uintptr_t)&fopen, (uint64_t)(uintptr_t)&truth, 0 };
	uint64_t offs[3], inodes[3] = { 0, 0, 77 }, want_off, want_ino;
	uint32_t devs[3] = { 0, 0, 5 }, want_dev, raw[3] = { 1, 1, 0 };
	int i;

	(void)state;
	assert_non_null(r);
	offs[0] = addr[0];
	offs[1] = addr[1];
	offs[2] = 0x1234;	/* has a file already: untouched */
	assert_int_equal(ust_bpfu_raw_resolve(r, getpid(), raw, offs, inodes, devs, 3), 3);
	for (i = 0; i < 2; i++) {
		assert_true(truth(addr[i], &want_off, &want_ino, &want_dev));
		assert_true(want_ino != 0);
		assert_true(offs[i] == want_off);
		assert_true(inodes[i] == want_ino);
		assert_int_equal(devs[i], want_dev);
	}
	assert_true(offs[2] == 0x1234 && inodes[2] == 77 && devs[2] == 5);
	assert_true(ust_bpfu_raw_count(r) == 2);
	ust_bpfu_raw_free(r);
}

static void test_no_file(void **state)
{
	struct ust_bpfu_raw *r = ust_bpfu_raw_new();
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int local;
	uint64_t offs[3] = { (uint64_t)(uintptr_t)&fopen, (uint64_t)(uintptr_t)anon,
			     (uint64_t)(uintptr_t)&local };
	uint64_t inodes[3] = { 0, 0, 0 };
	uint32_t devs[3] = { 0, 0, 0 }, raw[3] = { 1, 1, 1 };
	uint64_t o0[2] = { (uint64_t)(uintptr_t)&local, (uint64_t)(uintptr_t)&fopen };
	uint64_t i0[2] = { 0, 0 };
	uint32_t d0[2] = { 0, 0 }, r0[2] = { 1, 1 };

	(void)state;
	assert_true(anon != MAP_FAILED);
	/* Cut before the anonymous page: frame 1 and what follows are no frames. */
	assert_int_equal(ust_bpfu_raw_resolve(r, getpid(), raw, offs, inodes, devs, 3), 1);
	assert_true(inodes[0] != 0);
	assert_true(offs[1] == (uint64_t)(uintptr_t)anon && !inodes[1] && !devs[1]);
	/* Frame 0 in no file is where the task was: kept as an address. */
	assert_int_equal(ust_bpfu_raw_resolve(r, getpid(), r0, o0, i0, d0, 2), 2);
	assert_true(o0[0] == (uint64_t)(uintptr_t)&local && !i0[0] && !d0[0]);
	assert_true(i0[1] != 0);
	assert_true(ust_bpfu_raw_count(r) == 2);
	munmap(anon, 4096);
	ust_bpfu_raw_free(r);
}

/* A process gone: nothing read, nothing named, the stack cut (and no crash). */
static void test_gone(void **state)
{
	struct ust_bpfu_raw *r = ust_bpfu_raw_new();
	uint64_t offs[2] = { 0x1234, (uint64_t)(uintptr_t)&fopen }, inodes[2] = { 77, 0 };
	uint32_t devs[2] = { 5, 0 }, raw[2] = { 0, 1 };
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	assert_int_equal(ust_bpfu_raw_resolve(r, pid, raw, offs, inodes, devs, 2), 1);
	assert_true(!inodes[1] && !devs[1]);
	ust_bpfu_raw_free(r);
}

/*
 * A process read while it lived, gone since (its last stacks come after
 * its exit): its mappings as read still name frames, an address they miss
 * (the re-read fails) does not empty them; its exec forgets them.  Frame 0
 * has its file: frame 1 is the return address looked up.
 */
static void test_read_then_gone(void **state)
{
	struct ust_bpfu_raw *r = ust_bpfu_raw_new();
	uint64_t offs[2], inodes[2];
	uint32_t devs[2], raw[2] = { 0, 1 };
	int local;
	pid_t pid = fork();

#define SET(addr) (offs[0] = 0x1234, inodes[0] = 77, devs[0] = 5, \
		   offs[1] = (uint64_t)(uintptr_t)(addr), inodes[1] = 0, devs[1] = 0)
	(void)state;
	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	/* The child has the parent's mappings: fopen is in its libc too. */
	SET(&fopen);
	assert_int_equal(ust_bpfu_raw_resolve(r, pid, raw, offs, inodes, devs, 2), 2);
	assert_true(inodes[1] != 0);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	SET(&local);
	assert_int_equal(ust_bpfu_raw_resolve(r, pid, raw, offs, inodes, devs, 2), 1);
	SET(&fopen);
	assert_int_equal(ust_bpfu_raw_resolve(r, pid, raw, offs, inodes, devs, 2), 2);
	assert_true(inodes[1] != 0);
	ust_bpfu_raw_exec(r, pid);
	SET(&fopen);
	assert_int_equal(ust_bpfu_raw_resolve(r, pid, raw, offs, inodes, devs, 2), 1);
#undef SET
	ust_bpfu_raw_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_no_file),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_read_then_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
