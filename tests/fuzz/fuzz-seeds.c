// SPDX-License-Identifier: LGPL-2.1
/*
 * fuzz-seeds DIR: write the binary seed corpora of fuzz_decode and
 * fuzz_perf into DIR/decode and DIR/perf, from the library's record encoder
 * and the perf unit tests' synthesizer (tests/unit/perf/synth.c).  The text,
 * ELF and trace.dat corpora are made by seeds.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "synth.h"
#include "ustitch/abi.h"
#include "ustitch/encode.h"

static const char *outdir;

static void put(const char *sub, const char *name, const uint8_t *pre, size_t npre,
		const void *b, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, sub);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(pre, 1, npre, f) != npre || (n && fwrite(b, 1, n, f) != n) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void decode_seeds(void)
{
	static const unsigned int nrs[] = { 0, 1, 3, 16, 127 };
	static const uint8_t full = 0, old = 1;
	uint8_t buf[8192];
	char name[64];
	int n;

	for (size_t k = 0; k < sizeof(nrs) / sizeof(nrs[0]); k++) {
		struct ust_enc_stack_arrays a;
		unsigned int nr = nrs[k];

		n = ust_enc_unwind_stack(buf, sizeof(buf), UST_ABI_ID_UNWIND_STACK, 4242,
					 ((uint64_t)1 << UST_ABI_COOKIE_CPU_SHIFT) | (k + 1), nr, &a);
		if (n < 0)
			exit(1);
		for (unsigned int i = 0; i < nr; i++) {
			put64(a.offs + i * 8, 0x1000 + i * 0x10);
			put64(a.inodes + i * 8, i % 3 ? 1340007 + i : 0);
			put32(a.devs + i * 4, UST_ABI_MKKDEV(254, i % 4));
		}
		snprintf(name, sizeof(name), "stack-full-%u", nr);
		put("decode", name, &full, 1, buf, (size_t)n);

		/* The stack-only layout: header, cookie, one __data_loc. */
		unsigned int o = UST_ABI_STACK_HDR_SIZE_OLD;

		memset(buf, 0, sizeof(buf));
		ust_enc_common(buf, UST_ABI_ID_UNWIND_STACK, 4242);
		put64(buf + UST_ABI_COOKIE_OFF, k + 7);
		put32(buf + UST_ABI_STACK_LOC_OFF, UST_ABI_DATA_LOC(o, nr * 8));
		for (unsigned int i = 0; i < nr; i++)
			put64(buf + o + i * 8, 0x7f0000001000ULL + i);
		snprintf(name, sizeof(name), "stack-old-%u", nr);
		put("decode", name, &old, 1, buf, o + nr * 8);
	}
	n = ust_enc_unwind_cookie(buf, sizeof(buf), UST_ABI_ID_UNWIND_COOKIE, 4242, 0x10000000000003ULL);
	put("decode", "cookie-full", &full, 1, buf, (size_t)n);
	put("decode", "cookie-old", &old, 1, buf, (size_t)n);
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	n = ust_enc_mapping(buf, sizeof(buf), UST_ABI_ID_USER_MAPPING, 4242, UST_ABI_MKKDEV(254, 3),
			    1340007, bid, sizeof(bid), "/usr/lib/x86_64-linux-gnu/libc.so.6");
	if (n > 0)
		put("decode", "mapping", &full, 1, buf, (size_t)n);
	n = ust_enc_stack_flags(buf, sizeof(buf), UST_ABI_ID_STACK_FLAGS, 4242, 9,
				UST_ABI_STACK_F_CFI | UST_ABI_STACK_F_BOTTOM);
	if (n > 0)
		put("decode", "flags", &full, 1, buf, (size_t)n);
}

static void perf_seeds(void)
{
	static const uint64_t K[] = { 0xffffffff81000100ULL, 0xffffffff81000200ULL };
	static const uint64_t U[] = { 0x401000, 0x401100, 0x401200 };
	const struct synth_id id = { .pid = 100, .tid = 101, .time = 1000000, .cpu = 1 };
	struct synth_chain imm = { K, 2, U, 3, false, 0 };
	struct synth_chain def = { K, 2, NULL, 0, true, (1ULL << UST_ABI_COOKIE_CPU_SHIFT) | 5 };
	/* byte 0: sample_id_all, variant 0 (= SYNTH_SAMPLE_TYPE); data area 2^12 */
	uint8_t hdr[8] = { 1, 12, 0, 0, 0, 0, 0, 0 };
	uint8_t all[65536];
	size_t nall = 0;
	struct synth_rec r;
	size_t len;

#define ONE(name, expr) do { \
		len = (expr); \
		put("perf", name, hdr, sizeof(hdr), r.b, len); \
		memcpy(all + nall, r.b, len); \
		nall += len; \
	} while (0)
	ONE("sample-imm", synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_USER, &id, U[0], 1, &imm));
	ONE("sample-def", synth_sample(&r, SYNTH_SAMPLE_TYPE, PERF_RECORD_MISC_KERNEL, &id, K[0], 1, &def));
	ONE("sample-nochain", synth_sample(&r, SYNTH_SAMPLE_TYPE, 0, &id, 1, 1, NULL));
	ONE("deferred", synth_deferred(&r, SYNTH_SAMPLE_TYPE, &id, def.cookie, U, 3));
	ONE("lost", synth_lost(&r, SYNTH_SAMPLE_TYPE, &id, 17));
	ONE("comm", synth_comm(&r, SYNTH_SAMPLE_TYPE, &id, "ust-testprog", true));
	ONE("fork", synth_task(&r, PERF_RECORD_FORK, SYNTH_SAMPLE_TYPE, &id, 1, 1));
	ONE("exit", synth_task(&r, PERF_RECORD_EXIT, SYNTH_SAMPLE_TYPE, &id, 1, 1));
	ONE("mmap2", synth_mmap2(&r, SYNTH_SAMPLE_TYPE, &id, 0x400000, 0x2000, 0x1000, 254, 3,
				 1340007, "/usr/bin/ust-testprog"));
#undef ONE
	put("perf", "stream", hdr, sizeof(hdr), all, nall);
	hdr[2] = 0xc0;	/* start near the end of a 1 KiB area: records wrap */
	hdr[3] = 0x03;
	hdr[1] = 10;
	put("perf", "stream-wrap", hdr, sizeof(hdr), all, nall > 1024 ? 1024 : nall);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz-seeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	decode_seeds();
	perf_seeds();
	return 0;
}
