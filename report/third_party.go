package report

import _ "embed"

// The mutation-testing world's files, vendored from their npm packages
// at these exact versions (Apache-2.0; each directory under third_party/
// keeps the package's LICENSE). `make third-party` fetches them again at
// the versions named here. They are embedded so a report opens with no
// network: the page inlines the component, and the tests validate
// against the schema offline.
const (
	// ElementsVersion is the mutation-testing-elements package the HTML
	// page inlines.
	ElementsVersion = "3.9.0"
	// SchemaVersion is the mutation-testing-report-schema package the
	// Stryker report is validated against.
	SchemaVersion = "3.8.4"
)

// elementsJS is mutation-testing-elements' browser bundle
// (dist/mutation-test-elements.js), which defines the
// <mutation-test-report-app> element.
//
//go:embed third_party/mutation-testing-elements/mutation-test-elements.js
var elementsJS string

// elementsLicense is the bundle's licence, which the page carries with
// it.
//
//go:embed third_party/mutation-testing-elements/LICENSE
var elementsLicense string

// StrykerSchema is the JSON schema of the Stryker report
// (mutation-testing-report-schema.json).
//
//go:embed third_party/mutation-testing-report-schema/mutation-testing-report-schema.json
var StrykerSchema []byte
