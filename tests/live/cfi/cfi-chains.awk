# Turns `trace-cmd report` output with plugin_ustitch into one line per
# event that requested a user stack:
#   EVENT TID FLAGS frame;frame;...
# FLAGS is "truncated" when the stack header says so, "complete" when it
# says the walk reached the outermost frame by CFI alone, else "-".  A frame is
# its function name (the "+0xoff" dropped); a frame with no symbol is
# "0xOFF@object", one with no file "?".  A missing stack prints "-", a lost
# or unusable one "!" followed by the plugin's message.
function flush() {
	if (ev != "")
		print ev, tid, flags, (frames == "" ? "-" : frames)
	ev = ""; frames = ""; flags = "-"
}
/^=>\*? / {
	f = $2
	if (f == "(no" ) next
	if (f ~ /^0x/) f = f "@" ($3 ~ /^\(/ ? substr($3, 2, length($3) - 2) : "?")
	else sub(/\+0x[0-9a-f]+$/, "", f)
	frames = frames (frames == "" ? "" : ";") f
	next
}
/^\[ustitch: / {
	if (ev != "" && frames == "") { m = $0; gsub(/ /, "_", m); frames = "!" m }
	next
}
/user_unwind_cookie:/ {
	if ($0 ~ /; truncated/) flags = "truncated"
	else if ($0 ~ /; complete, by CFI([;,>]|$)/) flags = "complete"
	next
}
/user_unwind_stack:|user_mapping:|stack_flags:/ { next }
/: *$|: / {
	flush()
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^\[[0-9]+\]$/) { t = $(i - 1); sub(/^.*-/, "", t); tid = t }
		if ($i ~ /:$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/) { ev = $i; sub(/:$/, "", ev) }
	}
}
END { flush() }
