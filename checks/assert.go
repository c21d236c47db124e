package checks

import "fmt"

// The assertions of a check body. They are the checks' own, not a test
// library's: the checks are part of the product (the binary runs them
// for 'sandboxlab check' and the mutation harness), and a test library
// there linked go-cmp and a Go source parser into every process of
// sandboxlab. A failure's message is what the body says it saw, so each
// call gives one: it becomes the check's evidence in every report.

// Check records a failure, with the message msgAndArgs makes, unless ok
// holds, and goes on. It reports whether ok held.
func (t *T) Check(ok bool, msgAndArgs ...any) bool {
	t.tb.Helper()
	if !ok {
		t.Log(failure("", msgAndArgs))
		t.Fail()
	}
	return ok
}

// Assert is Check, but stops the body when ok does not hold.
func (t *T) Assert(ok bool, msgAndArgs ...any) {
	t.tb.Helper()
	if !t.Check(ok, msgAndArgs...) {
		t.FailNow()
	}
}

// NilError stops the body with err and the message msgAndArgs makes
// when err is not nil.
func (t *T) NilError(err error, msgAndArgs ...any) {
	t.tb.Helper()
	if err != nil {
		t.Log(failure("error: "+err.Error(), msgAndArgs))
		t.FailNow()
	}
}

// failure is what a failed assertion logs: the caller's message (a
// format and its arguments, or values), then what the assertion itself
// saw, when it saw anything.
func failure(seen string, msgAndArgs []any) string {
	msg := ""
	if len(msgAndArgs) > 0 {
		if format, ok := msgAndArgs[0].(string); ok {
			msg = fmt.Sprintf(format, msgAndArgs[1:]...)
		} else {
			msg = fmt.Sprint(msgAndArgs...)
		}
	}
	switch {
	case msg == "" && seen == "":
		return "a condition of the check did not hold"
	case msg == "":
		return seen
	case seen == "":
		return msg
	}
	return msg + ": " + seen
}
