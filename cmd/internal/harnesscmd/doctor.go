package harnesscmd

import (
	"context"
	"flag"
	"io"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/doctor"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

func doctorHelp() string {
	return "Examines this machine: the kernel features the layers are built on (user namespaces and the\n" +
		"sysctls and AppArmor switch that turn them off, Landlock's ABI, seccomp and whether the kernel\n" +
		"has a 32-bit entry, which cgroup hierarchies can hold a run), each level tried for real (a run of\n" +
		"/bin/true at L0 to L6; for a level that does not run, the first layer missing and the fix), and\n" +
		"the other sandboxes the attack command can run under and the tools the tests use (bubblewrap,\n" +
		"firejail, runsc, podman, runc, QEMU with a guest kernel, node, gcc). Well under a second on a\n" +
		"quiet machine; it leaves nothing behind.\n" +
		"Exit status: 0 when the default level (L6, run's default) runs here, 125 when it does not."
}

// doctorOptions are doctor's flags. It shows no progress.
type doctorOptions struct {
	output
}

func (o *doctorOptions) SetFlags(fs *flag.FlagSet) {
	o.output.setFlags(fs, "doctor", &report.Doctor{}, false)
}

func (o *doctorOptions) Validate(cl cli.Line) error {
	return cli.FirstError(cl.NoArgs(), o.output.validate())
}

func doctorCmd(ctx context.Context, o *doctorOptions, stdout, stderr io.Writer) error {
	d, err := doctor.Examine(ctx)
	if err != nil {
		return err
	}
	if err := o.write(stdout, d); err != nil {
		return err
	}
	if !d.DefaultOK {
		return cli.Exit(verdict.ExitRunRefused)
	}
	return nil
}
