#!/bin/bash
# seeds.sh BUILDDIR OUT: generate every target's seed corpus into OUT/<target>/
# from the project's own code, at build time (nothing binary is committed):
#   decode, perf  fuzz-seeds (the record encoder; tests/unit/perf/synth.c)
#   sym, cfi      ELF files the compiler builds now from tests/progs and
#                 tests/unit/cfi sources: PIE, non-PIE, shared, -O2
#                 -fomit-frame-pointer, DWARF 4 and 5, .debug_frame only,
#                 stripped with a .gnu_debuglink, and the debug file itself
#   scan          tests/e2e/cases/*.spec written by ust-mktrace (the
#                 templates), and their pages (the seeds)
#   lh, af        the expressions of the unit tests' tables
#   bt2           fuzz_bt2's own encoder (UST_FUZZ_BT2_MKSEEDS): the stack,
#                 object and lock events the LTTng provider emits, and worse
set -eu
build=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out"
mkdir -p "$out"/{decode,perf,sym,cfi,scan,scan-templates,lh,af,bt2,park} "$out/elf"

"$build/tests/fuzz/fuzz-seeds" "$out"

# ---- ELF files ------------------------------------------------------------
cc=${CC_SEEDS:-cc}
e=$out/elf p=$src/tests/progs
fp='-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer'
$cc -g -O0 $fp -o "$e/testprog" "$p/testprog.c"
$cc -g -O0 $fp -fno-pie -no-pie -o "$e/testprog-nopie" "$p/testprog.c"
$cc -g -O2 -fomit-frame-pointer -o "$e/testprog-o2" "$p/testprog.c"
$cc -gdwarf-4 -O1 -o "$e/testprog-dwarf4" "$p/testprog.c"
$cc -g -O2 -o "$e/testprog-inline" "$p/testprog-inline.c"
$cc -g -O0 -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$e/testprog-debugframe" "$p/testprog.c"
$cc -g -O0 -shared -fPIC -Wl,-Ttext-segment=0x10000000 -o "$e/libusttest.so" "$p/usttest.c"
$cc -O2 -o "$e/testprog-nodebug" "$p/testprog.c"
for f in "$src"/tests/unit/cfi/cfitest-prog.c "$src"/tests/unit/cfi/cfitest-lib.c; do
	[ -f "$f" ] || continue
	b=$(basename "$f" .c)
	if [ "$b" = cfitest-lib ]; then
		$cc -g -O2 -fomit-frame-pointer -shared -fPIC -o "$e/$b.so" "$f" 2>/dev/null || true
	else
		$cc -g -O2 -fomit-frame-pointer -o "$e/$b" "$f" 2>/dev/null || true
	fi
