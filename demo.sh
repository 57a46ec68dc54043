#!/bin/bash
# The demo: install the Debian packages, build, install the plugin where
# trace-cmd finds it, then show `trace-cmd report` stitching deferred user
# stacks.  Run as root on Debian 12:  bash demo.sh
set -eu
cd "$(dirname "$0")"
bash tests/install-deps.sh
plugindir=$(pkg-config --variable=libdir libtraceevent)/traceevent/plugins
meson setup build-demo -Dtests=true -Dplugindir="$plugindir" --reconfigure >/dev/null 2>&1 ||
	meson setup build-demo -Dtests=true -Dplugindir="$plugindir" >/dev/null
ninja -C build-demo >/dev/null
meson install -C build-demo --no-rebuild >/dev/null
echo "installed $plugindir/plugin_ustitch.so"

# A trace as a kernel with deferred user stacks writes it, generated from
# the ABI in kernel-bits/: two events of one system call share a cookie,
# their stack arrives later on the other CPU.
prog=$PWD/build-demo/tests/progs/ust-testprog
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
ret() { # FUNC [CALLEE]: the return address after FUNC's call (of CALLEE), as FUNC+0xOFF
	local a sz
	read -r a sz < <(nm -S "$prog" | awk -v f="$1" '$4 == f { print $1, $2 }')
	objdump -d --no-show-raw-insn --start-address=0x$a --stop-address=$((16#$a + 16#$sz)) "$prog" |
		awk -v f="$1" -v a=$((16#$a)) -v c="call.*${2:-}" '$0 ~ c { hit = 1; next } hit && /^ *[0-9a-f]+:/ {
			sub(":", "", $1); printf "%s+0x%x\n", f, ("0x" $1) + 0 - a; exit }'
}
mkdir -p demo-out
cat >demo-out/demo.spec <<SPEC
cpus 2
cmdline 4242 ust-testprog
mapping cpu=1 ts=1000 pid=4242 path=$prog
event cpu=0 ts=1000000 pid=4242 sys=raw_syscalls name=sys_enter id=110
event cpu=0 ts=1000100 pid=4242 sys=syscalls name=sys_enter_getppid __syscall_nr=110
cookie cpu=0 ts=1000100 pid=4242 cookie=0x9
stack cpu=1 ts=1200000 pid=4242 cookie=0x9 frames=$libc:getppid+0x7,$prog:$(ret ust_c),$prog:$(ret ust_b),$prog:$(ret ust_a),$prog:$(ret main ust_a)
SPEC
./build-demo/python-free-tools/ust-mktrace demo-out/demo.spec demo-out/trace.dat
echo
echo "== trace-cmd report (trace-cmd's own output, no plugin)"
trace-cmd report -N demo-out/trace.dat 2>/dev/null | tail -n +2
echo
echo "== trace-cmd report -O ustitch:lines=1 (with plugin_ustitch.so)"
trace-cmd report -O ustitch:lines=1 demo-out/trace.dat
