# todosync: `make run` starts the dashboard, `make test` runs every test.
ARGS ?=

.PHONY: run test build bench format clean

run:
	@scripts/install-deps.sh run
	swift build -c release --product todosync
	.build/release/todosync $(ARGS)

test:
	@scripts/test.sh

build:
	@scripts/install-deps.sh run
	swift build -c release --product todosync

bench:
	@scripts/install-deps.sh bench
	Benchmarks/run-all.sh

format:
	swift format --in-place --recursive Sources Tests Benchmarks Package.swift

clean:
	rm -rf .build .build-test .venv-test .build-log.txt .build-debug-log.txt
