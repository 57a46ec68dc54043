# phases.awk PID=<pid-or-empty> EV=<event>: per buffer and phase, the
# count of EV lines of the workload (comm lh-prog), after the markers.
{
	buf = ($1 ~ /^ustitch:$/) ? "lh" : "ft"
	line = $0
	if (buf == "lh") sub(/^ustitch: */, "", line)
	n = split(line, f, " ")
	if (f[1] !~ /^lh-prog-/) next
	ev = f[4]
	if (ev == "sys_enter_getppid:") { phase++; next }
	if (ev != EV ":") next
	extra = ""
	if (KEY != "") { for (i = 5; i <= n; i++) if (f[i] ~ "^" KEY "=") extra = ":" f[i] }
	c[buf " " phase extra]++
}
END { for (k in c) print k, c[k] }
