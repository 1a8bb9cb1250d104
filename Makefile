# pk — read Python pickles without executing them.
GO      ?= go
BIN     ?= bin/pk
PREFIX  ?= /usr/local
FUZZTIME ?= 20s

.PHONY: all build install demo test test-short fuzz bench fixtures clean

all: build

build:
	$(GO) build -o $(BIN) .

# pk plus the pkhash/pkdiff/pktrace links that select a subcommand by name.
install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/pk
	for n in pkhash pkdiff pktrace; do ln -sf pk $(PREFIX)/bin/$$n; done

# Runs pk on the bundled example (no Python needed).
demo: build
	@bash testdata/demo/demo.sh $(BIN)

test:
	$(GO) vet ./...
	$(GO) test ./...

fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

bench: build
	bash scripts/bench.sh

# Regenerates testdata/fixtures from the real producers (needs Python; see testdata/README.md).
fixtures:
	bash testdata/gen/make_fixtures.sh

clean:
	rm -rf bin
