#!/bin/bash
# The vm lane: the project's live tests on a normal distribution kernel.
#
# This machine's kernel blocks the function tracer's files, fentry and more
# (see the project notes), and users run other kernels than this one, so we
# boot Debian's own kernel packages under QEMU (TCG: /dev/kvm here cannot
# run ordinary kernels), with a busybox initramfs made at run time.  The
# guest sees the host's root read-only over 9p, so it runs the very binaries
# of this build tree; results come back through a writable 9p share.
#
#   vm-lane.sh [--tap] [--kernel NAME] SOURCE-DIR BUILD-DIR
#   vm-lane.sh --check SOURCE-DIR BUILD-DIR
#
# NAME (default 6.12), each the newest package of its line:
#   6.1   Debian 12's own kernel, linux-image-6.1.0-N-amd64-unsigned
#   6.12  bookworm's linux-image-6.12.*+deb12-amd64-unsigned
#   7.3   trixie-backports' linux-binary-7.3.*+deb13-amd64 and its
#         linux-modules-*: fetched through an apt configuration of the
#         lane's own (in the cache directory), the host's sources untouched
#   7.3-deferred
#         built here: trixie-backports' linux-source-7.3 with the ftrace
#         deferred-unwind series (kernel-bits/patches/7.3/*.patch) and a
#         trimmed configuration (kernel-bits/patches/guest.config, no
#         modules), kept in the cache by (source version, patches,
#         configuration); a cold build takes some minutes (its time is said)
#
# What runs in the guest: tests/vm/guest-tests.txt (see there), the lines
# meant for NAME.  The whole list, every kernel's lines, is checked on the
# host before anything is installed or booted: a malformed line, a kernel
# the lane does not know, or a name no test, benchmark or guest script of
# this build has fails the lane (--check does only that).  Output is one line per guest test, TAP with --tap (meson
# then shows each guest test).  Skipped (exit 77, or a TAP skip plan) only
# when QEMU, busybox-static, jq or the kernel package cannot be installed
# (missing packages are installed when we are root).
#
# Environment:
#   UST_VM_CACHE       where the unpacked kernels are kept (/var/cache/ustitch-vm
#                      if writable, else BUILD-DIR/tests/vm/kernel-cache)
#   UST_VM_KERNEL_PKG  a kernel image package name instead of the newest
#   UST_VM_TIME_LIMIT  seconds before QEMU is killed (default 2040: under
#                      meson's 2100, so that partial results still print)
#   UST_VM_TESTS       the guest test list (default tests/vm/guest-tests.txt)
#   UST_VM_TIME_FACTOR a meson test's timeout is multiplied by this in the
#                      guest: code runs several times slower under TCG (4)
#   UST_VM_WORK        the lane's directory (BUILD-DIR/tests/vm/lane-NAME):
#                      two lanes of one kernel at once need two
#   UST_*              passed on to the guest's script tests
set -u

tap=0 kname=6.12 check_only=0 kbuild=
while (($#)); do
	case $1 in
	--tap) tap=1 ;;
	--check) check_only=1 ;;
	--kernel) kname=${2:-}; shift ;;
	*) break ;;
	esac
	shift
done
if [ $# -ne 2 ]; then
	echo "usage: $0 [--tap] [--kernel 6.1|6.12|7.3|7.3-deferred] SOURCE-DIR BUILD-DIR" >&2
	echo "       $0 --check SOURCE-DIR BUILD-DIR" >&2
	exit 2
fi
src=$(realpath "$1")
build=$(realpath "$2")
# Shared by all build trees when we may write there, else per build tree.
cache=${UST_VM_CACHE:-}
if [ -z "$cache" ]; then
	cache=/var/cache/ustitch-vm
	{ mkdir -p "$cache" && [ -w "$cache" ]; } 2>/dev/null || cache=$build/tests/vm/kernel-cache
fi
limit=${UST_VM_TIME_LIMIT:-2040}
factor=${UST_VM_TIME_FACTOR:-4}
list=${UST_VM_TESTS:-$src/tests/vm/guest-tests.txt}
# A relative list is looked for here, then in the source tree (the lists
# name themselves as bench/perf-defer/vm-7.3.txt).
if ! [ -e "$list" ] && [ "${list:0:1}" != / ] && [ -e "$src/$list" ]; then
	list=$src/$list
fi
work=${UST_VM_WORK:-$build/tests/vm/lane-$kname}
lane_t0=$(date +%s)

# The kernel lines: the image package's name (a regex), where apt finds it
# (the host's sources, or trixie-backports), and the modules the guest's
# /init loads (their dependencies come too; a leading ? is for a module the
# kernel may have built in).
case $kname in
6.1)
	kre='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$'
	ksuite=host
	# virtio_pci is a module here: without it 9p finds no channel.
	modules=('?virtio_pci' 9p 9pnet_virtio)
	;;
