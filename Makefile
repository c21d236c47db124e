# sandboxlab: the two set-up commands are `make report` and `make test`.
GO      ?= go
BIN     := bin/sandboxlab
GOFLAGS ?=

.PHONY: build test vet bench report clean

build:
	$(GO) build -o $(BIN) ./cmd/sandboxlab

# Unit and integration tests, then the full mutation run once.
test: build vet
	$(GO) test -count=1 -timeout 30m ./...

vet:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags nomutants ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 200x ./sandbox

report: build
	./$(BIN) mutate

clean:
	rm -rf bin reports
