# sandboxlab: the two set-up commands are `make report` and `make test`.
GO      ?= go
BIN     := bin/sandboxlab

# A static binary: every process of a run (the CLI, the re-executed init)
# starts without the dynamic loader, libc and the cgo runtime's thread
# start-up: about 1 ms sooner each. Nothing here needs cgo: the
# resolver and os/user have pure Go forms.
export CGO_ENABLED ?= 0

.PHONY: build test vet bench report tables vm-column third-party clean

# Three binaries, shipped side by side: sandboxlab (run, session, files:
# the sandbox library and little else, so that a run starts as soon as a
# Go program can), sandboxlab-harness (the commands that judge the
# sandbox, with the renderers and the MCP SDK; sandboxlab execs it) and
# sandboxlab-init (the init every run starts).
build:
	$(GO) build -o bin/ ./cmd/sandboxlab ./cmd/sandboxlab-harness ./cmd/sandboxlab-init

# The unit and integration tests, then the mutation tests of harness
# (the test binary serves as the worker): the full mutation run once
# (TestMutate, about 6 minutes on two cores), the soundness of
# selection on a subset and the masking search's rediscovery of the
# course's case (about 4 minutes together), and the flag mutation of the
# shipped bubblewrap profile on four of its flags (TestMutateFlagsBubblewrap). With -short the heavy tests
# that the mutation run's baseline repeats (all checks, the whole attack
# matrix) step aside; the mutation runs go alone so that their verdicts
# share the cores with nothing else.
test: build vet
	$(GO) test -count=1 -short -timeout 20m ./...
	$(GO) test -count=1 -timeout 40m -run '^TestMutate' -v ./harness

# staticcheck is pinned by the tool directive in go.mod.
vet:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags nomutants ./...
	$(GO) tool staticcheck ./...
	$(GO) tool staticcheck -tags nomutants ./...

# Start-up figures, side by side in one run: whole-process medians of
# 'sandboxlab run' at L0, L5 and L6 next to /bin/true, bubblewrap and
# unshare (interleaved, 200 runs each; peers not installed are skipped),
# then where the time goes (the Go initialisers of the CLI and of the
# init, the init's exec to the program's exec; built into bin/ so that
# its runs start the shipped sandboxlab-init), then the library's own (a
# Run in a session that lives across runs). A busy machine moves them
# all: read the load average it prints.
bench: build
	$(GO) build -o bin/startbench ./cmd/startbench
	./bin/startbench -bin $(BIN) -n 200
	$(GO) test -run '^$$' -bench . -benchtime 200x ./sandbox

report: build
	./$(BIN) mutate

# Every table of the course notes' parts 2 and 4 that this project
# reproduces, regenerated into $(REPORTS)/: agent.md (the task x tool
# table), experiment.md (the CPU quirk, RLIMIT_NPROC, layer hiding),
# attack.md (the 16x6 matrix) and mutate.md (the mutation summary, the
# per-defect table and the baseline matrix), each also as .txt, .json and
# .junit.xml; attack and mutate also as .html (the heat map; for mutate
# the mutation-testing-elements component too) and mutate as
# .stryker.json (Stryker's mutation-testing-report-schema). About 4
# minutes on two cores; mutate runs last, so its exit code (the gate) is
# make's.
REPORTS ?= reports
tables: build
	./$(BIN) agent --out $(REPORTS) >/dev/null
	./$(BIN) experiment all --out $(REPORTS) >/dev/null
	./$(BIN) attack --out $(REPORTS) >/dev/null
	./$(BIN) mutate --out $(REPORTS) >/dev/null
	@echo "tables written to $(REPORTS)/{agent,experiment,attack,mutate}.md"
	@echo "pages written to $(REPORTS)/{attack,mutate}.html; Stryker's JSON to $(REPORTS)/mutate.stryker.json"

# The whole virtual-machine column: every attack under the qemu profile,
# a guest booted per cell (under TCG about 6-10 s a boot on two idle
# cores; the attacks whose evidence is in the program's processes are
# n/a and boot nothing). make test runs one cell of it. The matrix goes
# to $(REPORTS)/vm-column.md; the time it took is printed at the end.
vm-column: build
	@mkdir -p $(REPORTS)
	@start=$$(date +%s); \
	./$(BIN) attack --sandbox qemu --format markdown > $(REPORTS)/vm-column.md; rc=$$?; \
	sed -n '/^## Sandboxes/,/^## Evidence/p' $(REPORTS)/vm-column.md | grep '^| qemu'; \
	echo "vm-column: $$(( $$(date +%s) - start )) s (load average: $$(cut -d' ' -f1-3 /proc/loadavg)); the matrix is in $(REPORTS)/vm-column.md"; \
	exit $$rc

# Fetches the vendored mutation-testing files again from npm, at the
# versions pinned in report/third_party.go (see report/third_party/).
THIRD_PARTY := report/third_party
MTE_VERSION = $(shell sed -n 's/^.*ElementsVersion = "\(.*\)"/\1/p' report/third_party.go)
SCHEMA_VERSION = $(shell sed -n 's/^\tSchemaVersion = "\(.*\)"/\1/p' report/third_party.go)
SARIF_VERSION = $(shell sed -n 's/^.*SARIFSchemaVersion = "\(.*\)"/\1/p' report/third_party.go)
third-party:
	@test -n "$(MTE_VERSION)" && test -n "$(SCHEMA_VERSION)" && test -n "$(SARIF_VERSION)" || { echo "no versions in report/third_party.go"; exit 1; }
	set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cd "$$tmp" && npm pack --silent mutation-testing-elements@$(MTE_VERSION) mutation-testing-report-schema@$(SCHEMA_VERSION) >/dev/null; \
	mkdir e s && tar xzf mutation-testing-elements-$(MTE_VERSION).tgz -C e && tar xzf mutation-testing-report-schema-$(SCHEMA_VERSION).tgz -C s; \
	cd "$(CURDIR)"; \
	cp "$$tmp/e/package/dist/mutation-test-elements.js" "$$tmp/e/package/LICENSE" $(THIRD_PARTY)/mutation-testing-elements/; \
	cp "$$tmp/s/package/dist/src/mutation-testing-report-schema.json" "$$tmp/s/package/LICENSE" $(THIRD_PARTY)/mutation-testing-report-schema/
	set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cd "$$tmp" && npm pack --silent @microsoft/jest-sarif@$(SARIF_VERSION) >/dev/null && tar xzf microsoft-jest-sarif-$(SARIF_VERSION).tgz; \
	grep -q '"license": "MIT"' package/package.json || { echo "@microsoft/jest-sarif no longer declares MIT"; exit 1; }; \
	cp package/lib/schemas/sarif-2.1.0-rtm.5.json "$(CURDIR)/$(THIRD_PARTY)/sarif-schema/"
	@echo "$(THIRD_PARTY): mutation-testing-elements $(MTE_VERSION), mutation-testing-report-schema $(SCHEMA_VERSION), @microsoft/jest-sarif $(SARIF_VERSION)"

clean:
	rm -rf bin reports
