package report

import _ "embed"

// The mutation-testing world's files and the SARIF schema, vendored from
// their npm packages at these exact versions (Apache-2.0, and MIT for the
// SARIF schema; each directory under third_party/ keeps the licence). `make third-party` fetches them again at
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
	// SARIFSchemaVersion is the @microsoft/jest-sarif package whose
	// SARIF 2.1.0 schema (sarif-2.1.0-rtm.5.json, the OASIS standard's
	// final schema as schemastore publishes it) the SARIF reports are
	// validated against.
	SARIFSchemaVersion = "1.0.0-beta.0"
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

// SARIFSchema is the JSON schema of SARIF 2.1.0 (draft-04), which GitHub
// code scanning reads.
//
//go:embed third_party/sarif-schema/sarif-2.1.0-rtm.5.json
var SARIFSchema []byte
