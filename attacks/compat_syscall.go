package attacks

import (
	"os"
	"path/filepath"
	"strings"

	vocab "sandboxlab/verdict"
)

var compatSyscallSpec = &spec{
	id:        "compat_syscall",
	escapes:   "makes a directory on the host through the 32-bit system-call entry point",
	firstStop: 6,
	needs:     vocab.CompatEntry,
	new:       func() attack { return &compatSyscall{} },
	elsewhere: elsewhere{rootRisk: "it makes a directory in its working directory through system-call numbers that mean other calls on x86-64"},
}

// compatSyscall's program makes a directory named after the cell's token
// in its working directory: the host looks for it there.
type compatSyscall struct {
	name string
}

func (c *compatSyscall) args(e *env) []string {
	c.name = "compat-" + e.token
	return []string{c.name}
}

func (c *compatSyscall) judge(e *env) verdict {
	for _, dir := range []string{e.session.Dir(), e.fx.appDir} {
		if st, err := os.Stat(filepath.Join(dir, c.name)); err == nil && st.IsDir() {
			return escaped("%s appeared in %s, made through int 0x80", c.name, dir)
		}
	}
	out := strings.ReplaceAll(strings.TrimSpace(e.res.Stdout), "\n", "; ")
	mechanism := "system-call filter"
	if strings.Contains(out, "signal 31") {
		mechanism += ": SIGSYS"
	}
	return e.layer(e.policy.Hardened.SyscallFilter, mechanism, "no directory on the host; %s", out)
}
