package report

// Options says how to render what the model alone does not say. The
// zero Options renders at DefaultWidth.
type Options struct {
	// Width is the width text tables and prose are fitted to (0:
	// DefaultWidth). Markdown is never wrapped.
	Width int
}

func (o Options) width() int {
	if o.Width > 0 {
		return o.Width
	}
	return DefaultWidth
}
