#!/bin/bash
# Debian 12 packages ustitch needs to build, test and demo.  Sourced by
# demo.sh and run-tests.sh; safe to run again.
set -e
USTITCH_PACKAGES=(
	meson ninja-build pkg-config gcc clang-14 clang
	libtraceevent-dev libtracecmd-dev libtracefs-dev libelf-dev zlib1g-dev libdw-dev libdebuginfod-dev debuginfod
	libcmocka-dev trace-cmd elfutils binutils llvm-14 libclang-rt-14-dev libc6-dbg bc time libbpf-dev bpftool
	qemu-system-x86 busybox-static jq liblttng-ust-dev lttng-tools babeltrace2 libbabeltrace2-dev
	iproute2 linux-perf sqlite3 g++ xz-utils python3 libiberty-dev libxml2-utils golang-go
	chromium netpbm
)
missing=()
for p in "${USTITCH_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "ustitch: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# tracefs is where the live tests and the recorder work.
if ! mountpoint -q /sys/kernel/tracing 2>/dev/null; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
