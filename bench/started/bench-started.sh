#!/bin/bash
# What a recording starts (issue 36): short programs, their first samples
# and the libraries they dlopen(), sampled by cpu-clock at 999 Hz, then
# (mode "events") their read and write system calls with deferred stacks
# (-O userstacktrace_delay; perf: the same tracepoints, --call-graph dwarf):
#   ustitch cold  ustitch record -g, USTITCH_CACHE_DIR= (no disk cache: every
#                 unwind table is built while recording);
#   ustitch warm  the same with a cache dir a first run filled;
#   perf dwarf    perf record --call-graph dwarf (8 KiB of stack per sample,
#                 unwound after recording: the anchor).
# Workloads (made in a temp dir, removed after): g++ -O2 -S of a C++ file
# with <map>, <string>, <vector>, <algorithm>; make -j2 of 6 generated C
# files; python3.11 importing C extension modules (json, decimal, sqlite3,
# hashlib, zlib, _ctypes) and working in them; a sh loop of sort, wc, grep,
# sed, tr; a static C program (gcc -static, 3 frames deep); Debian's static
# busybox running a sh loop (its .eh_frame does not cover the applets).
# Per workload and way:
#   samples    every sample of the workload's processes;
#   reach%     those whose user frames reach the bottom (__libc_start_call_main,
#              start_thread, clone3, _start, or _dl_start/_dl_start_user for
#              the dynamic loader's own: debian_bottom and _start);
#   cmpl%      ustitch: those and the stacks whose header says the walk
#              reached the outermost frame ("complete"), named or not (an
#              entry point a stripped file names no way _start can be
#              guessed: busybox's applets);
#   later      stacks the recorder walked on after recording, from the stack
#              copied at the sample ("walked on by the recorder": stack_flags
#              bit LATER);
#   late       stacks whose header says a file's unwind table was not loaded
#              yet or not in time (bit NO_TABLE): cut short, or walked on by
#              frame pointers;
#   exec ms    from a process's first sample (its exec, within a period) to
#              its first stack reaching the bottom through the program's own
#              code (__libc_start_call_main, start_thread, clone3: past the
#              loader, whose stacks are complete before any table of the
#              program is needed): the first process named in the row's
#              workload, and the mean over all of them; "never": how many
#              had no such stack.  ustitch's report names a process by its
#              last name, so its first sample can be a fork's before the exec;
#   B/s        trace file bytes per sample over the whole run (kallsyms
#              included) with the recorder's stack copies for parked walks
#              (the -v summary's KiB) added: what ustitch writes and copies;
#   ring       the same less the way's fixed bytes (recording /bin/true);
#   rec_s      the recorder's own CPU (user + system of the ustitch or perf
#              process, its children apart), from bench/dwarf's
#              rusage-at-exit.so preloaded (it loads into the dynamic
#              programs too: one small library more for their tables).
# Then per workload the share against perf's and the goal (>= perf's and
# >= 97 %), printed, not asserted.  One run each (shares need no best of
# N); about a minute.
#   meson test -C build --benchmark started -v
# UST_BENCH_STARTED chooses workloads (default "g++ make python3 shell
# static busybox"), UST_BENCH_STARTED_EVENTS the events' (default "g++ make
# python3 shell": the static programs make no such calls to speak of),
# UST_BENCH_STARTED_MODES the modes (default "samples events").
# shellcheck disable=SC2016  # the workloads' shell code is single-quoted on purpose
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
[ -x /usr/bin/perf ] || { echo "skip: no /usr/bin/perf (linux-perf)"; exit 77; }
work=$(mktemp -d /tmp/ustitch-bench-started.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/perf record -q -e cpu-clock -o "$work/p.data" -- /bin/true 2>/dev/null ||
	{ echo "skip: perf record -e cpu-clock fails here"; exit 77; }
perf=/usr/bin/perf
here=${BASH_SOURCE%/*}
workloads=${UST_BENCH_STARTED:-g++ make python3 shell static busybox}
# The events' workloads: those that read and write (the static programs do not).
ev_workloads=${UST_BENCH_STARTED_EVENTS:-g++ make python3 shell}
modes=${UST_BENCH_STARTED_MODES:-samples events}
# debian_bottom: the bottom frames of a complete stack (one definition).
# shellcheck source=tests/live/cfi/debian-progs.sh
. "$UST_CFI_DEBIAN_PROGS"
# shellcheck disable=SC2154  # debian_bottom: debian-progs.sh's
bottom=${debian_bottom/_dl_start|/_start|_dl_start|}
own='(^|;)(__libc_start_call_main|start_thread|clone3|__clone3)(;|$)'

# The workloads' inputs.
cat >"$work/x.cc" <<'EOF'
#include <algorithm>
#include <map>
#include <string>
#include <vector>
template <typename T> struct acc {
	std::map<std::string, std::vector<T>> m;
	void add(const std::string &k, T v) { m[k].push_back(v); }
	T sum() const { T s{}; for (const auto &p : m) for (T v : p.second) s += v; return s; }
};
int main(int argc, char **argv)
{
	acc<int> a;
	acc<double> b;
	for (int i = 1; i < argc; i++) { a.add(argv[i], i); b.add(argv[i], i * 0.5); }
	std::vector<std::string> keys;
	for (const auto &r : a.m) keys.push_back(r.first);
	std::sort(keys.begin(), keys.end(),
		  [](const std::string &x, const std::string &y) { return x.size() < y.size(); });
	return (int)keys.size() + (int)a.sum() + (int)b.sum();
}
EOF
mkdir "$work/mk"
for i in 1 2 3 4 5; do
	cat >"$work/mk/f$i.c" <<EOF
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct rec { int k; double v; char name[32]; };
static int cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->k - y->k;
}
double f$i(int n)
{
	struct rec r[64];
	double s = 0;
	for (int i = 0; i < 64; i++) {
		r[i].k = (i * 7919 + n * $i) % 101;
		r[i].v = i * 0.5;
		snprintf(r[i].name, sizeof(r[i].name), "r%d", i);
	}
	for (int j = 0; j < n; j++)
		for (int i = 0; i < 64; i++)
			s += r[i].v * (j % 7) + strlen(r[i].name);
	qsort(r, 64, sizeof(r[0]), cmp);
	return s + r[0].k;
}
EOF
done
cat >"$work/mk/main.c" <<'EOF'
#include <stdio.h>
double f1(int), f2(int), f3(int), f4(int), f5(int);
int main(void)
{
	printf("%f\n", f1(3) + f2(3) + f3(3) + f4(3) + f5(3));
	return 0;
}
EOF
printf '%s\n' 'OBJS = main.o f1.o f2.o f3.o f4.o f5.o' 'prog: $(OBJS)' '	gcc -O2 -o $@ $(OBJS)' \
	'%.o: %.c' '	gcc -O2 -c -o $@ $<' >"$work/mk/Makefile"
cat >"$work/spin.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
__attribute__((noinline)) static unsigned long step(unsigned long x, long n)
{
	for (long i = 0; i < n; i++)
		x ^= mix(x + i);
	return x;
}
__attribute__((noinline)) static unsigned long run(long n)
{
	unsigned long x = 1;
	for (int r = 0; r < 8; r++)
		x += step(x, n);
	return x;
}
int main(int argc, char **argv)
{
	printf("%lu\n", run(argc > 1 ? atol(argv[1]) : 1500000));
	return 0;
}
EOF
gcc -static -O2 -o "$work/spin" "$work/spin.c" || { echo "skip: gcc -static fails (libc6-dev?)"; exit 77; }
find /usr/share/doc -type f 2>/dev/null | head -n 4000 >"$work/words"
py='import json, decimal, sqlite3, hashlib, zlib, ctypes, struct
d = [{"k": i, "v": [str(j) for j in range(10)], "s": "x" * (i % 50)} for i in range(8000)]
for _ in range(4): json.loads(json.dumps(d))
decimal.getcontext().prec = 50
s = decimal.Decimal(0)
for i in range(1, 50000): s += decimal.Decimal(1) / decimal.Decimal(i)
db = sqlite3.connect(":memory:")
db.execute("create table t (a integer, b text)")
db.executemany("insert into t values (?, ?)", ((i, str(i) * 3) for i in range(60000)))
db.execute("select count(*), sum(a), max(b) from t where b like \"%7%\"").fetchall()
db.execute("with recursive c(x) as (select 1 union all select x + 1 from c where x < 150000) select sum(x) from c").fetchall()
b = b"".join(struct.pack("<Q", i * 2654435761) for i in range(200000))
for _ in range(10): hashlib.sha256(b).hexdigest(); hashlib.md5(b).hexdigest()
zlib.decompress(zlib.compress(b, 6))
a = (ctypes.c_double * 20000)(*range(20000))
ctypes.memmove(a, a, ctypes.sizeof(a))
libc = ctypes.CDLL(None)
[libc.abs(-i) for i in range(20000)]'
# The real interpreter: python3 in PATH may be a pyenv shim (a script).
python=/usr/bin/python3.11
[ -x "$python" ] || python=$(readlink -f /usr/bin/python3)

workload() {	# workload NAME: sets cmd=(...), comm (a regex of its main processes' names), label
	case $1 in
	g++) cmd=(/usr/bin/g++ -O2 -S -o /dev/null "$work/x.cc") comm='^cc1plus$' label=cc1plus ;;
	make) cmd=(/usr/bin/make -s -j2 -C "$work/mk") comm='^cc1$' label=cc1 ;;
	python3) cmd=("$python" -c "$py") comm='^python3' label=python3 ;;
	shell)
		cmd=(/bin/sh -c 'cd "$1"; i=0; while [ $i -lt 12 ]; do sort words | wc -l; grep -c lib words
			sed s/doc/DOC/ words | tr a-z A-Z | wc -c; i=$((i + 1)); done >/dev/null' sh "$work")
		comm='^(sort|wc|grep|sed|tr)$' label='sort..tr' ;;
	static) cmd=("$work/spin") comm='^spin$' label=spin ;;
	busybox)
		cmd=(/usr/bin/busybox sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done')
		comm='^busybox$' label='busybox (its .eh_frame does not cover the applets)' ;;
	*) echo "unknown workload $1" >&2; return 1 ;;
	esac
}
# Each run starts from the same state: make's objects removed.
prep() { rm -f "$work"/mk/*.o "$work/mk/prog"; }

# rec_cpu FILE NAME: the recorder's own CPU seconds from rusage-at-exit.so's
# lines (PID PPID COMM SELF_US CHILDREN_US MAXRSS_KB): its last line named
# NAME (the recorder exits last), SELF_US.
rec_cpu() { awk -v n="$2" '$3 == n { s = $4 } END { printf "%.3f\n", s / 1e6 }' "$1"; }
run_rusage() {	# run_rusage FILE CMD...: CMD with rusage-at-exit.so writing to FILE
	rm -f "$1"
	env LD_PRELOAD="$UST_RUSAGE_AT_EXIT" UST_BENCH_RUSAGE="$1" "${@:2}"
}
# What each way records, by mode (set_mode): samples, or the system calls
# read and write with their deferred stacks (perf: at the event, its
# dwarf copy); ev: the report's event names (a regex).
set_mode() {
	case $1 in
	samples)
		ust_ev=(-e cpu-clock -F 999 -g) perf_ev=(-e cpu-clock -F 999 --call-graph dwarf) ev=sample ;;
	events)
		ust_ev=(-e syscalls:sys_enter_read -e syscalls:sys_enter_write -O userstacktrace_delay)
		perf_ev=(-e syscalls:sys_enter_read -e syscalls:sys_enter_write --call-graph dwarf)
		ev='sys_enter_(read|write)' ;;
	esac
}
# ust_rec OUT CACHE CMD...: ustitch record -v into OUT (summary: OUT.err).
ust_rec() {
	prep
	USTITCH_CACHE_DIR=$2 run_rusage "$1.rus" "$UST_USTITCH" record -v -o "$1" "${ust_ev[@]}" \
		-- "${@:3}" >/dev/null 2>"$1.err"
}
perf_rec() {	# perf_rec OUT CMD...
	prep
	run_rusage "$1.rus" "$perf" record -q -o "$1" "${perf_ev[@]}" \
		-- "${@:2}" >/dev/null 2>"$1.err"
}
ust_samples() {	# ust_samples FILE.dat: ust-samples.awk's lines
	env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" trace-cmd report "$1" 2>/dev/null |
		awk -v ev="$ev" -f "$here/ust-samples.awk"
}
perf_samples() {	# perf_samples FILE: perf-samples.awk's lines
	"$perf" script -i "$1" -F comm,tid,time,ip,sym --no-inline 2>/dev/null | awk -f "$here/perf-samples.awk"
}
# park_bytes ERR: the stack bytes the recorder's BPF copied for parked walks
# (the -v summary gives KiB), 0 when it parked none.
park_bytes() {
	sed -n 's/.*parked at a file without its unwind table: [0-9]* (\([0-9]*\) KiB.*/\1/p' "$1" |
		awk '{ k += $1 } END { print k * 1024 }'
}

echo "kernel $(uname -r); $(nproc) CPUs; ustitch -g: $("$UST_USTITCH" probe --no-verify 2>/dev/null |
	sed -n 's/^record -g: user stacks //p')"
