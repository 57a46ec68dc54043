#!/bin/busybox sh
# /init of the vm lane's initramfs (busybox only).  It turns the bare
# kernel into "the host's own userland on a normal kernel": 9p modules,
# the host root read-only, the scratch share writable, then
# guest-run.sh inside a chroot.  Whatever happens, it ends with a power-off:
# QEMU runs with -no-reboot, so the host never waits for its time limit
# because of a stuck guest.
/bin/busybox --install -s /bin
export PATH=/bin

say() { echo "ustitch-vm: $*"; }
die() {
	say "$*"
	# The host reads this instead of a missing result list.
	[ -d /scratch/results ] && echo "$*" >/scratch/results/init-error
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 10
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

# The module list is in load order (dependencies first); see vm-lane.sh.
while read -r m; do
	insmod "/modules/$m" || die "insmod $m failed"
done </modules/order

# msize: larger 9p messages cut the round trips of exec and reads, which
# dominate under TCG.
p9="trans=virtio,version=9p2000.L,msize=262144"
mkdir -p /host /scratch
mount -t 9p -o "$p9" scratch /scratch || die "cannot mount the scratch share"
# The host files do not change during the run: let the guest cache them.
mount -t 9p -o "$p9,cache=loose,ro" hostroot /host || die "cannot mount the host root"

# Paths of the run (source dir, build dir): written by the host.
# (A missing file would end this shell: "." is a special built-in.)
[ -r /scratch/job/env ] || die "no /scratch/job/env"
# shellcheck source=/dev/null
. /scratch/job/env

# The guest's own kernel interfaces over the host's, which the 9p share
# shows read-only.  /tmp, /run and /var/tmp are tmpfs: the chroot's only
# writable places besides the scratch share, mounted at /tmp/vm-scratch.
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
# What udev would add and devtmpfs has not: bash's <(...) needs /dev/fd.
ln -s /proc/self/fd /host/dev/fd
ln -s fd/0 /host/dev/stdin
ln -s fd/1 /host/dev/stdout
ln -s fd/2 /host/dev/stderr
mount -t devpts devpts /host/dev/pts
mount -t tmpfs tmp /host/dev/shm
mount -t tracefs nodev /host/sys/kernel/tracing
mount -t debugfs nodev /host/sys/kernel/debug 2>/dev/null
mount -t bpf bpf /host/sys/fs/bpf
# A source or build tree under one of them (a clone in /tmp) would vanish
# under its tmpfs: hold it aside first, and put it back on top.
keep() {	# keep DIR N: bind DIR of the host root at /keep/N
	case $1 in
	/tmp/* | /run/* | /var/tmp/*)
		mkdir -p "/keep/$2"
		mount --bind "/host$1" "/keep/$2" || die "cannot hold $1"
		;;
	esac
}
restore() {	# restore DIR N
	[ -d "/keep/$2" ] || return 0
	mkdir -p "/host$1" && mount --bind "/keep/$2" "/host$1" || die "cannot put back $1"
}
keep "$UST_VM_SRC" src
keep "$UST_VM_BUILD" build
mount -t tmpfs tmp /host/tmp
mount -t tmpfs tmp /host/run
mount -t tmpfs tmp /host/var/tmp
restore "$UST_VM_SRC" src
restore "$UST_VM_BUILD" build
mkdir -p /host/tmp/vm-scratch
mount --bind /scratch /host/tmp/vm-scratch

say "running the guest tests"
chroot /host /bin/bash "$UST_VM_SRC/tests/vm/guest-run.sh" /tmp/vm-scratch \
	|| say "guest-run.sh exited with $?"
sync
umount /host/tmp/vm-scratch 2>/dev/null
umount /scratch 2>/dev/null
poweroff -f
echo o >/proc/sysrq-trigger
sleep 10
