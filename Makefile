# robothub: one Makefile with the targets a newcomer expects.
#   make run    the project's main job on its embedded defaults
#   make test   every test suite (what CI runs)
#   make bench  every benchmark; figures go to docs/BENCHMARKS.md
#   make lint   gofmt, go vet, staticcheck
#   make build  the binaries, into ./bin

GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/robothub/robothub/core/version.Version=$(VERSION)
STATICCHECK_VERSION ?= latest

.PHONY: run test test-go vet bench load-receiver lint build clean

build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cli/... ./robotd/cmd/...

run: build
	$(BIN)/robothub serve --addr 127.0.0.1:7860 \
		--route hello=log \
		--route stamp=exec:'sh -c "echo $$WEBHOOK_EVENT_SCOPE $$WEBHOOK_EVENT_ACTION on $$WEBHOOK_REPO_NAME"'

vet:
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 -timeout 15m ./...

test: vet test-go test-python

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The receiver's load command: receiver vs a bare net/http handler, driven by wrk (apt-get install wrk).
load-receiver:
	ROBOTHUB_LOAD=1 $(GO) test -count=1 -run TestLoadReceiverVersusBareHandler -v ./adapters/nethttp

lint: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

clean:
	rm -rf $(BIN)

# Robot daemon (robotd): run it on the simulated robot; measure it (figures in docs/BENCHMARKS.md).
# The benchmark venv (51 apps) is cached in $${TMPDIR:-/tmp}/robotd-bench-venv.
.PHONY: run-daemon bench-daemon
run-daemon:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/robot-daemon ./robotd/cmd/robot-daemon
	$(BIN)/robot-daemon --sim --data-dir .robothub/robot-daemon --log-level info

bench-daemon:
	$(GO) test -run '^$$' -bench 'ListApps' -benchtime 3000x ./robotd/
	$(GO) test -run '^$$' -bench 'StartApp|StopCooperativeApp|StateStream50Hz' -benchtime 20x ./robotd/
	$(GO) test -run '^$$' -bench 'IdleRSS' -benchtime 3x ./robotd/

# Python SDK (robotd/pysdk): unittest against a real robot-daemon --sim that the tests start on a free
# loopback port.
.PHONY: test-python
test-python:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/robot-daemon ./robotd/cmd/robot-daemon
	cd robotd/pysdk && ROBOT_DAEMON_BIN=$(CURDIR)/$(BIN)/robot-daemon python3 -m unittest discover -s tests -t .

# Robot apps (robot-app-assistant): the performance targets (figures in docs/BENCHMARKS.md).
.PHONY: bench-apps
bench-apps:
	$(GO) test -run '^$$' -bench 'DefaultAppRunning' -benchtime 20x ./cli/robot-app-assistant/
	$(GO) test -run '^$$' -bench 'Check$$' -benchtime 10x ./cli/robot-app-assistant/
	$(GO) test -run '^$$' -bench 'CheckColdCache' -benchtime 3x ./cli/robot-app-assistant/