declare -A share bps ring cpu
row() {	# row WORKLOAD WAY SAMPLES_FILE DATA_FILE FIXED COPIES CPU
	local n r later late cmpl np never fms mms size k=$1.$2 cm=-
	read -r n r later late cmpl np never fms mms < <(awk -v re="$bottom" -v own="$own" -v comm="$comm" \
		-f "$here/started.awk" "$3")
	if [ "${n:-0}" -eq 0 ]; then
		printf '%-8s %-12s %7s\n' "$1" "$2" "no samples"
		return
	fi
	size=$(stat -c %s "$4")
	share[$k]=$(echo "scale=1; 100 * $r / $n" | bc)
	[ "$2" = "perf dwarf" ] || cm=$(printf '%.1f%%' "$(echo "100 * $cmpl / $n" | bc -l)")
	bps[$k]=$(((size + $6) / n))
	ring[$k]=$(((size - $5 + $6) / n))
	cpu[$k]=$7
	printf '%-8s %-12s %7d %5.1f%% %6s %5d %5d %5d %8s %7s %5d %6d %6d %6.3f\n' "$1" "$2" "$n" \
		"${share[$k]}" "$cm" "$later" "$late" "$np" "$fms" "$mms" "$never" "${bps[$k]}" "${ring[$k]}" "$7"
}
ratio() { echo "$2 > 0" | bc | grep -q 1 && printf '%.3f' "$(echo "$1 / $2" | bc -l)" || echo -; }

