package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The page is opened in a real browser, Debian's chromium, headless and
// offline. The component draws into shadow DOM, which --dump-dom does not
// serialise, so the test adds a probe to its copy of the page: once the
// element has rendered, the probe opens each source file's view in turn,
// collects the mutants the component drew there (their data-mutant-id
// and title, "<mutatorName> <status>") and writes what it found into the
// light DOM, where the dump shows it. The probe also records every
// request the page's Content-Security-Policy refused.

// probeListener goes right after the page's policy, so it hears every
// refusal from the first script on.
const probeListener = `<script>window.__refused = []; document.addEventListener("securitypolicyviolation", e => window.__refused.push(e.violatedDirective + " " + e.blockedURI));</script>`

// probe goes at the end of the body.
const probe = `<script>
(async () => {
  const out = { files: {}, errors: [] };
  const deep = (root, sel, acc) => {
    root.querySelectorAll(sel).forEach(e => acc.push(e));
    root.querySelectorAll("*").forEach(e => { if (e.shadowRoot) deep(e.shadowRoot, sel, acc); });
    return acc;
  };
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  try {
    await customElements.whenDefined("mutation-test-report-app");
    const app = document.querySelector("mutation-test-report-app");
    await app.updateComplete;
    // The files as the component's own tree names them (it folds a
    // directory that all files share into the root).
    const files = [];
    const walk = (node, path) => (node.childResults || []).forEach(c => {
      const p = path.concat([c.name]);
      if (c.file) files.push({ path: p, mutants: c.file.mutants.map(m => String(m.id)) });
      walk(c, p);
    });
    walk(app.rootModel.systemUnderTestMetrics, []);
    for (const { path, mutants } of files) {
      const file = path.join("/"), want = new Set(mutants);
      location.hash = "#mutant/" + path.map(encodeURIComponent).join("/");
      let spans = [];
      for (let i = 0; i < 200; i++) {
        await sleep(50);
        spans = deep(document, "[data-mutant-id]", []);
        if (spans.length && spans.every(s => want.has(s.getAttribute("data-mutant-id")))) break;
      }
      // A mutant is drawn as a dot (its name and status in an SVG
      // <title>) and as the span of code it replaces (in a title
      // attribute).
      out.files[file] = spans.map(s => ({ id: s.getAttribute("data-mutant-id"),
        title: s.getAttribute("title") || (s.querySelector("title") || {}).textContent || "" }));
    }
  } catch (e) {
    out.errors.push(String(e && e.stack || e));
  }
  out.refused = window.__refused;
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

// probeResult is what the probe wrote.
type probeResult struct {
	Files map[string][]struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"files"`
	Errors  []string `json:"errors"`
	Refused []string `json:"refused"`
}

var probeOut = regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`)

// chromium returns the browser's path, or skips the test saying why.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIP: chromium is not installed (apt-get install --no-install-recommends chromium): the HTML report is not checked in a browser")
	return ""
}

// dumpDOM opens path in headless chromium, offline, and returns the DOM
// once the page's scripts are done. The browser runs in a process group
// of its own, killed whole when it is done or the time is up.
func dumpDOM(t *testing.T, browser, path string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-extensions", "--disable-default-apps", "--no-default-browser-check", "--metrics-recording-only",
		// No name resolves: a request that got past the page's policy
		// would fail rather than leave the machine.
		"--host-resolver-rules=MAP * ~NOTFOUND",
		// Timers run in virtual time: the probe's waits cost nothing, and
		// the dump comes once the page has nothing left to do.
		"--virtual-time-budget=60000",
		"--dump-dom", "file://"+path)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever of the browser is left
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium did not finish in 90 s; stderr:\n%s", tail(stderr.String()))
	}
	assert.NilError(t, err, "chromium: %s", tail(stderr.String()))
	return stdout.String()
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// TestPageInBrowser: the mutation page, opened offline in chromium,
// shows the heat map's 96 cells (16 × 6) in the light DOM, and the
// component renders every planted defect at its site with its status;
// the page asks for nothing its policy refuses.
func TestPageInBrowser(t *testing.T) {
	browser := chromium(t)
	m := fixtureMutation()
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, HTML, m, strykerOptions()))
	doc := b.String()
	policy := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)
	loc := policy.FindStringIndex(doc)
	assert.Assert(t, loc != nil, "the page has no policy")
	doc = doc[:loc[1]] + probeListener + doc[loc[1]:]
	doc = strings.Replace(doc, "</body>", probe+"</body>", 1)
	path := filepath.Join(t.TempDir(), "mutate.html")
	assert.NilError(t, os.WriteFile(path, []byte(doc), 0o644))

	start := time.Now()
	dom := dumpDOM(t, browser, path)
	t.Logf("chromium rendered the page in %s", time.Since(start).Round(time.Millisecond))

	// The heat map, as the browser holds it.
	assert.Check(t, is.Contains(dom, `data-rows="16" data-columns="6" data-cells="96"`))
	assert.Check(t, is.Len(heatCell.FindAllString(dom, -1), 96), "heat-map cells in the browser's DOM")

	match := probeOut.FindStringSubmatch(dom)
	assert.Assert(t, match != nil, "the probe wrote nothing: the page's scripts did not run to the end")
	var got probeResult
	assert.NilError(t, json.Unmarshal([]byte(html.UnescapeString(match[1])), &got))
	assert.Check(t, is.Len(got.Errors, 0))
	assert.Check(t, is.Len(got.Refused, 0), "the page asked for something its policy refuses")

	// Every defect, drawn by the component in its site's file, with the
	// status its run gives.
	rendered := map[string]map[string]bool{}
	where := map[string]string{}
	for file, mutants := range got.Files {
		for _, mu := range mutants {
			if rendered[mu.ID] == nil {
				rendered[mu.ID] = map[string]bool{}
			}
			rendered[mu.ID][strings.TrimSpace(mu.Title)], where[mu.ID] = true, file
		}
	}
	for _, d := range m.Defects {
		status, _, _, _ := MutantStatus(d, m.Probes(d.Suite.OrCourse()))
		assert.Check(t, rendered[d.ID][d.ID+" "+status], "defect %s as the component drew it: %v, want %q", d.ID, rendered[d.ID], d.ID+" "+status)
		assert.Check(t, where[d.ID] != "" && strings.HasSuffix(d.Site, where[d.ID]), "defect %s drawn in %q, its site is %s", d.ID, where[d.ID], d.Site)
	}
	t.Logf("the component drew %d defects in %d files", len(rendered), len(got.Files))
	assert.Check(t, is.Len(rendered, len(m.Defects)))
}
