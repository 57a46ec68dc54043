# Turns `trace-cmd report` output with plugin_ustitch into one line per
# stitched event:  EVENT TID CPU COOKIE frame;frame;...
# where a frame is "function(object)".  Events without a stack print "-".
#
# An event's user_unwind_cookie line (and the "=>" frames under it) is
# usually printed after the event, as the kernel writes it.  It comes
# before the event when the BPF program of the tracepoint ran before
# ftrace's probe: the order in which they were registered, which another
# tracer on the same tracepoint (another recording) can change.  So a
# cookie line belongs to the pending event of its task if that event has
# none yet, otherwise to the task's next event.
function flush() {
	if (ev != "")
		print ev, tid, cpu, cookie, (frames == "" ? "-" : frames)
	ev = ""; frames = ""; cookie = "-"
}
# line_task(): the TID and CPU of this report line into ltid, lcpu.
function line_task(   i, t) {
	ltid = ""; lcpu = ""
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\[[0-9]+\]$/) {
			lcpu = $i; gsub(/[][]/, "", lcpu)
			t = $(i - 1); sub(/^.*-/, "", t); ltid = t
			return
		}
}
/^=> / {
	f = $2; sub(/\+0x[0-9a-f]+$/, "", f)
	obj = $3; gsub(/[()]/, "", obj)
	f = f "(" obj ")"
	if (to_pending)
		pframes = pframes (pframes == "" ? "" : ";") f
	else
		frames = frames (frames == "" ? "" : ";") f
	next
}
/user_unwind_cookie:/ {
	line_task()
	c = "-"
	for (i = 1; i <= NF; i++)
		if ($i ~ /^cookie=/) { c = substr($i, 8) }
	if (ev != "" && cookie == "-" && ltid == tid) {
		cookie = c; to_pending = 0
	} else {
		flush()
		pcookie = c; pframes = ""; ptid = ltid; to_pending = 1
	}
	next
}
/user_unwind_stack:|user_mapping:|stack_flags:/ { next }
/: *$|: / {
	flush()
	line_task()
	tid = ltid; cpu = lcpu
	for (i = 1; i <= NF; i++)
		if ($i ~ /:$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/) { ev = $i; sub(/:$/, "", ev) }
	if (pcookie != "" && ptid == tid) {
		cookie = pcookie; frames = pframes
	}
	pcookie = ""; pframes = ""; to_pending = 0
}
END { flush() }
