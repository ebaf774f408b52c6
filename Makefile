# Braid's build. `make demo` and `make test` work on a fresh machine with Go.
GO        ?= go
BIN       := $(CURDIR)/bin
GOFLAGS   ?=
export GOTOOLCHAIN := local

PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1

.PHONY: all build demo test test-short test-faults test-diff proto bench fuzz lint vulncheck fmt vet clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

## demo: start an embedded local cluster, run the orders/shipments join, print the result.
demo: build
	$(BIN)/braid sql --local -f examples/orders-shipments.sql

## test: every test, the conformance suite and the multi-process cluster tests included.
test: build
	BRAID_BIN=$(BIN) $(GO) test -count=1 -timeout 20m ./...

## test-faults: the fault-injection suite's long form: 50 task-manager kills over 4M events.
test-faults: build
	BRAID_BIN=$(BIN) BRAID_FAULT_KILLS=50 BRAID_FAULT_ROWS=4000000 $(GO) test -count=1 -timeout 60m -run 'TestFaults' -v ./e2e/

## test-diff: the differential test's long form: DIFF_CASES random queries (5000)
## from seed DIFF_SEED (a new one each run unless given), compared with the reference.
DIFF_CASES ?= 5000
DIFF_SEED  ?= $(shell date +%s)
test-diff:
	$(GO) test -count=1 -timeout 120m -run TestDifferential -v ./e2e/difftest/ \
		-difftest.cases=$(DIFF_CASES) -difftest.seed=$(DIFF_SEED) $(if $(DIFF_FEATURES),-difftest.features=$(DIFF_FEATURES))

test-short:
	$(GO) test -short -count=1 ./...

## bench: the benchmarks of the exchange, shuffle, join and state, then the CLI runners.
bench: build
	$(GO) test -run '^$$' -bench . -skip Spill ./shuffle/ ./operators/ ./state/ ./bench/
	$(BIN)/braid bench local-exchange
	$(BIN)/braid bench remote-shuffle
	$(BIN)/braid bench join

## proto: regenerate the committed protobuf code (needs protoc; .ci/run installs it).
proto:
	@command -v protoc >/dev/null || { echo "make proto: protoc not found (apt-get install protobuf-compiler)"; exit 1; }
	GOBIN=$(BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(BIN) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH=$(BIN):$$PATH protoc -I proto --go_out=. --go_opt=module=github.com/braidflow/braid \
		--go-grpc_out=. --go-grpc_opt=module=github.com/braidflow/braid proto/braid/v1/*.proto

## fuzz: run every fuzz target for FUZZTIME each (10m by default; .ci/run
## runs each for a count of executions). Go 1.26's fuzz coordinator can fail a
## duration-bounded run with a bare "context deadline exceeded" at the deadline
## (go.dev/issue/75804, fixed in Go 1.27): such a failure that wrote no new
## input under testdata/fuzz is reported and not counted; any other fails.
FUZZTIME ?= 10m
FUZZ_TARGETS := ./sql/parser:FuzzParse ./planner:FuzzPlan ./jobgraph:FuzzFromProto \
	./shuffle:FuzzDecodeFrame ./connectors:FuzzJSONFormat ./expr:FuzzExprJSON \
	./taskmanager:FuzzDeployTasks ./types:FuzzRowDecoder ./types:FuzzValidateComposite \
	./expr:FuzzJSONPath ./expr:FuzzParseJSON ./connectors:FuzzFakerExpr
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; corpus=$$pkg/testdata/fuzz/$$name; \
		echo "--- $$name ($$pkg, $(FUZZTIME))"; \
		before=$$(ls $$corpus 2>/dev/null | wc -l); \
		out=$$(mktemp); \
		{ $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
			echo $$? > $$out.rc; } 2>&1 | tee $$out; \
		if [ "$$(cat $$out.rc)" = 0 ]; then rm -f $$out $$out.rc; continue; fi; \
		after=$$(ls $$corpus 2>/dev/null | wc -l); \
		if [ "$$before" = "$$after" ] && tail -n 6 $$out | grep -q '^    context deadline exceeded$$'; then \
			echo "$$name: the fuzz coordinator's deadline race (go.dev/issue/75804), no failing input; not counted"; \
			rm -f $$out $$out.rc; continue; fi; \
		rm -f $$out $$out.rc; exit 1; \
	done

## vulncheck: govulncheck against a vulnerability database built from the
## golang.org/x/vulndb module (the Go module proxy serves it, so vuln.go.dev
## need not be reachable); fails on a vulnerability Braid's code calls in a
## required module, warns on the Go toolchain's own (.ci/vulns.py).
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
GOVULNCHECK_VERSION := v1.9.0
vulncheck:
	@test -f bin/vulndb-$(VULNDB_VERSION)/index/db.json || { \
		dir=$$(cd /tmp && $(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') && \
		(cd /tmp && $(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns $$dir/data/osv -out $(CURDIR)/bin/vulndb-$(VULNDB_VERSION)); }
	GOBIN=$(CURDIR)/bin $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
	bin/govulncheck -db file://$(CURDIR)/bin/vulndb-$(VULNDB_VERSION) -format json ./... > bin/vulns.json
	python3 .ci/vulns.py < bin/vulns.json

## lint: staticcheck (installed into bin/ from the Go module proxy).
STATICCHECK_VERSION := v0.8.2
lint:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(BIN)/staticcheck ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
