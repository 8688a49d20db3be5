#!/usr/bin/env bash
# Installs what the tests need when it is missing, before anything is built, so that a
# fresh machine fails (or is fixed) in seconds rather than after twenty minutes of builds.
# scripts/test.sh runs it first; it is safe to run again (it only installs what is missing).
#
#   - real servers the tests start on loopback ports (never mocked, never skipped):
#     redis-server (shared rate limiter), PostgreSQL (shared workspace store), nginx (the
#     deployment example's load balancer), wrk (its load), openssl (the private CA of the
#     TLS tests of both stores);
#   - rustfmt and clippy (lint steps), llvm-tools (`svc build --pgo`'s test), cargo-fuzz
#     (fuzzing step);
#   - Node.js and npm (the TypeScript SDK's tests, and the test comparing its manifests
#     with the Rust SDK's), and the SDK's pinned dev dependency, TypeScript (npm ci);
#   - Python: an OpenAPI 3.1 validator, JSON Schema and YAML for the CLI tests, and PyJWT
#     with `cryptography` for the identity provider of Check JWT's tests;
#   - Debian's Chromium (the Builder's browser tests, headless; no browser download) and
#     the tests' pinned npm packages, playwright-core, axe-core and TypeScript (npm ci in builder/).
set -euo pipefail
cd "$(dirname "$0")/.."

missing_apt=()
command -v redis-server >/dev/null || missing_apt+=(redis-server)
command -v nginx >/dev/null || missing_apt+=(nginx-light)
command -v wrk >/dev/null || missing_apt+=(wrk)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing_apt+=(postgresql)
command -v openssl >/dev/null || missing_apt+=(openssl)
python3 -c 'import pip' >/dev/null 2>&1 || missing_apt+=(python3-pip)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing_apt+=(python3-venv)
command -v node >/dev/null || missing_apt+=(nodejs)
command -v npm >/dev/null || missing_apt+=(npm)
# Chromium only recommends a font; without one its screenshots show no text.
command -v chromium >/dev/null || missing_apt+=(chromium fonts-liberation)

if [ ${#missing_apt[@]} -gt 0 ]; then
    echo "setup: installing ${missing_apt[*]} (apt)"
    if [ "$(id -u)" = 0 ]; then
        sudo_=()
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo_=(sudo -n)
    else
        echo "setup: missing ${missing_apt[*]}; install them (apt-get install ${missing_apt[*]}) or run as root" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_[@]}" apt-get update -qq
    "${sudo_[@]}" apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"
    # Debian starts packaged services on install; the tests want the ports to themselves.
    for service in redis-server nginx postgresql; do
        ("${sudo_[@]}" service "$service" stop || true) >/dev/null 2>&1
    done
fi

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    echo "setup: installing rustfmt and clippy (rustup)"
    rustup component add rustfmt clippy
fi
# llvm-profdata of rustc's own LLVM: `svc build --pgo` merges its profiles with it
# (compiler/tests/cli_build.rs builds an example so).
if [ ! -x "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata" ]; then
    echo "setup: installing llvm-tools (rustup)"
    rustup component add llvm-tools
fi
if [ "${FUZZ_SECONDS:-60}" -gt 0 ] && ! command -v cargo-fuzz >/dev/null; then
    echo "setup: installing cargo-fuzz (cargo install)"
    cargo install cargo-fuzz --locked
fi

# The Python validators, PyJWT with `cryptography` (the identity provider Check JWT's
# tests start, compiler/tests/e2e/jwt_provider.py, signs its tokens with a library that
# is not svc's), and the providers' own webhook libraries, `stripe` and
# `standardwebhooks` (compiler/tests/e2e/webhook_signer.py: Check Signature's tests).
if ! python3 -c 'import openapi_spec_validator, jsonschema, yaml, jwt, cryptography, stripe, standardwebhooks' >/dev/null 2>&1; then
    echo "setup: installing the Python validators, PyJWT and the webhook libraries (pip)"
    pip=(python3 -m pip install --quiet --disable-pip-version-check)
    packages=('openapi-spec-validator==0.9.*' 'jsonschema==4.*' 'PyYAML==6.*' 'PyJWT[crypto]==2.*' 'stripe==12.*' 'standardwebhooks==1.*')
    # Debian marks its Python as externally managed; these are test tools, not the system's.
    "${pip[@]}" "${packages[@]}" 2>/dev/null || "${pip[@]}" --break-system-packages "${packages[@]}"
fi

# schemathesis, for the conformance tests of every example against its OpenAPI document
# (compiler/tests/e2e/conformance.rs), in a virtual environment of its own: its
# dependencies (hypothesis, jsonschema, …) stay apart from the validators above.
if [ ! -x target/tools/schemathesis/bin/st ]; then
    echo "setup: installing schemathesis (pip, in target/tools/schemathesis)"
    python3 -m venv target/tools/schemathesis
    target/tools/schemathesis/bin/pip install --quiet --disable-pip-version-check 'schemathesis==4.32.*'
fi

if [ ! -x sdk-ts/node_modules/.bin/tsc ]; then
    echo "setup: installing the TypeScript SDK's dev dependencies (npm ci in sdk-ts/)"
    (cd sdk-ts && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -d builder/node_modules/playwright-core ] || [ ! -d builder/node_modules/axe-core ] || [ ! -x builder/node_modules/.bin/tsc ]; then
    echo "setup: installing the Builder tests' dependencies (npm ci in builder/)"
    (cd builder && npm ci --no-audit --no-fund --loglevel=error)
fi