6.12)
	kre='^linux-image-6\.12\.[0-9.]+\+deb12-amd64-unsigned$'
	ksuite=host
	modules=('?virtio_pci' 9p 9pnet_virtio)
	;;
7.3)
	kre='^linux-binary-7\.3\.[0-9.]+\+deb13-amd64$'
	ksuite=trixie-backports
	modules=('?virtio_pci' 9p 9pnet_virtio)
	;;
7.3-deferred)
	# Built here from this source package (build_kernel below).
	kre='^linux-source-7\.3$'
	ksuite=trixie-backports
	kbuild=$src/kernel-bits/patches
	modules=()
	;;
*)
	echo "$0: unknown kernel '$kname' (6.1, 6.12, 7.3 or 7.3-deferred)" >&2
	exit 2
	;;
esac

# In TAP mode everything that is not a test line is a "#" comment.
note() {
	if ((tap)); then echo "# $*"; else echo "vm-lane: $*"; fi
}
skip() {
	if ((tap)); then
		echo "1..0 # SKIP $*"
		exit 0	# meson counts a TAP test that exits non-zero as an error
	fi
	echo "vm-lane: skipped: $*"
	exit 77
}
bail() {
	if ((tap)); then echo "Bail out! $*"; else echo "vm-lane: error: $*"; fi
	exit 1
}

# ---- the list, checked before anything else ----------------------------

