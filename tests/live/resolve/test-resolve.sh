#!/bin/bash
# Live: `ustitch record` of a program built at test time in a temporary
# directory; the report with the program in place, deleted, rebuilt with
# another build-id, and from its `ustitch archive` after it is gone; a
# library with a hard link in a build-id cache, named by its own path.
set -u
. "$(dirname "$0")/../lib.sh" resolve
src=$here/../../progs/testprog.c
prog=$work/bin/prog
mkdir -p "$work/bin" "$work/t"
gcc -O0 -g -fno-omit-frame-pointer -o "$prog" "$src" || { bad "cannot build"; finish; }
"$UST_USTITCH" record -q -o "$work/t/trace.dat" -e syscalls:sys_enter_getppid \
	-O userstacktrace_delay -- "$prog" 2 || { bad "ustitch record failed"; finish; }
# The program's frames of the first stack, from the report run in $work/t.
frames() { ( cd "$work/t" && report trace.dat "$@" ) | awk '/^=> / && / \(prog\)$/ { print } /user_unwind_stack:/ { exit }'; }
chain=$(frames | sed 's/+0x[0-9a-f]*//' | awk '{ print $2 }' | tr '\n' ' ')
expect_eq "recorded chain" "$chain" "ust_c ust_b ust_a main _start "
before=$(frames)
offs=$(frames -O ustitch:symbols=0 | awk '{ print $2 }')

"$UST_USTITCH" archive -i "$work/t/trace.dat" >"$work/archive.out" 2>&1 ||
	bad "ustitch archive failed: $(cat "$work/archive.out")"
mv "$work/t/trace.dat.ustitch" "$work/arch"

mv "$prog" "$work/bin/prog.old"
expect_eq "moved: by handle, named as recorded" "$(frames)" "$before"

# Rebuilt with another build-id at the recorded path, the old one deleted.
rm "$work/bin/prog.old"
gcc -O1 -g -fno-omit-frame-pointer -o "$prog" "$src"
expect_eq "rebuilt: its symbols not used" "$( ( cd "$work/t" && report trace.dat ) | awk '/^=> / && /prog/ { print } /user_unwind_stack:/ { exit }')" \
	"$(for o in $offs; do echo "=> $o (prog: not the traced file: its build-id differs)"; done)"
rm "$prog"
expect_eq "deleted: says so" "$( ( cd "$work/t" && report trace.dat ) | awk '/^=> / && /prog/ { print } /user_unwind_stack:/ { exit }')" \
	"$(for o in $offs; do echo "=> $o (prog: no longer exists)"; done)"
# From the archive: as before.
expect_eq "from the archive: as before" "$(frames -O ustitch:archive="$work/arch")" "$before"

# A library hard-linked into a build-id cache, perf's ~/.debug layout
# (HOME's), the link made last (the kernel then names the file's handle by
# it), run by a script: the user_mapping and every frame name the library,
# never the cache's "elf".
mkdir -p "$work/lib" "$work/home"
printf '#include <unistd.h>\nint foo(int n) { int s = 0; for (int i = 0; i < n; i++) s += getppid(); return s; }\n' >"$work/foo.c"
printf 'int foo(int);\nint main(void) { return foo(3) < 0; }\n' >"$work/main.c"
gcc -O0 -g -fno-omit-frame-pointer -shared -fPIC -o "$work/lib/libfoo.so" "$work/foo.c" &&
	gcc -O0 -g -fno-omit-frame-pointer -o "$work/bin/foo-prog" "$work/main.c" -L"$work/lib" -lfoo \
		-Wl,-rpath,"$work/lib" || { bad "cannot build libfoo"; finish; }
bid=$(readelf -n "$work/lib/libfoo.so" | awk '/Build ID/ { print $3 }')
mkdir -p "$work/home/.debug$work/lib/libfoo.so/$bid"
ln "$work/lib/libfoo.so" "$work/home/.debug$work/lib/libfoo.so/$bid/elf"
HOME=$work/home "$UST_USTITCH" record -q -o "$work/t/foo.dat" -e syscalls:sys_enter_getppid \
	-O userstacktrace_delay -- sh -c "$work/bin/foo-prog; true" || bad "ustitch record of foo-prog failed"
( cd "$work/t" && HOME=$work/home report foo.dat ) >"$work/foo.report"
expect_eq "cache link: libfoo's user_mapping" \
	"$(grep -o 'user_mapping: .*path=.*libfoo.*' "$work/foo.report" | sed 's/.*path=//' | sort -u)" "$work/lib/libfoo.so"
expect_eq "cache link: frames in libfoo.so" "$(grep -c '^=> foo+0x[0-9a-f]* (libfoo.so)$' "$work/foo.report")" 3
expect_eq "cache link: frames named elf" "$(grep -c '(elf)' "$work/foo.report")" 0
finish
