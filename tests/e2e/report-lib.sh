# Sourced by the e2e scripts.
#
# ust_report DIR OUT ERR [ARGS...]: the real `trace-cmd report ARGS` run in
# DIR with the plugin under test (UST_PLUGIN_DIR, with the sanitizer
# runtimes preloaded in the sanitized lane) and a private HOME, DIR, so
# that no plugin installed in ~/.local may shadow it.  Fails, saying why,
# on a sanitizer report, a non-zero exit or a report running past
# UST_REPORT_TIMEOUT seconds (default 300: a hang is a failure too).
ust_report() {
	local dir=$1 out=$2 err=$3 rc
	shift 3
	( cd "$dir" && timeout "${UST_REPORT_TIMEOUT:-300}" env HOME="$dir" \
		TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
		${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
		trace-cmd report "$@" >"$out" 2>"$err" )
	rc=$?
	if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$err"; then
		echo "sanitizer report:"; cat "$err"; return 1
	fi
	if [ $rc -ne 0 ]; then
		echo "trace-cmd report exited $rc$([ $rc -eq 124 ] && echo ' (it hung)'):"
		cat "$err"; return 1
	fi
}

# ret_after BIN FUNC REGEX: "FUNC+0xOFF" of the instruction after the first
# one in FUNC matching REGEX -- a return address (or, after `syscall`, the
# user IP at kernel entry) that holds for whatever compiler built BIN.
ret_after() {
	local a sz line addr found=""
	read -r a sz < <({ nm -S --defined-only "$1" 2>/dev/null; nm -D -S --defined-only "$1" 2>/dev/null; } |
		awk -v f="$2" '{ sub(/@.*/, "", $4) } $4 == f && $2 != "" { print $1, $2; exit }')
	if [[ -z ${a:-} ]]; then
		echo "ret_after: no symbol $2 in $1" >&2; echo "$2+0xdead"; return
	fi
	a=$((16#$a)); sz=$((16#$sz))
	while read -r line; do
		[[ $line =~ ^([0-9a-f]+): ]] || continue
		addr=$((16#${BASH_REMATCH[1]}))
		if [[ -n $found ]]; then printf '%s+0x%x\n' "$2" $((addr - a)); return; fi
		[[ $line =~ $3 ]] && found=1
	done < <(objdump -d --no-show-raw-insn --start-address=$a --stop-address=$((a + sz)) "$1")
	echo "ret_after: no '$3' in $2 of $1" >&2
	echo "$2+0xdead"
}

# The checks of a script that makes its own traces: ok, bad (counted in
# $fails), and same WHAT FILE (FILE is $work/expected, or the difference
# is shown).
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
same() {
	if cmp -s "$work/expected" "$2"; then ok "$1"; else bad "$1"; diff -u "$work/expected" "$2" | sed 's/^/    /'; fi
}
