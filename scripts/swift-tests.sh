# Sourced by the scripts that build and run the Swift suites (test.sh, hang-check.sh): how they are
# built and run, in one place.
#
# Optimized, as `make run` builds the product, with `@testable` imports enabled: the suites are
# CPU-bound (real HTTP through NIO and libmicrohttpd, real SQLite), and an optimized build runs
# them in 0.63x the time of a debug build (Benchmarks/README.md, 2026-12-07). Sources use no
# `assert` and no `#if DEBUG`, so a debug build checks nothing of ours that this one skips (overflow,
# bounds and exclusive access are checked in both). A scratch
# folder of its own, so that `make run`'s release build (without testability) and this one do not
# rebuild each other.
#   swift test "${swift_tests[@]}" --skip-build --filter PullTests     one suite, as test.sh runs it
swift_tests=(--scratch-path .build-test -c release -Xswiftc -enable-testing)
