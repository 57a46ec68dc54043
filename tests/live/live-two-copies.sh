#!/bin/bash
# Live: two copies of the plugin in one `trace-cmd report`.  The README's
# demo.sh installs plugin_ustitch.so in libtraceevent's system directory;
# a build's copy named by TRACEEVENT_PLUGIN_DIR is then loaded as well.
# Exactly one copy may act: the folded block printed once, each stack in
# it once, and the whole report (stdout and stderr) as with the build's
# copy alone.  USTITCH_DEBUG's "acting copy" line must name the build's.
#
# Both cases are made here, whatever is installed: each report runs in a
# mount namespace of its own (unshare -m) where the system directory is a
# bind-mounted copy of itself, without plugin_ustitch.so or with one (the
# installed copy when there is one, and a copy of the build's).  The
# machine's directories are never changed.
set -u
. "$(dirname "$0")/lib.sh" two-copies
command -v unshare >/dev/null || skip_all "no unshare"
sysdir=$(pkg-config --variable=libdir libtraceevent 2>/dev/null)/traceevent/plugins
[ -d "$sysdir" ] || skip_all "no system plugin directory $sysdir"
unshare -m true 2>/dev/null || skip_all "unshare -m refused"
ours=$UST_PLUGIN_DIR/plugin_ustitch.so

# Samples with known chains, for a folded block with several stacks.
if ! "$UST_USTITCH" record -q -o "$work/t.dat" -e cpu-clock -F 999 -g -- \
	"$UST_PERF_PROG" 200 50 tf 2>"$work/rec.log"; then
	bad "ustitch record failed: $(cat "$work/rec.log")"
	finish
fi

# sysdir_as NAME [PLUGIN]: $work/NAME, the system directory's plugins
# without plugin_ustitch.so, or with PLUGIN as it.
sysdir_as() {
	mkdir -p "$work/$1"
	cp -a "$sysdir"/. "$work/$1/"
	rm -f "$work/$1/plugin_ustitch.so"
	[ -z "${2:-}" ] || cp "$2" "$work/$1/plugin_ustitch.so"
}
# run NAME ENV...: a report of t.dat with folded stacks, the system
# directory being $work/NAME; stdout and stderr into $work/NAME.out, .err.
# Two instrumented copies in one process define the same globals, an ODR
# violation to ASan: here they are meant to.
run() {
	local dir=$work/$1; shift
	( cd "$work" && unshare -m sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
		"$dir" "$sysdir" env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
		${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} "$@" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0" \
		trace-cmd report -O ustitch:folded=1 t.dat )
}
# plugin_loaded LOG-PREFIX: the plugin files whose entry point was looked up.
plugin_loaded() {
	cat "$1".* 2>/dev/null | sed -n "s/.*binding file \([^ ]*plugin_ustitch[^ ]*\) .*symbol \`tep_plugin_loader'.*/\1/p" | sort -u
}
# folded NAME: the lines of the folded block (after its header).
folded() {
	awk 'f; /^# ustitch folded stacks: /{ f = 1 }' "$work/$1.out"
}

sysdir_as one
run one >"$work/one.out" 2>"$work/one.err"
expect_eq "one copy: folded blocks" "$(grep -c '^# ustitch folded stacks: ' "$work/one.out")" 1
at_least "one copy: folded stacks with main's chain" \
	"$(folded one | grep -c ';main;perf_a;perf_b;perf_c')" 1

cases=("build:$ours")
inst=$sysdir/plugin_ustitch.so
[ -e "$inst" ] && cases+=("installed:$inst")
for c in "${cases[@]}"; do
	name=${c%%:*}
	sysdir_as "$name" "${c#*:}"
	run "$name" >"$work/$name.out" 2>"$work/$name.err"
	run "$name" USTITCH_DEBUG=1 LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$work/ld-$name" \
		>/dev/null 2>"$work/$name.debug"
	loaded=$(plugin_loaded "$work/ld-$name" | xargs -r realpath | sort -u)
	expect_eq "$name copy in $sysdir and ours: copies of the plugin loaded" \
		"$(grep -c . <<<"$loaded")" 2 || echo "# loaded: $loaded"
	grep -qxF "$(realpath "$ours")" <<<"$loaded" || bad "$name: $ours not loaded"
	expect_eq "$name: folded blocks" "$(grep -c '^# ustitch folded stacks: ' "$work/$name.out")" 1
	expect_eq "$name: stacks folded twice" "$(folded "$name" | sed 's/ [0-9]*$//' | sort | uniq -d | wc -l)" 0
	if diff -u "$work/one.out" "$work/$name.out" >"$work/$name.diff" &&
	   diff -u "$work/one.err" "$work/$name.err" >>"$work/$name.diff"; then
		ok "$name: the report as with one copy ($(wc -l <"$work/one.out") lines)"
	else
		bad "$name: the report differs from the one with one copy"; head -40 "$work/$name.diff"
	fi
	acting=$(sed -n 's/^ustitch: acting copy: //p' "$work/$name.debug")
	expect_eq "$name: copies that say they act" "$(grep -c . <<<"$acting")" 1
	expect_eq "$name: the acting copy" "$(realpath "$acting")" "$(realpath "$ours")"
done
[ -e "$inst" ] || skip_part "an installed copy with ours" "none in $sysdir (demo.sh installs one)"
finish
