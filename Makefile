# Every build and test carries the sqlite_fts5 tag (FTS5 for memory recall).
TAGS := sqlite_fts5
GO ?= go

.PHONY: build test lint bench check run screenshots

build:
	$(GO) build -tags $(TAGS) -o kairos ./cmd/kairos

test:
	$(GO) test -tags $(TAGS) -race -count=1 -parallel 8 -timeout 30m ./cmd/kairos ./adversarial ./...
	$(GO) test -tags $(TAGS) -count=1 -run '^(TestMetamorphic|TestUnknownWordBesideAlwaysAsks)$$' ./clockstate

lint:
	$(GO) vet -tags $(TAGS) ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

bench:
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem ./...

check: lint
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

# The console's pictures in doc/console (needs Chromium: apt-get install chromium).
screenshots:
	KAIROS_SCREENSHOTS=1 $(GO) test -tags $(TAGS) -count=1 -run 'TestConsole(PagesIn|In)Browser' ./cmd/kairos

run: build
	./kairos run
