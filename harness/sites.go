package harness

import (
	"io/fs"
	"os"
	"sync"

	"sandboxlab/harness/gosource"
	"sandboxlab/report"
)

// SiteSpans returns the locator report.Options.Locate takes: the spans
// of defect id's planted sites in the file path of src (the sources
// built into the binary, sandboxlab.Sources, or a checkout). Each file
// is parsed once, however many defects are planted in it.
func SiteSpans(src fs.FS) func(path, id string) ([]report.SourceSpan, error) {
	var mu sync.Mutex
	parsed := map[string]*gosource.Sites{}
	return func(path, id string) ([]report.SourceSpan, error) {
		mu.Lock()
		sites, ok := parsed[path]
		mu.Unlock()
		if !ok {
			var err error
			if sites, err = gosource.ReadSites(src, path); err != nil {
				return nil, err
			}
			mu.Lock()
			parsed[path] = sites
			mu.Unlock()
		}
		var out []report.SourceSpan
		for _, s := range sites.Of(id) {
			out = append(out, report.SourceSpan{StartLine: s.Start.Line, StartColumn: s.Start.UTF16Column,
				EndLine: s.End.Line, EndColumn: s.End.UTF16Column})
		}
		return out, nil
	}
}

// SiteLines returns the line function report.WriteGitHubAnnotations
// takes: the line of each defect's first planted site, under the first
// of roots (directories) whose file has it, or line 1 when none has.
func SiteLines(roots ...string) func(report.Defect) int {
	fss := make([]fs.FS, len(roots))
	for i, r := range roots {
		fss[i] = os.DirFS(r)
	}
	line := gosource.LineFunc(fss...)
	return func(d report.Defect) int { return line(d.Site, d.ID) }
}
