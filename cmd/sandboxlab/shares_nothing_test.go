package main

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/sandboxtest"
)

// issue43Checks are the promises of issue 43: L5's traced stop, and
// L6's identity and machine-wide state.
const issue43Checks = "traced_not_ended,no_host_identity,no_host_session_path,no_machine_aio,no_host_watch,no_host_writeback"

// TestSharesNothing runs issue 43's checks through the CLI as this user
// and as an ordinary one: each passes, or, at L6 where the machine gives
// that user no control group, fails closed with the refusal; and the
// planted defect of the traced stop fails its check for both.
func TestSharesNothing(t *testing.T) {
	t.Run("as this user", func(t *testing.T) { sharesNothingCase(t, nil) })
	t.Run("as an ordinary user", func(t *testing.T) {
		if !sandbox.HostRoot() {
			t.Skipf("this user (uid %d) is an ordinary one", os.Geteuid())
		}
		cred, name := sandboxtest.OrdinaryUser(t)
		t.Logf("as %s (uid %d)", name, cred.Uid)
		sharesNothingCase(t, cred)
	})
}

func sharesNothingCase(t *testing.T, cred *syscall.Credential) {
	root, err := os.MkdirTemp("", "sandboxlab-shares-test-") // t.TempDir's parent is closed to others
	assert.NilError(t, err)
	defer os.RemoveAll(root)
	assert.NilError(t, os.Chmod(root, 0o755))
	if cred != nil {
		assert.NilError(t, os.Chown(root, int(cred.Uid), int(cred.Gid)))
	}
	env := []string{"TMPDIR=" + root, "XDG_CACHE_HOME=" + root}
	checks := func(args ...string) map[string]report.Check {
		out, _ := asUser(t, cred, env, 0, append([]string{"check", "--only", issue43Checks, "--format", "json"}, args...)...)
		var r report.Checks
		assert.NilError(t, json.Unmarshal([]byte(out), &r), "%q", out)
		got := map[string]report.Check{}
		for _, c := range r.Checks {
			got[c.ID] = c
		}
		return got
	}
	for id, c := range checks() {
		if !c.Passed {
			assert.Check(t, c.Level == 6 && strings.HasPrefix(c.Evidence, "error: sandbox unavailable"),
				"%s failed, and not by L6's refusal: %s", id, c.Evidence)
			continue
		}
		t.Logf("%s: %s", id, c.Evidence)
	}
	traced := checks("--defect", "trace_stop_ended")["traced_not_ended"]
	assert.Check(t, !traced.Passed, "traced_not_ended passed with trace_stop_ended on: %s", traced.Evidence)
	assert.Check(t, is.Contains(traced.Evidence, "before its deadline"))
}
