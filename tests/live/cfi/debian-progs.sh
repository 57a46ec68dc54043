# Sourced by test-cfi.sh (live-cfi-debian) and bench/cfi-share: the Debian
# programs whose user stacks must reach the bottom, one definition for both.
# Needs $work.  debian_inputs makes their input files; debian_progs lists
# NAME:EVENT (UST_CFI_DEBIAN=sort:write,... chooses some); cmd_of NAME sets
# cmd=(...).  Absolute paths: Debian's own binaries, not a pyenv shim found
# first in PATH.  They run directly under the recorder (not through a
# shell), their output to /dev/null.
debian_progs=${UST_CFI_DEBIAN:-sort:write,gzip:read,find:getdents64,tar:write,python3:write,ls:getdents64}
debian_progs=${debian_progs//,/ }

# The bottom frames a complete stack reaches: the main thread's, a
# thread's, the dynamic loader's own calls before main.
debian_bottom='(^|;)(__libc_start_call_main|start_thread|clone3|__clone3|_dl_start|_dl_start_user)(;|$)'

# ~3.5 MB of file names (sort writes them in ~900 blocks), 7 MB for gzip
# (which writes 256 KiB at a time: its reads are recorded instead, 64 KiB
# each).
debian_inputs() {
	find /usr/share /usr/lib/python3 -type f >"$work/list" 2>/dev/null
	cat "$work/list" "$work/list" | head -c 7000000 >"$work/big"
}

cmd_of() {
	case $1 in
	sort) cmd=(/usr/bin/sort "$work/list") ;;
	gzip) cmd=(/usr/bin/gzip -1 -c "$work/big") ;;
	find) cmd=(/usr/bin/find /usr/share/doc /usr/lib/python3 -name '*.gz') ;;
	tar) cmd=(/usr/bin/tar cf "$work/t.tar" -C /usr/lib python3.11/json python3.11/email) ;;
	python3) cmd=(/usr/bin/python3 -c 'import os; [print(os.path.join(d, f), flush=True) for d, ds, fs in os.walk("/usr/lib/python3.11") for f in sorted(fs)]') ;;
	ls) cmd=(/usr/bin/ls -lR /usr/share/doc) ;;
	*) return 1 ;;
	esac
}
