#!/usr/bin/env bash
# Runs every test of the repository: the README's test command, and what CI runs.
#
#   scripts/test.sh            everything
#   FUZZ_SECONDS=0 scripts/test.sh   skip the fuzzing run
#
# One shared target directory (target/) keeps dependencies compiled once per run.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Each step says when it starts (seconds since the start), so a slow run shows where.
started=$SECONDS
step() { printf '\n==> [%4ds] %s\n' "$((SECONDS - started))" "$*"; }

step "set-up: install what is missing (scripts/setup.sh)"
scripts/setup.sh

step "format"
cargo fmt --all -- --check

step "lint (clippy, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

step "layering: a Rust node crate's dependencies (svc-sdk's) compile no project reader, TypeScript reader or engine"
if cargo tree -p svc-sdk --edges normal,build --prefix none | grep -E '^(oxc|rquickjs|svc-frontend|svc-frontend-ts|svc-script|toml) '; then
    echo "svc-sdk depends on the crates above: node crates would build them (see ARCHITECTURE.md)" >&2
    exit 1
fi

step "workspace tests (unit, diagnostics corpus, compile-fail, CLI)"
cargo test --workspace

step "the Builder: its layout under Node.js, and the Builder itself in headless Chromium on the shop"
# target/debug/svc is the binary the workspace tests just built; screenshots of each view
# are left in target/builder-screenshots.
(cd builder && SVC_BIN="$PWD/../target/debug/svc" npm test)

step "bench/loadgen, the open-loop load generator of bench/load.py: its own tests (real sockets)"
CARGO_TARGET_DIR="$PWD/target" cargo test --quiet --manifest-path bench/loadgen/Cargo.toml

step "the TypeScript SDK (@svc/sdk): unit tests, type tests with tsc, offline installs"
(cd sdk-ts && npm test)

step "each example's node crate (Rust) or node package (TypeScript) passes its own tests, and its flow tests reach every branch, on the shipped build and on the dev build"
for example in examples/*/; do
    # The node crate reaches svc-sdk through .svc/source, which any svc command links.
    cargo run --quiet -p svc -- check "$example"
    if [ -f "$example/Cargo.toml" ]; then
        (cd "$example" && CARGO_TARGET_DIR="$PWD/../../target/examples" cargo test --quiet)
    fi
    if [ -f "$example/package.json" ]; then
        # @svc/sdk comes from .svc/source/sdk-ts, which `svc check` just linked; tsc
        # reads the asset types it wrote to .svc/types.
        (cd "$example" && npm ci --no-audit --no-fund --loglevel=error && npm test)
    fi
    cargo run --quiet -p svc -- test "$example" --min-coverage 100
    # And against the server `svc dev` builds (TypeScript in the engine, svc's runtime
    # linked as a shared library): both paths answer every case alike.
    cargo run --quiet -p svc -- test "$example" --dev-build
done

FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
if [ "$FUZZ_SECONDS" -gt 0 ] && [ "${SVC_CI_PRUNE:-0}" = 1 ]; then
    # CI only (.ci/run sets it): the fuzz build is the last step and has its own target
    # directory; the test artifacts are no longer needed, and CI disks have run out here.
    step "free the disk the tests used before the fuzz build"
    rm -rf target/debug target/examples target/e2e-bin target/corpus-build target/tests
fi
if [ "$FUZZ_SECONDS" -gt 0 ]; then
    step "fuzz the loader and checker for ${FUZZ_SECONDS}s"
    # cargo-fuzz needs nightly flags; use a nightly toolchain when there is one.
    if rustup run nightly rustc --version >/dev/null 2>&1; then toolchain=(+nightly); else toolchain=(); export RUSTC_BOOTSTRAP=1; fi
    mkdir -p compiler/fuzz/corpus/check
    cp compiler/fuzz/seeds/* compiler/fuzz/corpus/check/
    # A minute that looks for panics: optimised lightly and without AddressSanitizer
    # (`-s none`; the checker is safe Rust), the build of 218 crates took 356 s here
    # where ASan at opt-level 1 took 615 s and at 3 780 s, and the minute runs about six
    # times the inputs. Longer fuzzing (docs/fuzzing.md) keeps ASan and opt-level 3.
    # Three quarters of the time for the loader and checker, the rest for the field
    # constraint checks servers run on every request value (`constraints`).
    check_seconds=$((FUZZ_SECONDS * 3 / 4))
    (cd compiler/fuzz && CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo "${toolchain[@]}" fuzz run -s none check corpus/check -- -max_total_time="$check_seconds" -max_len=8192)
    step "fuzz the field-constraint checks for $((FUZZ_SECONDS - check_seconds))s"
    mkdir -p compiler/fuzz/corpus/constraints
    (cd compiler/fuzz && CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo "${toolchain[@]}" fuzz run -s none constraints corpus/constraints -- -max_total_time="$((FUZZ_SECONDS - check_seconds))" -max_len=512)
fi

step "all tests passed"
