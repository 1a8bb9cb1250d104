# pk — read Python pickles without executing them.
GO      ?= go
BIN     ?= bin/pk
PREFIX  ?= /usr/local
FUZZTIME ?= 20s
# Where make install puts things under $(DESTDIR)$(PREFIX); pk's --help names DOCDIR.
MANDIR  ?= $(PREFIX)/share/man/man1
DOCDIR  ?= $(PREFIX)/share/doc/pk
BASHDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHDIR ?= $(PREFIX)/share/fish/vendor_completions.d
GEN     ?= $(BIN).gen
LDFLAGS ?= -X github.com/pk-tools/pk/cmd.DocDir=$(DOCDIR)
# pk is pure Go: built without cgo it is a static binary that loads no libc
# (and starts with 1.6 MB less resident). CGO_ENABLED=1 make ... still works.
export CGO_ENABLED ?= 0

.PHONY: all build install demo test test-full test-integrations fuzz bench fixtures clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

# pk plus the pkhash/pkdiff/pktrace links that select a subcommand by name,
# man pages (cmd/genman: cobra's doc package, kept out of pk), bash, zsh and fish completions
# of pk and of the links (pk gen-completions), the guides (docs/*.md) and the
# --json schemas (docs/schema/, which docs/json.md links).
install: build
	rm -rf $(GEN)
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/genman $(GEN)/man1
	$(BIN) gen-completions $(GEN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(BASHDIR) $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(FISHDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pk
	for n in pkhash pkdiff pktrace; do ln -sf pk $(DESTDIR)$(PREFIX)/bin/$$n; done
	install -m 0644 $(GEN)/man1/*.1 $(DESTDIR)$(MANDIR)
	install -m 0644 $(GEN)/bash/* $(DESTDIR)$(BASHDIR)
	install -m 0644 $(GEN)/zsh/_* $(DESTDIR)$(ZSHDIR)
	install -m 0644 $(GEN)/fish/*.fish $(DESTDIR)$(FISHDIR)
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)
	install -d $(DESTDIR)$(DOCDIR)/schema
	install -m 0644 docs/schema/*.schema.json $(DESTDIR)$(DOCDIR)/schema

# Runs pk on the bundled example (no Python needed).
demo: build
	@bash testdata/demo/demo.sh $(BIN)

# make test: go vet, go test -short (the corpus tests walk a fixed sample of
# their files, option sets and seeds: testfile.Sample; the Python load tests
# and the large cost-shape runs are skipped; each cost shape runs an eighth
# of the commands), then the integrations. 6.6 min on 2 CPUs, quiet, on a
# fresh clone (6 Dec 2026, session 38's end: 721 s of CPU); 8 min at a load
# of 5-7. Ten minutes is the limit.
test:
	$(GO) vet ./...
	$(GO) test -short -timeout 15m ./...
	$(MAKE) --no-print-directory test-integrations

# make test-full: every test over every file, with real Python (pk canon's
# outputs loaded by cloudpickle, dill, numpy, torch...) and every cost shape
# through every command against its bounds. CI (.ci/run) runs it after make
# test; about 20 minutes on 2 CPUs. -timeout: go test's default of 10
# minutes a package is what pkg/write's tests came to on a loaded machine.
# The cost shapes run after the rest, not beside the other packages' tests:
# their bounds are CPU time and peak memory, which a machine busy with
# pkg/write's tests inflates by up to twice (session 38's CI: pk canon of
# streams_none.pkl.gz at 6.6-7.0 s of CPU, 3.4-3.7 s alone).
test-full:
	$(GO) test -timeout 30m -skip '^TestCostShapes$$' ./...
	$(GO) test -timeout 30m -run '^TestCostShapes$$' ./cmd

# The pre-commit hooks and the GitHub Action, run for real (scripts/test-integrations.sh,
# about 10 s; the pre-commit part is skipped when pre-commit is not installed).
test-integrations: build
	bash scripts/test-integrations.sh $(BIN)

fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

bench: build
	bash scripts/bench.sh

# Regenerates testdata/fixtures from the real producers (needs Python; see testdata/README.md).
fixtures:
	bash testdata/gen/make_fixtures.sh

clean:
	rm -rf bin
