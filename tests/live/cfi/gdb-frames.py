# Loaded by verify-gdb.sh into gdb (which unwinds by CFI, independent of
# ustitch): at each stop, print the physical frames of the stopped thread,
# innermost first, on one line: "gdb-chain: NAME NAME ...".  Inline levels
# are skipped (ustitch prints one frame per return address), and so are
# gdb's tail-call frames: gdb makes them up from DWARF call-site data for
# functions that jumped to their callee (glibc's qsort -> __qsort_r), they
# have no return address on the stack.  A signal trampoline frame is
# printed as __restore_rt.  NAME is the ELF symbol that
# covers the frame's address (return addresses minus one), as a symbol
# table would name it, or the DWARF name when no symbol is found.
import gdb

def frame_name(f, caller_pc):
    if f.type() == gdb.SIGTRAMP_FRAME:
        return "__restore_rt"
    pc = f.pc() - (1 if caller_pc else 0)
    out = gdb.execute("info symbol 0x%x" % pc, to_string=True)
    if out.startswith("No symbol"):
        return f.name() or "??"
    return out.split(" + ")[0].split(" in section")[0].strip()

def chain(event):
    names = []
    f = gdb.newest_frame()
    after_normal = False
    while f is not None:
        if f.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            names.append(frame_name(f, after_normal))
            after_normal = f.type() == gdb.NORMAL_FRAME
        f = f.older()
    print("gdb-chain: " + " ".join(names))

gdb.events.stop.connect(chain)
