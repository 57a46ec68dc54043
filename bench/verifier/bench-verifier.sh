#!/bin/bash
# What verifying ustitch's BPF programs costs, per kernel: this machine's
# and Debian's 6.1, 6.12 and 7.3 (booted under QEMU by tests/vm/vm-lane.sh),
# each program's processed instructions (the kernel's limit is 1,000,000;
# ustitch's bound is 100,000), as `ustitch probe` measures them by loading
# the real programs.  Prints a markdown table; asserts nothing.
#
#   bench-verifier.sh BUILD-DIR [KERNEL...]      (default: 6.1 6.12 7.3)
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:?usage: bench-verifier.sh BUILD-DIR [KERNEL...]}")
shift
kernels=("$@")
((${#kernels[@]})) || kernels=(6.1 6.12 7.3)
work=$(mktemp -d /tmp/ustitch-bench-verifier.XXXXXX)
trap 'rm -rf "$work"' EXIT

# One column: "object|program<TAB>insns" lines of a `ustitch probe` output.
column() {	# column PROBE-OUTPUT
	awk '/^[a-z].*: (loads|REFUSED)/ { obj = $0; sub(/:.*/, "", obj);
			if (obj ~ /^the unwinder/) obj = $0 ~ /^the unwinder \(frame pointers/ ? "the unwinder, frame pointers" : "the unwinder, CFI"
			sub(/ \(.*/, "", obj) }
	     $3 == "insns" { print obj "|" $1 "\t" $2 ($NF == "REFUSED" ? "!" : "") }' "$1"
}

"$build/python-free-tools/ustitch" probe >"$work/host.probe" 2>&1
column "$work/host.probe" >"$work/host.col"
names=("this machine, $(uname -r)")
cols=("$work/host.col")
echo "script ustitch-probe" >"$work/guest-tests.txt"
for k in "${kernels[@]}"; do
	# A lane directory of its own: the test suite's lanes may be running.
	UST_VM_WORK=$work/lane-$k UST_VM_TESTS=$work/guest-tests.txt \
		UST_USTITCH="$build/python-free-tools/ustitch" \
		bash "$src/tests/vm/vm-lane.sh" --kernel "$k" "$src" "$build" >"$work/vm-$k.log" 2>&1
	log=$work/lane-$k/scratch/results/01.log
	if [ -r "$log" ]; then
		column "$log" >"$work/$k.col"
		names+=("Debian's $(cat "$work/lane-$k/scratch/results/kernel")")
	else
		: >"$work/$k.col"
		names+=("$k: did not run (see $work/vm-$k.log)")
	fi
	cols+=("$work/$k.col")
done

printf '| object | program |'
for n in "${names[@]}"; do printf ' %s |' "$n"; done
printf '\n|---|---|'
for _ in "${names[@]}"; do printf -- '---|'; done
printf '\n'
cut -f1 "${cols[@]}" | awk '!seen[$0]++' | while IFS='|' read -r obj prog; do
	printf '| %s | %s |' "$obj" "$prog"
	for c in "${cols[@]}"; do
		v=$(awk -F '\t' -v k="$obj|$prog" '$1 == k { print $2; exit }' "$c")
		printf ' %s |' "${v:--}"
	done
	printf '\n'
done
printf '\nmost processed instructions per kernel:'
for i in "${!cols[@]}"; do
	printf ' %s: %s;' "${names[$i]}" "$(awk -F '\t' '{ v = $2; sub(/!/, "", v); if (v + 0 > m) m = v + 0 } END { print m + 0 }' "${cols[$i]}")"
done
printf ' ("!": refused)\n'
