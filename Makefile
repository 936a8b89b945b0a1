# make test: fetches the real models and the ONNX Runtime library into the
# cache (skipped when present with the right checksums), then runs every test,
# with the race detector on the packages that run goroutines, and a short
# fuzzing pass over the parsers.
GO ?= go
export INLAY_REQUIRE_ASSETS := 1
FUZZTIME ?= 10s

.PHONY: test fetch build vet fuzz bench

build:
	$(GO) build -o inlay ./cmd/inlay

fetch:
	bash scripts/fetch.sh

vet:
	$(GO) vet ./...

test: fetch vet
	$(GO) test -count=1 -timeout 15m ./...
	$(MAKE) fuzz

fuzz:
	@for t in $$($(GO) run ./internal/fuzzlist); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...
