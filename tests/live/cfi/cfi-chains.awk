# Turns `trace-cmd report` output with plugin_ustitch into one line per
# event that requested a user stack:
#   EVENT TID FLAGS frame;frame;...
# FLAGS is "truncated" when the stack header says so, "complete" when it
# says the walk reached the outermost frame by CFI alone, else "-".  A frame is
# its function name (the "+0xoff" dropped); a frame with no symbol is
# "0xOFF@object", one with no file "?".  A missing stack prints "-", a lost
# or unusable one "!" followed by the plugin's message.
#
# The cookie line (and the "=>" frames under it) usually follows its event,
# as the kernel writes it; it precedes the event when the BPF program of
# the tracepoint ran before ftrace's probe (their registration order, which
# another tracer on the same tracepoint can change).  So a cookie line
# belongs to the pending event of its task if that event has none yet,
# otherwise to the task's next event.
function flush() {
	if (ev != "")
		print ev, tid, flags, (frames == "" ? "-" : frames)
	ev = ""; frames = ""; flags = "-"; has = 0
}
function line_tid(   i, t) {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\[[0-9]+\]$/) { t = $(i - 1); sub(/^.*-/, "", t); return t }
	return ""
}
/^=>\*? / {
	f = $2
	if (f == "(no" ) next
	if (f ~ /^0x/) f = f "@" ($3 ~ /^\(/ ? substr($3, 2, length($3) - 2) : "?")
	else sub(/\+0x[0-9a-f]+$/, "", f)
	if (to_pending) pframes = pframes (pframes == "" ? "" : ";") f
	else frames = frames (frames == "" ? "" : ";") f
	next
}
/^\[ustitch: / {
	m = $0; gsub(/ /, "_", m)
	if (to_pending) { if (pframes == "") pframes = "!" m }
	else if (ev != "" && frames == "") frames = "!" m
	next
}
/user_unwind_cookie:/ {
	fl = "-"
	if ($0 ~ /; truncated/) fl = "truncated"
	else if ($0 ~ /; complete, by CFI([;,>]|$)/) fl = "complete"
	t = line_tid()
	if (ev != "" && !has && t == tid) {
		flags = fl; has = 1; to_pending = 0
	} else {
		flush()
		pflags = fl; pframes = ""; ptid = t; pend = 1; to_pending = 1
	}
	next
}
/user_unwind_stack:|user_mapping:|stack_flags:/ { next }
/: *$|: / {
	flush()
	tid = line_tid()
	for (i = 1; i <= NF; i++)
		if ($i ~ /:$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/) { ev = $i; sub(/:$/, "", ev) }
	if (pend && ptid == tid) { flags = pflags; frames = pframes; has = 1 }
	pend = 0; pframes = ""; to_pending = 0
}
END { flush() }
