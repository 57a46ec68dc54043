#!/bin/bash
# Live tests of user stacks walked by CFI (.eh_frame) in `ustitch record`.
# usage: test-cfi.sh chains|debian|perf-agree|gdb|script|static
#   chains      every cfi-prog scenario (expected/SCENARIO.txt): record its
#               one system call with deferred user stacks, report with our
#               plugin, compare each event's chain of function names exactly
#   debian      Debian's own binaries (no frame pointers): the share of
#               stacks that reach the bottom (__libc_start_call_main, or
#               start_thread/clone3 in threads, _dl_start for the dynamic
#               loader's own calls before main) must be >= 99 %: sort,
#               python3 and tar writes, gzip reads, find and ls getdents64
#   perf-agree  the same scenarios under `perf record --call-graph dwarf`:
#               frame by frame, the same objects and addresses
#   script      Debian programs and cfi-prog started by a shell script, the
#               unwind tables' cache cold, sampled (cpu-clock -g) and at
#               system calls (-O userstacktrace_delay): every frame names
#               its object (no address a wrong step took for a return
#               address), and every cfi-prog stack is its expected chain
#               whole, those taken before its table was built finished by
#               the recorder from their stack's copy (and saying so)
#   gdb         proves the expected files without ustitch: gdb (which unwinds
#               by CFI) stops at each scenario's system call and its
#               backtrace must match (needs no root, no tracefs); the static
#               builds' too
#   static      chains with cfi-prog linked -static (ET_EXEC, no
#               .eh_frame_hdr) and -static-pie ($UST_CFI_STATICS), the
#               table cache empty, then sampled: every stack whole
# UST_CFI_ONLY=leaf,qsort,... limits chains/perf-agree to those scenarios
# and UST_CFI_DEBIAN=sort:write,... the debian programs (the vm lane,
# where everything runs under TCG).
# Tracefs is touched only through `ustitch record` (its own instance) and
# perf; nothing is left behind.
set -u
mode=${1:-chains}
here=$(dirname "$0")
# Every name this script is given must be known, checked before anything
# can skip: a misspelt mode, scenario or program would quietly test less.
case $mode in
chains | debian | perf-agree | gdb | script | static) ;;
*)
	echo "Bail out! $0: unknown test '$mode' (known: chains debian perf-agree gdb script static)"
	exit 2
	;;
esac
only=${UST_CFI_ONLY:-}
for s in ${only//,/ }; do
	if ! [ -r "$here/expected/$s.txt" ]; then
		echo "Bail out! UST_CFI_ONLY: unknown scenario '$s' (known: $(cd "$here/expected" && echo *.txt | sed 's/\.txt//g'))"
		exit 2
	fi
done
# The Debian programs (debian_progs, cmd_of, debian_inputs, debian_bottom).
. "$here/debian-progs.sh"
for p in $debian_progs; do
	if [ "${p#*:}" = "$p" ] || [ -z "${p#*:}" ] || ! work=/ cmd_of "${p%%:*}"; then
		echo "Bail out! UST_CFI_DEBIAN: '$p' is not PROGRAM:SYSCALL of a known program (sort gzip find tar python3 ls)"
		exit 2
	fi
done
if [ "$mode" = gdb ]; then
	skip_all() { echo "1..0 # SKIP $*"; exit 0; }
	command -v gdb >/dev/null || skip_all "no gdb"
	work=$(mktemp -d /tmp/ustitch-cfi-gdb.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	fails=0 skips=0
	ok() { echo "ok - $*"; }
	bad() { echo "not ok - $*"; fails=$((fails + 1)); }
	skip_part() { echo "ok - $1 # SKIP $2"; skips=$((skips + 1)); }
	expect_eq() { [ "$2" = "$3" ] && ok "$1: $2" || bad "$1: got '$2', expected '$3'"; }
	finish() {
		[ "$skips" = 0 ] || echo "# $skips part(s) skipped"
		[ "$fails" = 0 ] && exit 0
		echo "# $fails failed"
		exit 1
	}
else
	. "$here/../lib.sh" cfi
fi
prog=$UST_CFI_PROG
# The static builds (meson links them where libc.a is there) and, while
# one is tested, its name before each scenario's, and the scenarios left
# out: plt-resolve's resolver runs once, before main, in a static program
# (IRELATIVE relocations are applied at startup, not by ld.so's lazy
# binding), so its chain is another one.
statics=${UST_CFI_STATICS:-}
tag= static_skip=
# static_why SCENARIO: why a static program leaves it out.
static_why() {
	case $1 in
	dlopen) echo "a static program loads no library" ;;
	*) echo "a static program runs its IFUNC resolvers at startup" ;;
	esac
}

