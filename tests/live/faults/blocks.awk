# One line per stack the plugin printed under a user_unwind_cookie record:
#   COMM-TID frame;frame;...     (frames as function names)
# The cookie's line names the task it was taken in; the chain must be that
# task's, whichever events around it were lost.
function flush() {
	if (tid != "")
		print tid, frames
	tid = ""; frames = ""
}
/^=> / {
	if (tid == "")
		next
	f = $2; sub(/\+0x[0-9a-f]+$/, "", f)
	frames = frames (frames == "" ? "" : ";") f
	next
}
{ flush() }
/user_unwind_cookie: .*<user stack unwind/ {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\[[0-9]+\]$/) tid = $(i - 1)
}
END { flush() }
