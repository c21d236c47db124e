package report

// The fixtures, for the tests in package report_test: those read the
// reports back through reporttest, which imports report, so report's own
// tests cannot import it.
var (
	FixtureChecks               = fixtureChecks
	FixtureAgent                = fixtureAgent
	FixtureMutation             = fixtureMutation
	FixtureMutationBroken       = fixtureMutationBroken
	FixtureSuitesMutation       = fixtureSuitesMutation
	FixtureSuitesMutationBroken = fixtureSuitesMutationBroken
)
