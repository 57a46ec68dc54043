#!/bin/bash
# Names as perf prints them: C++ and Rust symbols demangled in the text and
# the folded output, raw with -O ustitch:demangle=0.  A trace made by
# ust-mktrace (a sample, its cookie and its stack per task) of two test
# programs: ust-testprog-cxx (g++ -O2: a function template, a class method,
# a lambda) and ust-testprog-rustnames (C functions named as rustc names
# them: legacy "_ZN...17h<hash>E" and v0 "_R..." names, one with a ';').
# Frames are given by mangled name; the expected names are written out.
set -u
. "$(dirname "$0")/report-lib.sh"
[ -n "${UST_TESTPROG_CXX:-}" ] || { echo "skip: no C++ compiler (Debian: g++)"; exit 77; }
work=$(mktemp -d /tmp/ustitch-demangle.XXXXXX)
trap '[ -n "${UST_KEEP:-}" ] || rm -rf "$work"' EXIT

cx=$UST_TESTPROG_CXX rs=$UST_TESTPROG_RUSTNAMES
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
# The mangled symbols, as g++ and rustc spell them.
m_lambda=_ZZN2ns1K4spinEiENKUliE_clEi m_spin=_ZN2ns1K4spinEi m_twice=_ZN2ns5twiceIiEET_S1_
m_work=_ZN7mycrate6module4work17h0123456789abcdefE
m_run=_RNvMNtCs4fqI2P2rA04_7mycrate6moduleNtB2_5Thing3run
m_f=_RNvXNtCs1234_7mycrate6moduleAhj4_NtB2_5Trait1f
# Return addresses (FUNC+0xOFF) whatever the compiler made of them.
ip=$(ret_after "$libc" getppid 'syscall')
r_lambda=$(ret_after "$cx" $m_lambda 'call.*getppid')
r_spin=$(ret_after "$cx" $m_spin "call.*$m_lambda")
r_twice=$(ret_after "$cx" $m_twice "call.*$m_spin")
r_cmain=$(ret_after "$cx" main "call.*$m_twice")
r_f=$(ret_after "$rs" $m_f 'call.*getppid')
r_run=$(ret_after "$rs" $m_run "call.*$m_f")
r_work=$(ret_after "$rs" $m_work "call.*$m_run")
r_rmain=$(ret_after "$rs" main "call.*$m_work")
off() { echo "${1##*+}"; }

cat >"$work/spec" <<EOF
cpus 1
cmdline 100 ust-testprog-cx
cmdline 101 ust-testprog-ru
mapping cpu=0 ts=900000 pid=100 path=$cx
mapping cpu=0 ts=900001 pid=101 path=$rs
event cpu=0 ts=1000000 pid=100 sys=ustitch name=sample ip=0x1000 period=1000 event=cpu-clock mode=2 user_stack=1 kernel_frames=0
cookie cpu=0 ts=1000000 pid=100 cookie=0x9
stack cpu=0 ts=1100000 pid=100 cookie=0x9 frames=$libc:$ip,$cx:$r_lambda,$cx:$r_spin,$cx:$r_twice,$cx:$r_cmain
event cpu=0 ts=2000000 pid=101 sys=ustitch name=sample ip=0x1000 period=1000 event=cpu-clock mode=2 user_stack=1 kernel_frames=0
cookie cpu=0 ts=2000000 pid=101 cookie=0xb
stack cpu=0 ts=2100000 pid=101 cookie=0xb frames=$libc:$ip,$rs:$r_f,$rs:$r_run,$rs:$r_work,$rs:$r_rmain
EOF
if ! "$UST_MKTRACE" "$work/spec" "$work/trace.dat" 2>"$work/mk.err"; then
	echo "ust-mktrace failed:"; cat "$work/mk.err"; exit 1
fi