kernels=(6.1 6.12 7.3 7.3-deferred)
# check_list: every line of $list, whatever its kernels, is well formed and
# names something this build has; each problem is said (file:line), and
# the count returned.  Lines meant for other kernels are checked too: a
# typo must not wait for the lane that runs it.
check_list() {
	local kind name rest tok k ks lineno=0 errs=0 tests benches
	err() { note "$list:$lineno: $*"; errs=$((errs + 1)); }
	[ -r "$list" ] || { note "cannot read the test list $list"; return 1; }
	command -v jq >/dev/null || { note "jq is needed to check $list"; return 1; }
	tests=$(jq -r '.[].name' "$build/meson-info/intro-tests.json" 2>/dev/null) ||
		{ note "no $build/meson-info/intro-tests.json: not a meson build directory"; return 1; }
	benches=$(jq -r '.[].name' "$build/meson-info/intro-benchmarks.json" 2>/dev/null)
	while read -r kind name rest; do
		lineno=$((lineno + 1))
		[ -z "$kind" ] || [ "${kind:0:1}" = "#" ] && continue
		if [ -z "$name" ] || [ "${name%%=*}" != "$name" ]; then
			err "$kind: no test name"
			continue
		fi
		case $kind in
		meson) grep -qxF -- "$name" <<<"$tests" || err "no meson test '$name' in this build" ;;
		bench) grep -qxF -- "$name" <<<"$benches" || err "no benchmark '$name' in this build" ;;
		script) [ -r "$src/tests/vm/guest/$name.sh" ] || err "no guest script tests/vm/guest/$name.sh" ;;
		*) err "'$kind' is not meson, bench or script" ;;
		esac
		read -ra toks <<<"${rest%%#*}"
		for tok in "${toks[@]}"; do
			case $tok in
			timeout=*)
				[[ ${tok#timeout=} =~ ^[1-9][0-9]*$ ]] || err "$name: '$tok' is not a number of seconds"
				;;
			on=*)
				ks=${tok#on=}
				[ -n "$ks" ] || err "$name: 'on=' names no kernel"
				for k in ${ks//,/ }; do
					[[ " ${kernels[*]} " == *" $k "* ]] ||
						err "$name: '$tok': the lane knows no kernel '$k' (${kernels[*]})"
				done
				;;
			[A-Za-z_]*=*)
				[[ ${tok%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || err "$name: '$tok' is not VAR=VALUE"
				;;
			*) err "$name: '$tok' is not VAR=VALUE, on=KERNELS or timeout=SECONDS" ;;
			esac
		done
	done <"$list"
	return $((errs > 255 ? 255 : errs))
}

# ---- what the host needs ------------------------------------------------

# Installs missing packages when we may (root, apt): the lane must run in
# CI; only a machine that cannot install them skips it.
need_pkgs() {	# need_pkgs PACKAGE...
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
	note "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >"$work.apt.log" 2>&1 && return 0
	# A fresh container may have no package lists yet.
	apt-get update -qq >>"$work.apt.log" 2>&1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >>"$work.apt.log" 2>&1
}

mkdir -p "$(dirname "$work")"
if ((check_only)); then
	tap=0
	check_list || { echo "vm-lane: $list: $? problem(s)"; exit 1; }
	echo "vm-lane: $list: every line is well formed and names a test of this build"
	exit 0
fi
need_pkgs jq || skip "cannot install jq (see $work.apt.log)"
check_list || bail "$list: $? problem(s) (above); nothing was booted"

need_pkgs qemu-system-x86 busybox-static jq ||
	skip "cannot install qemu-system-x86, busybox-static and jq (see $work.apt.log)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
# The initramfs has no libraries: its busybox must be the static one.
busybox=/bin/busybox
if ! [ -x "$busybox" ] || readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
	skip "$busybox is not busybox-static"
fi

# ---- the kernel: Debian's own packages, unpacked into the cache ---------

# apt for the kernel's suite: the host's own configuration, or one of the
# lane's own for trixie-backports (in the cache; the host's sources, lists
# and archives untouched), naming the archive the host's sources name.
aptdir=$cache/apt-$ksuite
kapt() {	# kapt apt-get|apt-cache ARGS...
	local tool=$1
	shift
	if [ "$ksuite" = host ]; then
		"$tool" "$@"
		return
	fi
	"$tool" -o Dir::Etc::SourceList="$aptdir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$aptdir/lists" -o Dir::Cache="$aptdir/cache" \
		-o Dir::State::status=/var/lib/dpkg/status "$@"
}
# The lists of the lane's own suite, fetched at most once a day.
kapt_update() {
	[ "$ksuite" = host ] && { apt-get update -qq; return; }
	local uri
	mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" || return 1
	uri=$(sed -n 's/^URIs: *\([^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $ksuite main" \
		>"$aptdir/sources.list"
	[ -n "$(find "$aptdir/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null)" ] && return 0
	kapt apt-get update -qq
}
kapt_newest() {	# kapt_newest REGEX: the newest package apt knows by that name
	kapt apt-cache search --names-only "$1" 2>/dev/null | cut -d' ' -f1 | sort -V | tail -1
}

# Prints the image package's name: UST_VM_KERNEL_PKG, else the newest
# package of the line apt knows, else the newest one already in the cache
# (offline runs).
pick_kernel() {
	if [ -n "${UST_VM_KERNEL_PKG:-}" ]; then
		echo "$UST_VM_KERNEL_PKG"
		return
	fi
	local p=
	[ "$ksuite" = host ] && p=$(kapt_newest "$kre")
	if [ -z "$p" ] && [ "$(id -u)" = 0 ]; then
		kapt_update >/dev/null 2>&1
		p=$(kapt_newest "$kre")
	fi
	[ -n "$p" ] || p=$(find "$cache" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null |
		grep -E "$kre" | sort -V | tail -1)
	echo "$p"
}

# The packages of kernel PACKAGE: the image, and its modules where they
# come apart (linux-binary-VER has them in linux-modules-VER).
kernel_pkgs() {	# kernel_pkgs PACKAGE
	case $1 in
	linux-binary-*) echo "$1 linux-modules-${1#linux-binary-}" ;;
	*) echo "$1" ;;
	esac
}

# Downloads and unpacks PACKAGE's packages into $cache/PACKAGE (once; the
# .debs are not kept).  dpkg-deb -x installs nothing: the host's /boot and
# bootloader are untouched.  Serialized: other lanes may run at once.
unpack_kernel() {	# unpack_kernel PACKAGE
	local pkg=$1 dir=$cache/$1 dl
	[ -e "$dir/.complete" ] && return 0
	mkdir -p "$cache" || return 1
	(
		flock 9
		[ -e "$dir/.complete" ] && exit 0
		dl=$(mktemp -d "$cache/dl.XXXXXX") || exit 1
		trap 'rm -rf "$dl"' EXIT
		[ "$ksuite" = host ] || kapt_update >&2 || exit 1
		# apt's sandbox user may not write into the cache dir.
		# shellcheck disable=SC2046  # one word per package
		( cd "$dl" && kapt apt-get -o APT::Sandbox::User=root download $(kernel_pkgs "$pkg") ) >&2 ||
			exit 1
		rm -rf "$dir"
		mkdir -p "$dir"
		for deb in "$dl"/*.deb; do
			dpkg-deb -x "$deb" "$dir" || exit 1
		done
		touch "$dir/.complete"
	) 9>"$cache/.lock"
}

# The kernel of --kernel 7.3-deferred, built from source package SRCPKG
# (unpacked by unpack_kernel) with $kbuild's patches and configuration,
# into $cache/build-KEY/ (bzImage, its release): KEY hashes what the image
# is made of, so a changed patch or option builds anew and an unchanged
# one never does.  The source tree is removed after.
build_kernel() {	# build_kernel SRCPKG: prints the build's directory
	local pkg=$1 key dir tree t0 tarball
	tarball=$(find "$cache/$pkg/usr/src" -name 'linux-source-*.tar.*' 2>/dev/null | head -1)
	[ -n "$tarball" ] || { echo "no source tarball in $cache/$pkg" >&2; return 1; }
	key=$( {
		stat -c '%n %s %Y' "$tarball"
		cat "$kbuild/guest.config" "$kbuild"/7.3/*.patch
		gcc --version | head -1
	} | sha256sum | cut -c1-16)
	dir=$cache/build-$kname-$key
	if [ -e "$dir/.complete" ]; then
		echo "$dir"
		return 0
	fi
	(
		flock 9
		[ -e "$dir/.complete" ] && exit 0
		need_pkgs flex bison bc dwarves libelf-dev libssl-dev ||
			{ echo "cannot install the kernel's build dependencies"; exit 1; }
		t0=$(date +%s)
		tree=$(mktemp -d "$cache/src.XXXXXX") || exit 1
		trap 'rm -rf "$tree"' EXIT
		tar -xaf "$tarball" -C "$tree" --strip-components=1 || exit 1
		for p in "$kbuild"/7.3/*.patch; do
			patch -d "$tree" -p1 -s <"$p" || { echo "$p does not apply"; exit 1; }
		done
		make -s -C "$tree" allnoconfig KCONFIG_ALLCONFIG="$kbuild/guest.config" || exit 1
		make -s -C "$tree" -j"$(nproc)" bzImage >"$cache/build-$kname.log" 2>&1 ||
			{ tail -20 "$cache/build-$kname.log"; exit 1; }
		rm -rf "$dir"
		mkdir -p "$dir"
		cp "$tree/arch/x86/boot/bzImage" "$dir/bzImage"
		cp "$tree/.config" "$dir/config"
		make -s -C "$tree" kernelrelease >"$dir/release"
		echo "$(($(date +%s) - t0))" >"$dir/build-seconds"
		touch "$dir/.complete"
	) 9>"$cache/.lock-build" >&2 || return 1
	echo "$dir"
}

kpkg=$(pick_kernel)
[ -n "$kpkg" ] || skip "apt knows no kernel package like $kre and none is cached in $cache"
unpack_kernel "$kpkg" >"$work.kernel.log" 2>&1 ||
	skip "cannot download or unpack $kpkg (see $work.kernel.log)"
kroot=$cache/$kpkg
if [ -n "$kbuild" ]; then
	t0=$(date +%s)
	kdir=$(build_kernel "$kpkg" 2>>"$work.kernel.log") ||
		bail "cannot build $kname from $kpkg (see $work.kernel.log)"
	if [ "$(($(date +%s) - t0))" -gt 5 ]; then
		note "built $kname from $kpkg in $(cat "$kdir/build-seconds") s"
	fi
	kroot=$kdir
fi
# bookworm's images keep it in /boot, trixie's in the modules directory;
# a kernel built here is one bzImage, with no modules.
vmlinuz=$(find "$kroot/boot" -name 'vmlinuz-*' 2>/dev/null | head -1)
if [ -n "$kbuild" ]; then
	vmlinuz=$kroot/bzImage
	kver=$(cat "$kroot/release")
elif [ -n "$vmlinuz" ]; then
	kver=${vmlinuz##*/vmlinuz-}
else
	vmlinuz=$(find "$kroot/usr/lib/modules" -mindepth 2 -maxdepth 2 -name vmlinuz 2>/dev/null | head -1)
	kver=$(basename "$(dirname "$vmlinuz")")
fi
kmods=
for d in "$kroot/lib/modules/$kver" "$kroot/usr/lib/modules/$kver"; do
	[ -d "$d/kernel" ] && kmods=$d
done
if [ -z "$vmlinuz" ] || { [ -z "$kmods" ] && [ -z "$kbuild" ]; }; then
	bail "$kroot has no vmlinuz or no modules"
fi

# ---- the initramfs ------------------------------------------------------

rm -rf "$work"
mkdir -p "$work/initramfs/bin" "$work/initramfs/modules" "$work/scratch/job" "$work/scratch/results"
for d in proc sys dev; do
	mkdir -p "$work/initramfs/$d"
done
cp "$busybox" "$work/initramfs/bin/busybox"
cp "$src/tests/vm/guest-init.sh" "$work/initramfs/init"
chmod 755 "$work/initramfs/init"

# Module name -> file.  Names use - and _ interchangeably.
declare -A kofile=()
while read -r f; do
	n=${f##*/}
	n=${n%%.ko*}
	kofile[${n//-/_}]=$f
done < <([ -z "$kmods" ] || find "$kmods/kernel" -name '*.ko*')

# Appends a module to the load order after its dependencies (from its
# .modinfo "depends=": the package ships no modules.dep).  Decompressed
# here, so that busybox insmod needs no xz support.
declare -A added=()
add_module() {	# add_module [?]NAME
	local n=${1#\?} f dep
	n=${n//-/_}
	[ -n "${added[$n]:-}" ] && return 0
	added[$n]=1
	f=${kofile[$n]:-}
	if [ -z "$f" ]; then
		[ "${1:0:1}" = "?" ] && return 0	# built in
		bail "kernel $kver has no module $n"
	fi
	case $f in
	*.xz) xz -dc "$f" ;;
	*.zst) zstd -dcq "$f" ;;
	*.gz) gzip -dc "$f" ;;
	*) cat "$f" ;;
	esac >"$work/initramfs/modules/$n.ko" || bail "cannot decompress $f"
	for dep in $(tr '\0' '\n' <"$work/initramfs/modules/$n.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
		add_module "$dep"
	done
	echo "$n.ko" >>"$work/initramfs/modules/order"
}
: >"$work/initramfs/modules/order"	# none for a kernel built here
for m in "${modules[@]}"; do
	add_module "$m"
done
( cd "$work/initramfs" && find . | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null | gzip -1 ) \
	>"$work/initramfs.gz" || bail "cannot make the initramfs"

# ---- the job: one small script per guest test ---------------------------

intro=$build/meson-info/intro-tests.json
[ -r "$intro" ] || bail "no $intro: not a meson build directory"

# Variables that every guest test gets, as meson gives them to every test.
base_env() {
	local v
	for v in MALLOC_PERTURB_ ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		if [ -n "${!v:-}" ]; then
			printf 'export %s=%q\n' "$v" "${!v}"
		fi
	done
}

{
	printf 'UST_VM_SRC=%q\n' "$src"
	printf 'UST_VM_BUILD=%q\n' "$build"
} >"$work/scratch/job/env"

ninja_targets=()
n=0
while read -r kind name rest; do
	[ -z "$kind" ] || [ "${kind:0:1}" = "#" ] && continue
	proto=exitcode tmo= on=
	extra=()
	read -ra toks <<<"${rest%%#*}"
	for tok in "${toks[@]}"; do
		case $tok in
		timeout=*) tmo=${tok#timeout=} ;;
		on=*) on=${tok#on=} ;;
		*=*) extra+=("$(printf 'export %s=%q' "${tok%%=*}" "${tok#*=}")") ;;
		*) bail "$list: $name: '$tok' is not VAR=VALUE, on=KERNELS or timeout=SECONDS" ;;
		esac
	done
	# on=6.1,7.3: only on those kernels.  A kernel built here runs only
	# the lines that name it: the rest are for Debian's kernels.
	if [ -n "$on" ] && ! [[ ",$on," == *",$kname,"* ]]; then
		continue
	fi
	if [ -z "$on" ] && [ -n "$kbuild" ]; then
		continue
	fi
	n=$((n + 1))
	id=$(printf '%02d' "$n")
	job=$work/scratch/job/$id.sh
	show=3
	case $kind in
	meson | bench)
		# The command, directory and environment `meson test` would use;
		# a benchmark's output is its result: all of it is shown.
		known=$intro
		if [ "$kind" = bench ]; then
			known=$build/meson-info/intro-benchmarks.json
			show=100000
		fi
		t=$(jq -c --arg n "$name" 'first(.[] | select(.name == $n))' "$known")
		if [ -z "$t" ]; then
			# A name that matches nothing is a mistake in the list, or a
			# test this build lost: either way the lane must say so.
			echo "echo 'FAIL: no meson test $name in this build'; exit 1" >"$job"
		else
			proto=$(jq -r '.protocol' <<<"$t")
			[ -n "$tmo" ] || tmo=$(( $(jq -r '.timeout' <<<"$t") * factor ))
			{
				base_env
				jq -r '.env | to_entries[] | "export \(.key)=\(.value | @sh)"' <<<"$t"
				((${#extra[@]} == 0)) || printf "%s\n" "${extra[@]}"
				jq -r --arg b "$build" '"cd \((.workdir // $b) | @sh) || exit 1"' <<<"$t"
				jq -r '"exec \(.cmd | map(@sh) | join(" "))"' <<<"$t"
			} >"$job"
			# What meson test would build before running it.
			while read -r f; do
				ninja_targets+=("${f#"$build"/}")
			done < <(jq -r --argjson t "$t" '.[] | select(.id as $i | any($t.depends[]; . == $i)) | .filename[]' \
				"$build/meson-info/intro-targets.json")
		fi
		;;
	script)
		[ -r "$src/tests/vm/guest/$name.sh" ] || bail "$list: no tests/vm/guest/$name.sh"
		{
			base_env
			for v in $(compgen -e | grep '^UST_' | grep -v '^UST_VM_'); do
				printf 'export %s=%q\n' "$v" "${!v}"
			done
			printf 'export UST_VM_SRC=%q UST_VM_BUILD=%q\n' "$src" "$build"
			((${#extra[@]} == 0)) || printf "%s\n" "${extra[@]}"
			printf 'exec bash %q\n' "$src/tests/vm/guest/$name.sh"
		} >"$job"
		;;
	*)
		bail "$list: '$kind' is not meson, bench or script"
		;;
	esac
	echo "$id $name $proto ${tmo:-300} $show" >>"$work/scratch/job/tests"
done <"$list"
((n)) || bail "$list lists no test"
if ((${#ninja_targets[@]})); then
	ninja -C "$build" "${ninja_targets[@]}" >"$work.ninja.log" 2>&1 ||
		bail "building the guest tests failed (see $work.ninja.log)"
fi

# ---- the run ------------------------------------------------------------

# -accel tcg,thread=single: multi-threaded TCG with 2 vCPUs crashed a guest
# once in 8 boots.  No NIC: nothing in the guest uses one, and probing it
# costs boot time.
# shellcheck disable=SC2054  # the commas are QEMU's
qemu=(qemu-system-x86_64 -accel tcg,thread=single -cpu max -m 2048 -smp 2
	-nographic -no-reboot -nic none
	-kernel "$vmlinuz" -initrd "$work/initramfs.gz"
	-append "console=ttyS0 panic=-1 loglevel=4"
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$work/scratch,mount_tag=scratch,security_model=none,multidevs=remap")

note "booting ${kbuild:+$kver built from }$kpkg with $n guest test(s), time limit ${limit}s"
boot_t0=$(date +%s)
"${qemu[@]}" </dev/null >"$work/console.log" 2>&1 &
qpid=$!
# Whatever stops us (meson's timeout, Ctrl-C), QEMU must not outlive us.
trap 'kill "$qpid" 2>/dev/null' EXIT
trap 'exit 1' TERM INT HUP
timed_out=0
while kill -0 "$qpid" 2>/dev/null; do
	if (( $(date +%s) - boot_t0 >= limit )); then
		timed_out=1
		kill "$qpid"
		break
	fi
	sleep 1
done
wait "$qpid" 2>/dev/null
vm_s=$(( $(date +%s) - boot_t0 ))

# ---- the results --------------------------------------------------------

res=$work/scratch/results
pass=0 fail=0 skipped=0
((tap)) && echo "1..$n"
report() {	# report NUMBER NAME VERDICT REASON LOGFILE LINES
	local i=$1 name=$2 v=$3 why=$4 log=$5
	case $v in
	PASS) pass=$((pass + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
	if ((tap)); then
		case $v in
		PASS) echo "ok $i - $name" ;;
		SKIP) echo "ok $i - $name # SKIP ${why:-skipped}" ;;
		*) echo "not ok $i - $name${why:+ ($why)}" ;;
		esac
	else
		echo "vm-lane: $name: $v${why:+ ($why)}"
	fi
	# The end of a failed test's output; the last lines of the others, as
	# evidence of what ran.
	[ -r "$log" ] || return 0
	local lines=${6:-3} total
	[ "$v" = FAIL ] && ((lines < 80)) && lines=80
	total=$(wc -l <"$log")
	((total > lines)) && echo "#   ... (the last $lines of $total lines; all in $log)"
	tail -n "$lines" "$log" | sed 's/^/#   /'
}
while read -r id name proto tmo show; do
	i=$((10#$id))
	if [ -r "$res/$id.rc" ]; then
		{ read -r _rc; read -r ms; read -r v why; } <"$res/$id.rc"
		report "$i" "$name" "$v" "${why:+$why, }${ms} ms in the guest" "$res/$id.log" "$show"
	else
		why="did not finish"
		((timed_out)) && why="$why: the lane's ${limit}s limit was reached"
		report "$i" "$name" FAIL "$why" "$res/$id.log"
	fi
done <"$work/scratch/job/tests"

if ((fail)) || [ ! -e "$res/done" ]; then
	note "guest console (last 40 lines of $work/console.log):"
	# Without SeaBIOS's terminal escapes and carriage returns.
	tail -n 40 "$work/console.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g; s/\r//g; s/^/#   /'
	[ -e "$res/init-error" ] && note "guest /init: $(cat "$res/init-error")"
fi
note "kernel $(cat "$res/kernel" 2>/dev/null || echo "$kver (did not report)"): $pass passed, $fail failed, $skipped skipped; VM ${vm_s}s, lane $(( $(date +%s) - lane_t0 ))s"
# In TAP, "not ok" lines say it: a non-zero exit would be an error to meson.
((tap || fail == 0))
