#!/bin/bash
# The demo: install the Debian packages, build, install the plugin where
# trace-cmd finds it, record a small program with `ustitch record` on this
# kernel and show `trace-cmd report` stitching its deferred user stacks.
# Run as root on Debian 12:  bash demo.sh
set -eu
cd "$(dirname "$0")"
bash tests/install-deps.sh
plugindir=$(pkg-config --variable=libdir libtraceevent)/traceevent/plugins
if [ -d build-demo ]; then
	meson setup build-demo --reconfigure -Dplugindir="$plugindir" >/dev/null
else
	meson setup build-demo -Dplugindir="$plugindir" >/dev/null
fi
if ! ninja -C build-demo >build-demo/demo-build.log 2>&1; then
	grep -A12 -m1 '^FAILED' build-demo/demo-build.log || tail -20 build-demo/demo-build.log
	echo "demo.sh: building failed (the whole log: build-demo/demo-build.log)"
	exit 1
fi
meson install -C build-demo --no-rebuild --quiet
echo "installed: $plugindir/plugin_ustitch.so and $(command -v ustitch)"
echo
ustitch probe
echo

mkdir -p demo-out
echo "== ustitch record -e syscalls:sys_enter_write -O userstacktrace_delay -- ust-demo 2"
ustitch record -o demo-out/trace.dat -e syscalls:sys_enter_write -O userstacktrace_delay \
	-- build-demo/python-free-tools/ust-demo 2 >/dev/null
echo
echo "== trace-cmd report -N (no plugins: trace-cmd 3.1.6 alone)"
trace-cmd report -N demo-out/trace.dat 2>/dev/null | grep -m3 'user_unwind' | cut -c1-160
echo
echo "== trace-cmd report -O ustitch:lines=1"
trace-cmd report -O ustitch:lines=1 demo-out/trace.dat | head -40