# wanted SCENARIO PART...: in UST_CFI_ONLY, or no UST_CFI_ONLY; else each
# PART is said skipped, so that the output still names every scenario.
wanted() {
	local s=$1 p
	shift
	[ -z "${UST_CFI_ONLY:-}" ] || [[ ",$UST_CFI_ONLY," == *",$s,"* ]] && return 0
	for p in "$@"; do
		skip_part "$s: $p" "not in UST_CFI_ONLY"
	done
	return 1
}

# field FILE NAME: the value of "NAME: value" in an expected file.
field() { sed -n "s/^$2: *//p" "$1" | head -1; }

# The deferred stacks need the kernel's series or BPF (tracepoint programs).
need_deferred() {
	local p
	p=$("$UST_USTITCH" probe 2>&1)
	echo "$p" | grep -q '^ftrace-deferred-unwind: yes' && return
	echo "$p" | grep -q '^bpf-tracepoint: yes' && return
	echo "$p" | sed 's/^/# /'
	skip_all "no deferred user stacks on this kernel (neither the ftrace series nor BPF tracepoint programs)"
}

# record NAME EVENT CMD...: deferred user stacks of EVENT for CMD into
# $work/NAME.dat; its report with the plugin in $work/NAME.report and one
# line per event in $work/NAME.chains (cfi-chains.awk).
record() {
	local name=$1 ev=$2 pid rc; shift 2
	"$UST_USTITCH" record -q -b 8192 -O userstacktrace_delay -e "$ev" -o "$work/$name.dat" \
		-- "$@" >/dev/null 2>"$work/$name.err" &
	pid=$!
	wait $pid; rc=$?
	# Its own instance only: other tests may be recording at the same time.
	[ ! -e "/sys/kernel/tracing/instances/ustitch-$pid" ] || bad "$name: instance ustitch-$pid left behind"
	if [ $rc -ne 0 ]; then
		bad "$name: ustitch record failed ($rc): $(tail -3 "$work/$name.err")"
		return 1
	fi
	report "$work/$name.dat" >"$work/$name.report"
	awk -f "$here/cfi-chains.awk" "$work/$name.report" >"$work/$name.chains"
}

