#!/usr/bin/env bash
# Debian's Chromium for the report's browser test (tests/test_report.py), driven there by
# Playwright with executable_path; Playwright's own browser download is never used.
# Idempotent: does nothing where /usr/bin/chromium exists.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium
