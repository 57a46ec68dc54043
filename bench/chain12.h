/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The benchmarks' call chain: wl_1() .. wl_11() call down to the
 * workload's own wl_leaf(), so that its work sits 12 frames deep (with
 * main()), each frame a real one (noinline, frame pointers).  Include it
 * after defining wl_leaf(long) and wl_sink.
 */
#ifndef UST_BENCH_CHAIN12_H
#define UST_BENCH_CHAIN12_H

#define UST_BENCH_LEVEL(n, next) \
	__attribute__((noinline)) void wl_##n(long arg) { next(arg); wl_sink++; }

UST_BENCH_LEVEL(11, wl_leaf)
UST_BENCH_LEVEL(10, wl_11)
UST_BENCH_LEVEL(9, wl_10)
UST_BENCH_LEVEL(8, wl_9)
UST_BENCH_LEVEL(7, wl_8)
UST_BENCH_LEVEL(6, wl_7)
UST_BENCH_LEVEL(5, wl_6)
UST_BENCH_LEVEL(4, wl_5)
UST_BENCH_LEVEL(3, wl_4)
UST_BENCH_LEVEL(2, wl_3)
UST_BENCH_LEVEL(1, wl_2)

#endif