chains() {
	local f s ev want got m
	need_deferred
	for f in "$here"/expected/*.txt; do
		s=$(basename "$f" .txt)
		ev=$(field "$f" event)
		wanted "$s" "${ev#*:} events" "every chain as expected" || continue
		if [[ " $static_skip " == *" $s "* ]]; then
			skip_part "$tag$s" "$(static_why "$s")"
			continue
		fi
		want=$(field "$f" count)
		s=$tag$s
		record "$s" "$ev" "$prog" "${s#"$tag"}" || continue
		got=$(wc -l <"$work/$s.chains")
		expect_eq "$s: ${ev#*:} events" "$got" "$want"
		awk -f "$here/cfi-match.awk" "$f" "$work/$s.chains" >"$work/$s.match"
		m=$(tail -1 "$work/$s.match")
		if [ "$m" = "match $want/$want" ]; then
			ok "$s: every chain as expected ($(grep -c '' "$f" | awk '{print $1}') lines of $(basename "$f"))"
		else
			bad "$s: chains differ ($m); expected on the left, recorded on the right:"
			head -n -1 "$work/$s.match" | head -70
		fi
	done
}

# reach NAME: "events reaching" from $work/NAME.chains.
reach() {
	awk -v re="$debian_bottom" '{ n++; if ($4 ~ re) r++ } END { print n + 0, r + 0 }' "$work/$1.chains"
}

debian() {
	local name ev n r p cmd
	need_deferred
	debian_inputs
	for p in $debian_progs; do
		name=${p%%:*} ev=${p#*:}
		cmd_of "$name"
		record "$name" "syscalls:sys_enter_$ev" "${cmd[@]}" || continue
		read -r n r < <(reach "$name")
		if [ "$n" -lt 20 ]; then
			bad "$name: only $n $ev events recorded"
			continue
		fi
		printf '%-8s %-12s %6d events, %6d reach the bottom: %s %%\n' "$name" "$ev" "$n" "$r" \
			"$(echo "scale=1; 100 * $r / $n" | bc)"
		if [ $((r * 100)) -ge $((n * 99)) ]; then
			ok "$name: $r/$n stacks reach the bottom (>= 99 %)"
		else
			bad "$name: $r/$n stacks reach the bottom (< 99 %); the most common short ones:"
			awk '$4 !~ /(^|;)(__libc_start_call_main|start_thread|clone3|__clone3|_dl_start|_dl_start_user)(;|$)/ { print $4 }' \
				"$work/$name.chains" | sort | uniq -c | sort -rn | head -5 | cut -c1-300
		fi
	done
}

# The script of live-cfi-script: Debian's wc and sort, then cfi-prog
# deep40 twice: the first run is over before its table is built (the
# recorder builds it 300 ms late: USTITCH_TEST_TABLE_DELAY), so its walks
# park and the recorder finishes them once it is (the process stays a
# second, for its maps to be read); the second, a second later, has it.
script_cmd() {
	echo "wc /etc/services; sort /etc/services >/dev/null; for i in 1 2 3 4 5 6; do sort -R /etc/services >/dev/null; done; for i in 1 2 3 4 5 6 7 8 9 10; do sort /etc/services | wc -l; done >/dev/null; $prog deep40 $1 1000; sleep 1; $prog deep40 $1"
}

# kernel_at_least MAJOR MINOR: this kernel is that version or later.
kernel_at_least() {
	local maj min
	IFS=.- read -r maj min _ <<<"$(uname -r)"
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}

script() {
	local name ev n addr f=$here/expected/deep40.txt rounds=40
	local want_ev=syscalls:sys_enter_sched_getscheduler
	need_deferred
	# The system calls' parks copy the words a walk may use (sparse), as
	# all do; the samples' the whole stack, as where a CPU's working copy
	# is taken (USTITCH_PARK_WHOLE).
	local whole
	for name in sampled syscalls; do
		case $name in
		sampled) ev=(-e cpu-clock -F 999 -g) whole=1 ;;
		syscalls) ev=(-e syscalls:sys_enter_read -e "$want_ev" -O userstacktrace_delay) whole= ;;
		esac
		mkdir -p "$work/cache-$name"
		if ! USTITCH_CACHE_DIR=$work/cache-$name USTITCH_TEST_TABLE_DELAY=300:cfi-prog USTITCH_PARK_WHOLE=$whole \
			"$UST_USTITCH" record -v -b 8192 "${ev[@]}" \
			-o "$work/$name.dat" -- sh -c "$(script_cmd $rounds)" >/dev/null 2>"$work/$name.err"; then
			bad "$name: ustitch record failed: $(tail -3 "$work/$name.err")"
			continue
		fi
		report "$work/$name.dat" >"$work/$name.report"
		n=$(grep -c '^user stack unwind\|user_unwind_cookie:' "$work/$name.report")
		at_least "$name: stacks" "$n" 20
		# A frame with no object is an address in no file: none may be.
		# Samples' stacks on kernels that keep no VMAs between walks
		# (before 6.13) without BPF task_work are perf's own frame-pointer
		# callchain, which has such addresses where code uses rbp for data.
		addr=$(grep -E '^=>\*? 0x[0-9a-f]+$' "$work/$name.report" | head -3 | tr '\n' ' ')
		# A walk the recorder finished knows where the process's code
		# was though the process (sort, wc: a few milliseconds) was gone
		# before its maps could be read: its exec's and mmaps' records.
		local not_exec
		not_exec=$(grep -c 'walked on by the recorder.*no executable mapping>$' "$work/$name.report")
		if [ "$name" = sampled ] && grep -q 'user stacks: immediate (perf frame-pointer callchain)' "$work/$name.err"; then
			skip_part "$name: frames naming no object" "perf's frame-pointer callchain on this kernel, not ustitch's walk"
		elif [ "$name" = sampled ] && ! kernel_at_least 6 13; then
			# Before 6.13 a sample's interrupt and a system call's exit
			# are often refused the VMA lookup: a process gone before its
			# maps were read can keep a frame the recorder cannot place.
			skip_part "$name: frames naming no object (${addr:-none})" "kernels before 6.13 refuse VMA lookups in a sample's interrupt"
			skip_part "$name: stacks walked on by the recorder, then cut at an address in no executable mapping ($not_exec)" \
				"kernels before 6.13 refuse VMA lookups in a sample's interrupt and at an mmap's exit"
		else
			expect_eq "$name: frames naming no object" "${addr:-none}" none
			expect_eq "$name: stacks walked on by the recorder, then cut at an address in no executable mapping" \
				"$not_exec" 0
		fi
		[ "$name" = syscalls ] || continue
		awk -f "$here/cfi-chains.awk" "$work/$name.report" | awk -v e="${want_ev#*:}" '$1 == e' >"$work/$name.chains"
		expect_eq "$name: deep40's events" "$(wc -l <"$work/$name.chains")" $((2 * rounds))
		# Each chain: the expected frames from the top, all of them (and
		# the tail, or none), or fewer when the stack says it was cut.
		awk -v want="$(sed -n '/^frames:/,$p' "$f" | tail -n +2 | tr '\n' ';')" '
			BEGIN { nw = split(want, w, ";") - 1 }
			{ n = split($4, g, ";"); for (i = 1; i <= n && i <= nw; i++) if (g[i] != w[i]) break
			  if (i <= n && i <= nw) { print "differ: " $4; next }
			  if (n >= nw) full++; else part++ }
			END { print "full " full + 0 " part " part + 0 }' "$work/$name.chains" >"$work/$name.prefix"
		expect_eq "$name: deep40's chains that differ from the expected one" \
			"$(grep -c '^differ' "$work/$name.prefix")" 0
		grep '^differ' "$work/$name.prefix" | head -3 | sed 's/^/# /'
		# Both runs whole: the first one's walks parked at cfi-prog's
		# table, and the recorder walked them on once it was built.
		if ! expect_eq "$name: deep40's whole chains ($(tail -1 "$work/$name.prefix"))" \
			"$(tail -1 "$work/$name.prefix" | awk '{ print $2 }')" $((2 * rounds)); then
			awk '/sys_enter_sched_getscheduler:/ { want = 1; next }
				want && /user_unwind_cookie:/ { if ($0 !~ /complete/) { print; n = 3 } want = 0; next }
				n && /^=>/ { print; n-- }' "$work/$name.report" | head -8 | cut -c1-400 | sed 's/^/# /'
			# What the recorder said of its tables and parks.
			grep -E 'unwind tables|parked|could not|without' "$work/$name.err" | cut -c1-400 | sed 's/^/# /'
		fi
		at_least "$name: deep40's stacks finished by the recorder (the first run's)" "$(awk '
			/sys_enter_sched_getscheduler:/ { want = 1; next }
			want && /user_unwind_cookie:/ { if ($0 ~ /walked on by the recorder/) n++; want = 0 }
			END { print n + 0 }' "$work/$name.report")" $rounds
		# A part of a chain says why it ends.
		expect_eq "$name: deep40's stacks cut without a reason" "$(awk '
			/sys_enter_sched_getscheduler:/ { want = 1; next }
			want && /user_unwind_cookie:/ { if ($0 !~ /complete|cut short|truncated/) n++; want = 0 }
			END { print n + 0 }' "$work/$name.report")" 0
	done
	late_reader
}

# A recorder that reads a short command's records after it is gone (a
# slow guest behind a burst of sort's reads did, now and then) on a file
# system without file handles (9p: USTITCH_TEST_NO_HANDLE, by_handle=0):
# the exec record's file name finds the program, for its table and its
# mapping record.  Before, every stack ended at frame 0, "no longer exists".
late_reader() {
	local n whole
	mkdir -p "$work/cache-late"
	if ! USTITCH_CACHE_DIR=$work/cache-late USTITCH_TEST_NO_HANDLE=1 USTITCH_TEST_READ_DELAY=1500 \
		"$UST_USTITCH" record -q -e syscalls:sys_enter_sched_getscheduler -O userstacktrace_delay \
		-o "$work/late.dat" -- sh -c "$prog deep40 5" >/dev/null 2>"$work/late.err"; then
		bad "late reader: ustitch record failed: $(tail -3 "$work/late.err")"
		return
	fi
	report "$work/late.dat" -O ustitch:by_handle=0 >"$work/late.report"
	n=$(grep -c 'user_unwind_cookie:' "$work/late.report")
	whole=$(grep -c 'user_unwind_cookie:.*45 frames; complete' "$work/late.report")
	expect_eq "late reader: deep40's stacks" "$n" 5
	expect_eq "late reader: whole (45 frames, complete)" "$whole" 5
	expect_eq "late reader: frames of cfi_deep40 named" "$(grep -c '=> cfi_deep40+.* (cfi-prog)' "$work/late.report")" 5
	expect_eq "late reader: files not found" "$(grep -c 'no longer exists' "$work/late.report")" 0
}

# Hexadecimal in awk (Debian's awk is mawk: no strtonum).
HEX='function hex(s,    i, c, v) { v = 0; sub(/^0[xX]/, "", s); s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); if (!c) break; v = v * 16 + c - 1 } return v }'

# seg_delta OBJ: vaddr - offset of OBJ's executable segment, so that
# perf's addresses (object vaddrs) compare with ustitch's file offsets.
seg_delta() {
	readelf -lW "$1" 2>/dev/null | awk "$HEX"' $1 == "LOAD" && $7 ~ /E/ { printf "%d\n", hex($3) - hex($2); exit }'
}

perf_agree() {
	local s ev f n
	need_deferred
	command -v perf >/dev/null || skip_all "no perf"
	# Scenarios whose stack above the event fits perf's 8 KiB copy (see
	# README.md); perf 6.1 unwinds them all as gdb does.
	for s in leaf qsort bsearch sig-raise sig-thread thread plt plt-resolve deep40; do
		wanted "$s" "events, ustitch vs perf" "every stack frame for frame as perf's" || continue
		f=$here/expected/$s.txt
		ev=$(field "$f" event)
		if ! perf record -q -o "$work/$s.perf" --call-graph dwarf -e "$ev" -- "$prog" "$s" \
			>/dev/null 2>"$work/$s.perf.err"; then
			bad "$s: perf record failed: $(tail -3 "$work/$s.perf.err")"
			continue
		fi
		# One line per event: "obj@offset;..." with perf's vaddrs turned
		# into file offsets.
		perf script -i "$work/$s.perf" -F ip,sym,dso --no-inline 2>/dev/null |
		awk -v seg="$(for o in "$prog" "$UST_CFI_LIB" /lib/x86_64-linux-gnu/libc.so.6 \
				/lib64/ld-linux-x86-64.so.2; do
				r=$(readlink -f "$o"); echo "$(basename "$r")=$(seg_delta "$r")"; done | tr '\n' ' ')" '
			'"$HEX"'
			BEGIN { n = split(seg, a, " "); for (i = 1; i <= n; i++) { split(a[i], kv, "="); d[kv[1]] = kv[2] } }
			NF == 0 { if (c != "") print c (done ? "" : ";(perf did not reach the bottom)"); c = ""; done = 0; next }
			done { next }
			{ o = $NF; gsub(/[()]/, "", o); sub(/.*\//, "", o)
			  c = c (c == "" ? "" : ";") o "@" sprintf("%x", hex($1) - d[o]) "@" $2
			  if ($2 == "__libc_start_call_main" || $2 == "clone3") done = 1 }
			END { if (c != "") print c (done ? "" : ";(perf did not reach the bottom)") }' >"$work/$s.perf.chains"
		record "$s" "$ev" "$prog" "$s" || continue
		awk '/^=>\*? / && / <[0-9a-f]+> : / {
			o = $0; sub(/^.*\(/, "", o); sub(/\).*$/, "", o)
			x = $0; sub(/^.* </, "", x); sub(/>.*$/, "", x); sub(/^0+/, "", x)
			f = $2; sub(/\+0x[0-9a-f]+$/, "", f)
			c = c (c == "" ? "" : ";") o "@" x "@" f; next }
		     /user_unwind_cookie:/ { if (c != "") print c; c = ""; next }
		     END { if (c != "") print c }' <(report "$work/$s.dat" -O ustitch:raw=1) >"$work/$s.ust.chains"
		n=$(wc -l <"$work/$s.perf.chains")
		expect_eq "$s: events, ustitch vs perf" "$(wc -l <"$work/$s.ust.chains")" "$n"
		# Frame by frame: same object, same address (perf reports a
		# caller's return address minus one, ustitch the address itself),
		# down to perf's __libc_start_call_main or clone3.  Frames below
		# (__libc_start_main, _start) are left to live-cfi-chains.  The
		# frame a signal interrupted (the one below __restore_rt) is
		# compared by function only: perf and ustitch record separate
		# runs, and an asynchronous signal (sig-thread) lands at any
		# instruction of cfi_spin's loop.
		paste -d' ' "$work/$s.ust.chains" "$work/$s.perf.chains" | awk -v s="$s" "$HEX"'
			{ nu = split($1, u, ";"); np = split($2, p, ";"); ok = 1; prev = ""
			  for (i = 1; i <= np; i++) {
				if (i > nu) { ok = 0; break }
				split(u[i], a, "@"); split(p[i], b, "@")
				if (a[1] != b[1]) { ok = 0; break }
				if (i > 1 && prev == "__restore_rt") {
					if (a[3] != b[3]) { ok = 0; break }
					prev = a[3]; continue
				}
				prev = a[3]	# perf names no symbol in stripped libc
				ua = hex(a[2]); pa = hex(b[2])
				if (ua != pa && ua - 1 != pa) { ok = 0; break }
			  }
			  if (ok) same++; else if (shown++ < 2) print "  differ at frame " i ":\n    ustitch " $1 "\n    perf    " $2 }
			END { print "same " same + 0 "/" NR }' >"$work/$s.cmp"
		if [ "$(tail -1 "$work/$s.cmp")" = "same $n/$n" ] && [ "$n" -gt 0 ]; then
			ok "$s: $n events, every stack frame for frame as perf's"
		else
			bad "$s: $(tail -1 "$work/$s.cmp") stacks as perf's"
			head -n -1 "$work/$s.cmp"
		fi
	done
}

gdb_verify() {
	local f s ev sc want got m cont
	for f in "$here"/expected/*.txt; do
		s=$(basename "$f" .txt)
		ev=$(field "$f" event)
		sc=${ev#syscalls:sys_enter_}
		wanted "$s" "$sc calls under gdb" "gdb's backtraces are expected/$s.txt" || continue
		if [[ " $static_skip " == *" $s "* ]]; then
			skip_part "$tag$s" "$(static_why "$s")"
			continue
		fi
		want=$(field "$f" count)
		cont=()
		for _ in $(seq $((want * 2 + 1))); do cont+=(-ex continue); done
		gdb -nx -batch -ex 'set pagination off' -ex 'set backtrace past-main on' \
			-ex 'set backtrace limit 400' -ex 'set debuginfod enabled off' \
			-x "$here/gdb-frames.py" -ex "catch syscall $sc" \
			-ex 'handle SIGUSR1 nostop noprint pass' -ex run "${cont[@]}" \
			--args "$prog" "$s" >"$work/$tag$s.gdb" 2>&1
		# gdb stops at the entry and at the return of each call: the
		# stack is the same at both.
		s=$tag$s
		awk '/^gdb-chain: / { $1 = ""; sub(/^ /, ""); gsub(/ /, ";"); if (++k % 2) print "gdb", "-", "-", $0 }' \
			"$work/$s.gdb" >"$work/$s.gdbchains"
		got=$(wc -l <"$work/$s.gdbchains")
		expect_eq "$s: $sc calls under gdb" "$got" "$want"
		awk -v gdb=1 -f "$here/cfi-match.awk" "$f" "$work/$s.gdbchains" >"$work/$s.match"
		m=$(tail -1 "$work/$s.match")
		[ "$m" = "match $want/$want" ] && ok "$s: gdb's backtraces are $(basename "$f")" ||
			{ bad "$s: gdb's backtraces differ ($m)"; head -n -1 "$work/$s.match" | head -40; }
	done
}

# The programs must have no frame-pointer chain: no `mov %rsp,%rbp` in any
# of their own functions (crt's __do_global_dtors_aux aside).
nofp() {
	local o bad_fns
	for o in "$prog" "$UST_CFI_LIB" ${UST_CFI_DL:-} $statics; do
		bad_fns=$(objdump -d --no-show-raw-insn "$o" | awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 }
			/mov +%rsp,%rbp/ && fn ~ /^<(cfi_|sc_|main)/ { print fn }' | sort -u | tr '\n' ' ')
		expect_eq "$(basename "$o"): functions with a frame pointer" "${bad_fns:-none}" none
	done
}

# Static programs: .eh_frame found by its section (no .eh_frame_hdr, no
# PT_GNU_EH_FRAME in an ET_EXEC), the table loaded at exec though there
# is no PT_INTERP or DT_NEEDED, frames named by file offset in an ET_EXEC.
# The chains (plt's calls are direct, its chain the same), then samples
# of deep40: every stack reaches _start, marked complete, and one whose
# top is a frame of the chain is the chain from there down, whole.
static() {
	local p f=$here/expected/deep40.txt n bad_n
	[ -n "$statics" ] || skip_all "no static programs: the toolchain cannot link -static (libc.a missing)"
	need_deferred
	export USTITCH_CACHE_DIR=	# every table built while recording
	for p in $statics; do
		prog=$p tag=$(basename "$p"): static_skip='plt-resolve dlopen'
		expect_eq "$tag .eh_frame_hdr sections" "$(readelf -SW "$p" | grep -c ' \.eh_frame_hdr ')" \
			"$([ "${p%-pie}" = "$p" ] && echo 0 || echo 1)"
		chains
		if ! "$UST_USTITCH" record -q -b 8192 -e cpu-clock -F 999 -g \
			-o "$work/$tag-sampled.dat" -- "$p" deep40 300000 >/dev/null 2>"$work/$tag-sampled.err"; then
			bad "$tag sampled: ustitch record failed: $(tail -3 "$work/$tag-sampled.err")"
			continue
		fi
		report "$work/$tag-sampled.dat" | awk -f "$here/cfi-chains.awk" |
			awk '$4 != "-"' >"$work/$tag-sampled.chains"
		n=$(wc -l <"$work/$tag-sampled.chains")
		at_least "$tag sampled: stacks" "$n" 100
		awk -v want="$(sed -n '/^frames:/,$p' "$f" | tail -n +2 | tr '\n' ';')__libc_start_main;_start;" '
			BEGIN { nw = split(want, w, ";") - 1 }
			{ n = split($4, g, ";")
			  # _init and _fini (crti.o) have no CFI nor frame pointer:
			  # a sample there (at exit, in the page fault of the _fini
			  # page) has nothing to walk by, for any unwinder.
			  if ($3 != "complete" && (g[n] == "_fini" || g[n] == "_init")) { nocfi++; next }
			  if ($3 != "complete" || g[n] != "_start") { print "not whole: " $3 " " $4; next }
			  for (k = 1; k <= nw && w[k] != g[1]; k++) ;
			  if (k > nw) next	# not in the chain: startup, exit
			  if (n != nw - k + 1) { print "not the chain: " $4; next }
			  for (i = 1; i <= n; i++)
				if (g[i] != w[k + i - 1] && !(w[k + i - 1] == "__libc_start_main" && g[i] == "__libc_start_main_impl")) {
					print "not the chain: " $4; next }
			  inchain++ }
			END { if (nocfi) print "# in _init or _fini (no CFI): " nocfi
			      print "in the chain " inchain + 0 }' "$work/$tag-sampled.chains" >"$work/$tag-sampled.check"
		grep '^# ' "$work/$tag-sampled.check" || true
		bad_n=$(grep -c '^not' "$work/$tag-sampled.check")
		expect_eq "$tag sampled: stacks not whole to _start, or not deep40's chain" "$bad_n" 0
		grep '^not' "$work/$tag-sampled.check" | head -3 | cut -c1-300 | sed 's/^/# /'
		at_least "$tag sampled: stacks in deep40's chain ($(tail -1 "$work/$tag-sampled.check"))" \
			"$(tail -1 "$work/$tag-sampled.check" | awk '{ print $NF }')" 20
	done
}

case $mode in
chains) nofp; chains ;;
debian) debian ;;
perf-agree) perf_agree ;;
gdb)
	nofp
	gdb_verify
	for p in $statics; do
		prog=$p tag=$(basename "$p"): static_skip='plt-resolve dlopen' gdb_verify
	done
	;;
script) script ;;
static) static ;;
esac
finish