done
cp "$e/testprog" "$e/testprog-stripped"
objcopy --only-keep-debug "$e/testprog-stripped" "$e/testprog-stripped.debug"
strip --strip-debug --strip-unneeded "$e/testprog-stripped"
objcopy --add-gnu-debuglink="$e/testprog-stripped.debug" "$e/testprog-stripped"
for f in "$e"/*; do
	cp "$f" "$out/sym/"
	cp "$f" "$out/cfi/"
done

# ---- trace.dat files ------------------------------------------------------
# The e2e specs with their @NAME@ placeholders filled from the files above;
# a spec ust-mktrace refuses is skipped (its seeds are not needed to fuzz).
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
work=$(mktemp -d /tmp/ust-fuzz-seeds.XXXXXX)
trap 'rm -rf "$work"' EXIT
sub=(-e "s#@TESTPROG_INLINE@#$e/testprog-inline#g" -e "s#@TESTPROG_NOPIE@#$e/testprog-nopie#g"
     -e "s#@TESTPROG_STRIPPED@#$e/testprog-stripped#g" -e "s#@TESTPROG_LIB@#$e/testprog#g"
     -e "s#@LIBUSTTEST@#$e/libusttest.so#g" -e "s#@TESTPROG@#$e/testprog#g"
     -e "s#@LIBC@#$libc#g" -e "s#@DEBUGDIR@#$e#g" -e "s#@PROGDIR@#$e#g" -e "s#@WORK@#$work#g"
     -e "s#@IP_GETPPID@#getppid+0x4#g"
     -e "s#@RET_\(C\|C_ST\|C_NOPIE\)@#ust_c+0x8#g" -e "s#@RET_B@#ust_b+0x8#g"
     -e "s#@RET_A@#ust_a+0x8#g" -e "s#@RET_\(MAIN\|MAIN_ST\|LIB_MAIN\)@#main+0x10#g"
     -e "s#@RET_INL_\(MID\|DEEP\)@#main+0x4#g"
     -e "s#@RET_LIB_\(INNER\|ENTRY\)@#ust_lib_entry+0x4#g")
n=0
for spec in "$src"/tests/e2e/cases/*.spec; do
	name=$(basename "$spec" .spec)
	sed "${sub[@]}" "$spec" >"$work/spec"
	if "$build/tests/mktrace/ust-mktrace" "$work/spec" "$out/scan-templates/$name.dat" 2>"$work/err"; then
		n=$((n + 1))
	else
		rm -f "$out/scan-templates/$name.dat"
		echo "seeds: $name.spec skipped: $(head -1 "$work/err")" >&2
	fi
done
[ "$n" -gt 0 ] || { echo "seeds: no trace.dat written" >&2; exit 1; }
# fuzz_scan mutates the pages of these templates: its seeds are their pages.
UST_FUZZ_SCAN_TEMPLATES=$out/scan-templates UST_FUZZ_SCAN_MKSEEDS=$out/scan \
	ASAN_OPTIONS=detect_leaks=0 "$build/tests/fuzz/fuzz_scan"

# ---- regression inputs (findings, rebuilt here: replayed first by every run)
# scan-record-loop: the first record of stackonly's page made a type_len-0
# header whose length word is -4: libtracecmd 1.3.1 returns that record (size
# -8) at the same offset forever; the first pass never ended (fixed in
# lib/report/scan.c: next_record()).  Seed layout: [template index][pages].
idx=$(cd "$out/scan-templates" && LC_ALL=C ls -1 | grep '\.dat' | LC_ALL=C sort |
	grep -n '^stackonly\.dat$' | cut -d: -f1)
if [ -n "$idx" ]; then
	r=$out/scan/regress-record-loop
	cp "$out/scan/$(printf 't%02d' $((idx - 1)))" "$r"
	printf '\x00\x00\x00\x00\xfc\xff\xff\xff' | dd of="$r" bs=1 seek=17 conv=notrunc status=none
	# scan-past-page: stackonly's stack record (page offset 52, 48 bytes,
	# a 4-byte header) made a type_len-0 record (8-byte header, the data
	# moved 4 bytes on) whose length word says 64 KiB, its stack array one
	# frame at 4096 bytes into the data: libtracecmd 1.3.1 hands it out
	# with size 65536 and the decoder, trusting it, read past the page and
	# out of the file's mapping (the fuzz_scan SEGV; fixed by
	# ust_dec_rec_size(): a record must end inside its page).
	r=$out/scan/regress-past-page
	cp "$out/scan/$(printf 't%02d' $((idx - 1)))" "$r"
	dd if="$out/scan/$(printf 't%02d' $((idx - 1)))" of="$r" bs=1 skip=$((1 + 56)) seek=$((1 + 60)) \
		count=48 conv=notrunc status=none
	printf '\x00\x00\x00\x00\x04\x00\x01\x00' | dd of="$r" bs=1 seek=$((1 + 52)) conv=notrunc status=none
	printf '\x00\x10\x08\x00' | dd of="$r" bs=1 seek=$((1 + 60 + 16)) conv=notrunc status=none
fi

# ---- babeltrace2 sink events ------------------------------------------------
UST_FUZZ_BT2_MKSEEDS=$out/bt2 ASAN_OPTIONS=detect_leaks=0 "$build/tests/fuzz/fuzz_bt2"

# ---- parked walks: the recorder finishing a copied stack ---------------------
UST_FUZZ_PARK_MKSEEDS=$out/park ASAN_OPTIONS=detect_leaks=0 "$build/tests/fuzz/fuzz_park"

# ---- filter expressions ---------------------------------------------------
# The first string of each row of the tables: { "expr", ... }
table_strings() {
	grep -hoE '^[[:space:]]*\{ "([^"\\]|\\.)*"' "$@" | sed -E 's/^[[:space:]]*\{ "//; s/"$//'
}
i=0
while IFS= read -r s; do
	printf '%b' "$s" >"$out/lh/t$i"; i=$((i + 1))
done < <(table_strings "$src"/tests/unit/lockheld/test_lh_parse.c "$src"/tests/unit/lockheld/test_lh_compile.c)
i=0
while IFS= read -r s; do
	printf '%b' "${s//PROG/$e/testprog}" >"$out/af/t$i"; i=$((i + 1))
done < <(table_strings "$src"/tests/unit/addrfilter/test_addrfilter.c "$src"/tests/unit/addrfilter/test_af_compile.c)

for t in decode perf sym cfi scan lh af bt2 park; do
	printf 'seeds: %-6s %3d inputs\n' "$t" "$(find "$out/$t" -type f | wc -l)"
done
