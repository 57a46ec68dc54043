# Turns `trace-cmd report` output with plugin_ustitch into one line per
# stitched event:  EVENT TID CPU COOKIE frame;frame;...
# where a frame is "function(object)".  Events without a stack print "-".
function flush() {
	if (ev != "")
		print ev, tid, cpu, cookie, (frames == "" ? "-" : frames)
	ev = ""; frames = ""; cookie = "-"
}
/^=> / {
	f = $2; sub(/\+0x[0-9a-f]+$/, "", f)
	obj = $3; gsub(/[()]/, "", obj)
	frames = frames (frames == "" ? "" : ";") f "(" obj ")"
	next
}
/user_unwind_cookie:/ {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^cookie=/) { cookie = substr($i, 8) }
	next
}
/user_unwind_stack:|user_mapping:|stack_flags:/ { next }
/: *$|: / {
	flush()
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^\[[0-9]+\]$/) { cpu = $i; gsub(/[][]/, "", cpu); t = $(i - 1); sub(/^.*-/, "", t); tid = t }
		if ($i ~ /:$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/) { ev = $i; sub(/:$/, "", ev) }
	}
}
END { flush() }
