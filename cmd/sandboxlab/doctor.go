package main

import (
	"context"
	"io"

	"sandboxlab/doctor"
	"sandboxlab/verdict"
)

func init() {
	register(command{name: "doctor", summary: "say what this machine can give the sandbox, level by level", run: doctorCmd})
}

func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("doctor", formatUsage,
		"Examines this machine: the kernel features the layers are built on (user namespaces and the\n"+
			"sysctls and AppArmor switch that turn them off, Landlock's ABI, seccomp and whether the kernel\n"+
			"has a 32-bit entry, which cgroup hierarchies can hold a run), each level tried for real (a run of\n"+
			"/bin/true at L0 to L6; for a level that does not run, the first layer missing and the fix), and\n"+
			"the other sandboxes and tools installed for 'attack --sandbox' and the tests (bubblewrap,\n"+
			"firejail, runsc, podman, runc, QEMU with a guest kernel, node, gcc). Well under a second; it\n"+
			"leaves nothing behind.\n"+
			"Exit status: 0 when the default level (L6, run's default) runs here, 125 when it does not.", stderr)
	out := outputFlags(fs, "doctor")
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return usagef("%v", err)
	}
	d, err := doctor.Examine(ctx)
	if err != nil {
		return err
	}
	if err := out.write(stdout, d); err != nil {
		return err
	}
	if !d.DefaultOK {
		return exit(verdict.ExitRunRefused)
	}
	return nil
}
