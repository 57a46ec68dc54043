#!/bin/bash
# System-wide recorder benchmark: `make -j2` of a small generated C project
# (UST_BENCH_FILES C files, default 32) while `ustitch record -e syscalls`
# records the whole machine (no command: until SIGINT), with
#   (b) no stacks,
#   (c) ftrace's userstacktrace (at most 8 frames, taken at every event),
#   (d) deferred user stacks (-O userstacktrace_delay: by BPF where the
#       kernel lacks the series, walked by CFI tables),
# against (a) the same build untraced.  Each mode builds the project
# UST_BENCH_ROUNDS times (default 3, `make clean` between, not timed);
# the best round counts.  Prints wall times and ratios of this one run.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v make >/dev/null && command -v gcc >/dev/null || { echo "skip: needs make and gcc"; exit 77; }
files=${UST_BENCH_FILES:-32} rounds=${UST_BENCH_ROUNDS:-3}
work=$(mktemp -d /tmp/ustitch-bench-make.XXXXXX)
rec_pid=
cleanup() {
	[ -n "$rec_pid" ] && kill -INT "$rec_pid" 2>/dev/null && wait "$rec_pid"
	rm -rf "$work"
}
trap cleanup EXIT

# The project: FILES units of a few functions each (some calls, a loop, a
# table), and a main calling them all.
mkdir "$work/proj"
for i in $(seq "$files"); do
	cat >"$work/proj/u$i.c" <<EOF
#include <stdio.h>
#include <string.h>
static int tab$i[64];
static int f${i}_a(int x) { for (int k = 0; k < 64; k++) tab$i[k] = (x + k) * $i; return tab$i[x & 63]; }
static int f${i}_b(const char *s) { return (int)strlen(s) + f${i}_a($i); }
int u$i(int x) { char b[64]; snprintf(b, sizeof(b), "%d-%d", x, $i); return f${i}_b(b) + x; }
EOF
done
{
	for i in $(seq "$files"); do echo "int u$i(int);"; done
	echo 'int main(void) { int s = 0;'
	for i in $(seq "$files"); do echo "s += u$i(s & 7);"; done
	echo 'return s & 1; }'
} >"$work/proj/main.c"
objs=$(for i in $(seq "$files"); do printf 'u%d.o ' "$i"; done)
printf 'prog: main.o %s\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\nclean:\n\trm -f *.o prog\n' \
	"$objs" >"$work/proj/Makefile"

build_ms() {	# the best of ROUNDS builds, in ms
	local best= s e t
	for _ in $(seq "$rounds"); do
		make -s -C "$work/proj" clean >/dev/null
		s=$(date +%s%N)
		make -s -j2 -C "$work/proj" >/dev/null 2>&1 || { echo "make failed" >&2; echo 0; return; }
		e=$(date +%s%N)
		t=$(( (e - s) / 1000000 ))
		[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
	done
	echo "$best"
}

traced_ms() {	# traced NAME OPTIONS...: build time while recording the machine
	local name=$1 t; shift
	"$UST_USTITCH" record -v -o "$work/$name.dat" -b 16384 -e syscalls "$@" \
		>"$work/$name.out" 2>"$work/$name.err" &
	rec_pid=$!
	for _ in $(seq 600); do grep -q "recording" "$work/$name.err" && break; sleep 0.1; done
	t=$(build_ms)
	kill -INT "$rec_pid"; wait "$rec_pid"; rec_pid=
	echo "$t"
}

a=$(build_ms)
b=$(traced_ms nostack)
c=$(traced_ms userstack -O userstacktrace)
d=$(traced_ms deferred -O userstacktrace_delay)
events() { trace-cmd report "$work/$1.dat" 2>/dev/null | grep -c ' sys_e'; }
printf 'make -j2 of %d C files, best of %d builds; %d CPUs\n' "$files" "$rounds" "$(nproc)"
printf '%-44s %8s %8s\n' mode "ms" "ratio"
printf '%-44s %8d %8.2f\n' "(a) untraced" "$a" 1
printf '%-44s %8d %8.2f\n' "(b) -e syscalls, no stacks" "$b" "$(echo "$b / $a" | bc -l)"
printf '%-44s %8d %8.2f\n' "(c) + ftrace userstacktrace" "$c" "$(echo "$c / $a" | bc -l)"
printf '%-44s %8d %8.2f\n' "(d) + deferred stacks (BPF, CFI)" "$d" "$(echo "$d / $a" | bc -l)"
printf 'ratio (d)/(c): %.2f; system call events recorded: (b) %d, (c) %d, (d) %d\n' \
	"$(echo "$d / $c" | bc -l)" "$(events nostack)" "$(events userstack)" "$(events deferred)"
grep -h "user stacks\|records lost\|events lost" "$work/deferred.err" | sed 's/^/(d) /'
exit 0