summary=()
for mode in $modes; do
set_mode "$mode"
# Each way's fixed bytes: recording /bin/true (kallsyms, headers).
USTITCH_CACHE_DIR='' "$UST_USTITCH" record -q -o "$work/fix.dat" "${ust_ev[@]}" -- /bin/true 2>/dev/null
"$perf" record -q -o "$work/fix.perf" "${perf_ev[@]}" -- /bin/true 2>/dev/null
fix_ust=$(stat -c %s "$work/fix.dat" 2>/dev/null || echo 0)
fix_perf=$(stat -c %s "$work/fix.perf" 2>/dev/null || echo 0)
echo
echo "== $mode: ustitch ${ust_ev[*]}; perf ${perf_ev[*]}"
echo "fixed bytes (recording /bin/true): ustitch $fix_ust, perf dwarf $fix_perf"
printf '%-8s %-12s %7s %6s %6s %5s %5s %5s %8s %7s %5s %6s %6s %6s\n' workload way "$([ "$mode" = samples ] && echo samples || echo events)" reach% \
	cmpl% later late procs "exec ms" mean never B/s ring rec_s
ws=$workloads
[ "$mode" = events ] && ws=$ev_workloads
for w in $ws; do
	workload "$w" || continue
	# Cold: no disk cache.  Warm: a first run fills $work/cache.
	ust_rec "$work/$w.cold.dat" "" "${cmd[@]}"
	ust_samples "$work/$w.cold.dat" >"$work/$w.cold.s"
	ust_rec "$work/fill.dat" "$work/cache" "${cmd[@]}"
	ust_rec "$work/$w.warm.dat" "$work/cache" "${cmd[@]}"
	ust_samples "$work/$w.warm.dat" >"$work/$w.warm.s"
	perf_rec "$work/$w.perf" "${cmd[@]}"
	perf_samples "$work/$w.perf" >"$work/$w.perf.s"
	row "$w" "ustitch cold" "$work/$w.cold.s" "$work/$w.cold.dat" "$fix_ust" \
		"$(park_bytes "$work/$w.cold.dat.err")" "$(rec_cpu "$work/$w.cold.dat.rus" ustitch)"
	row "$w" "ustitch warm" "$work/$w.warm.s" "$work/$w.warm.dat" "$fix_ust" \
		"$(park_bytes "$work/$w.warm.dat.err")" "$(rec_cpu "$work/$w.warm.dat.rus" ustitch)"
	row "$w" "perf dwarf" "$work/$w.perf.s" "$work/$w.perf" "$fix_perf" 0 \
		"$(rec_cpu "$work/$w.perf.rus" perf)"
	echo "  exec ms of: $label"
	for t in cold warm; do
		sed -n "s/^ustitch record: \(user stacks parked.*\|unwind tables: .*\)/  $t: \1/p" \
			"$work/$w.$t.dat.err"
	done
	rm -f "$work/$w".* "$work/fill.dat"*
	c=${share[$w.ustitch cold]:-} p=${share[$w.perf dwarf]:-}
	if [ -z "$c" ] || [ -z "$p" ]; then continue; fi
	goal="not met"
	[ "$(echo "$c >= $p && $c >= 97" | bc)" = 1 ] && goal=met
	summary+=("$(printf '%-7s %-8s ustitch cold %5.1f%% (warm %5.1f%%), perf dwarf %5.1f%%: goal (>= perf, >= 97 %%) %s; bytes/%s over perf: %s whole run, %s ring; recorder CPU over perf: %s' \
		"$mode" "$w" "$c" "${share[$w.ustitch warm]:-0}" "$p" "$goal" "${mode%s}" \
		"$(ratio "${bps[$w.ustitch cold]}" "${bps[$w.perf dwarf]}")" \
		"$(ratio "${ring[$w.ustitch cold]}" "${ring[$w.perf dwarf]}")" \
		"$(ratio "${cpu[$w.ustitch cold]}" "${cpu[$w.perf dwarf]}")")")
done
done
echo "reach%: user stacks reaching _start, __libc_start_call_main, start_thread, clone3 or _dl_start;"
echo "cmpl%: those or stacks the header calls complete (named or not); later: walked on by the recorder"
echo "after recording; late: a table not loaded yet / in time; exec ms: a process's first sample to its"
echo "first stack reaching the bottom through its own code (the first process, the mean; never: processes"
echo "without one); B/s: trace bytes per sample, the recorder's stack copies added; ring: the same less"
echo "the fixed bytes of recording /bin/true; rec_s: the recorder's own CPU"
printf '%s\n' "${summary[@]}"
exit 0
