#!/usr/bin/env bash
# Chromium for the report's browser tests (tests/test_report.py, driven there by Playwright with
# executable_path; Playwright's own browser download is never used). Run by `make test`.
# Does nothing where a Chromium is on PATH; else installs Debian's package (as root, or through sudo),
# and where it cannot, fails saying why and what to do.
set -euo pipefail
for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
        exit 0
    fi
done
cannot() {
    echo "make test: the report's browser tests need Chromium, and $1." >&2
    echo "Install it (Debian, Ubuntu: apt-get install chromium), or skip those tests with" >&2
    echo "  make test KBENCH_REQUIRE_BROWSER=0" >&2
    exit 1
}
command -v apt-get >/dev/null 2>&1 || cannot "there is none on PATH and no apt-get to install it with"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || cannot "installing it needs root (no sudo here)"
    SUDO="sudo"
    [ -t 0 ] || SUDO="sudo -n"  # off a terminal (CI): fail rather than wait for a password
    echo "make test: installing Chromium for the report's browser tests (sudo apt-get install chromium)" >&2
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || cannot "apt-get update failed (above)"
$SUDO apt-get install -y -qq --no-install-recommends chromium || cannot "apt-get could not install it (above)"
