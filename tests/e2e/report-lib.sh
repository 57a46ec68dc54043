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
