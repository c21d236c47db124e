package evidence

import "sandboxlab/sandbox/procfs"

// Python is Debian's interpreter, which every host identity can run. A
// pyenv under /root (mode 0700) is out of reach of uid 65534, the host
// identity of the program from L2 up when the harness runs as root.
const Python = "/usr/bin/python3"

// Programs returns those of procs that run the interpreter (argv[0] is
// Python): the program and whatever it forked, not the sandbox's init,
// a Go binary whose arguments carry the run's tag too until it execs the
// program.
func Programs(procs []procfs.Proc) []procfs.Proc {
	var out []procfs.Proc
	for _, p := range procs {
		if args := procfs.Cmdline(p.PID); len(args) > 0 && args[0] == Python {
			out = append(out, p)
		}
	}
	return out
}