mapping() {	# mapping PID COMM BIN: its user_mapping line
	printf ' %s-%s   [000]     0.000900: user_mapping:         dev=%s ino=%s build_id=%s path=%s\n' \
		"$2" "$1" "$(stat -L -c %Hd:%Ld "$3")" "$(stat -L -c %i "$3")" \
		"$(readelf -n "$3" | awk '/Build ID/ { print $3 }')" "$3"
}
# expect_report F0 F1 F2 F3 F4 (the C++ stack) R0...R4 (the Rust one), then
# the two folded lines.
expect_report() {
	mapping 100 ust-testprog-cx "$cx"
	mapping 101 ust-testprog-ru "$rs"
	cat <<EOF
 ust-testprog-cx-100   [000]     0.001000: sample:               cpu-clock ip=0x1000 period=1000 user user_stack=deferred
 ust-testprog-cx-100   [000]     0.001000: user_unwind_cookie:   cookie=9 <user stack unwind, 5 frames>
=> $1 (libc.so.6)
=> $2 (ust-testprog-cxx)
=> $3 (ust-testprog-cxx)
=> $4 (ust-testprog-cxx)
=> $5 (ust-testprog-cxx)
 ust-testprog-cx-100   [000]     0.001100: user_unwind_stack:    cookie=9 <user stack unwind, 5 frames, shown at 1 event>
 ust-testprog-ru-101   [000]     0.002000: sample:               cpu-clock ip=0x1000 period=1000 user user_stack=deferred
 ust-testprog-ru-101   [000]     0.002000: user_unwind_cookie:   cookie=b <user stack unwind, 5 frames>
=> $6 (libc.so.6)
=> $7 (ust-testprog-rustnames)
=> $8 (ust-testprog-rustnames)
=> $9 (ust-testprog-rustnames)
=> ${10} (ust-testprog-rustnames)
 ust-testprog-ru-101   [000]     0.002100: user_unwind_stack:    cookie=b <user stack unwind, 5 frames, shown at 1 event>
# ustitch folded stacks: 2 samples, 2 distinct stacks
${11}
${12}
EOF
}

# Demangled by default: the text, and the folded stacks (spaces kept, the
# ';' of "[u8; 4]" made ':' as stackcollapse-perf.pl and inferno make it).
{ echo "cpus=1"; expect_report "$ip" \
	"ns::K::spin(int)::{lambda(int)#1}::operator()(int) const+$(off "$r_lambda")" \
	"ns::K::spin(int)+$(off "$r_spin")" \
	"int ns::twice<int>(int)+$(off "$r_twice")" \
	"$r_cmain" \
	"$ip" \
	"<[u8; 4] as mycrate::module::Trait>::f+$(off "$r_f")" \
	"<mycrate::module::Thing>::run+$(off "$r_run")" \
	"mycrate::module::work+$(off "$r_work")" \
	"$r_rmain" \
	"ust-testprog-cx;main;int ns::twice<int>(int);ns::K::spin(int);ns::K::spin(int)::{lambda(int)#1}::operator()(int) const;getppid 1" \
	"ust-testprog-ru;main;mycrate::module::work;<mycrate::module::Thing>::run;<[u8: 4] as mycrate::module::Trait>::f;getppid 1"
} >"$work/expected"
if ust_report "$work" "$work/out" "$work/err" -O ustitch:folded=1 trace.dat; then
	same "demangled: C++ and Rust names in the text and the folded stacks" "$work/out"
	[ -s "$work/err" ] && { bad "demangled: said on stderr"; cat "$work/err"; }
else
	bad "demangled: the report failed"
fi

# -O ustitch:demangle=0: the names as the symbol tables spell them.
{ echo "cpus=1"; expect_report "$ip" "$r_lambda" "$r_spin" "$r_twice" "$r_cmain" \
	"$ip" "$r_f" "$r_run" "$r_work" "$r_rmain" \
	"ust-testprog-cx;main;$m_twice;$m_spin;$m_lambda;getppid 1" \
	"ust-testprog-ru;main;$m_work;$m_run;$m_f;getppid 1"
} >"$work/expected"
if ust_report "$work" "$work/out" "$work/err" -O ustitch:demangle=0 -O ustitch:folded=1 trace.dat; then
	same "demangle=0: raw names in the text and the folded stacks" "$work/out"
	[ -s "$work/err" ] && { bad "demangle=0: said on stderr"; cat "$work/err"; }
else
	bad "demangle=0: the report failed"
fi

# A value it does not take: said once, the default (demangled) kept.
echo "ustitch: -O ustitch:demangle=x: not a boolean (demangle takes 1 or 0)" >"$work/expected"
if ust_report "$work" "$work/out" "$work/err" -O ustitch:demangle=x trace.dat; then
	same "demangle=x: one line naming it" "$work/err"
	grep -qF "=> ns::K::spin(int)+$(off "$r_spin") (ust-testprog-cxx)" "$work/out" &&
		ok "demangle=x: names demangled" || bad "demangle=x: names not demangled"
else
	bad "demangle=x: the report failed"
fi
[ $fails -eq 0 ] || exit 1
