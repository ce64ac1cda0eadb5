#!/usr/bin/env bash
# `make test` runs this before pytest: the browser tests (tests/browser/) need Debian's
# Chromium. As root with apt-get it installs it;
# otherwise the rest of the suite runs and these tests are skipped, and this says so loudly
# (again after pytest with `report`). CI (.ci/run) sets TRIPLET_LENS_REQUIRE_BROWSER=1, so a
# missing Chromium fails there instead.
set -u
cd "$(dirname "$0")/.."

have_chromium() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
  || command -v google-chrome >/dev/null 2>&1; }

browser_tests() { grep -rl "needs_chromium()" tests/browser --include="test_*.py" | tr '\n' ' '; }

banner() {
  echo "################################################################################"
  echo "# make test: SKIPPING THE BROWSER TESTS: $1"
  echo "#   skipped: $(browser_tests)"
  echo "#   to run them: apt-get install -y chromium (as root), then make test again"
  echo "################################################################################"
}

if have_chromium; then
  exit 0
fi
if [ "${1:-}" = "report" ]; then
  banner "Chromium is not installed"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "make test: installing Debian's Chromium for the browser tests (apt-get install -y chromium)"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq chromium >/dev/null && have_chromium; then
    echo "make test: Chromium installed: $(command -v chromium)"
    exit 0
  fi
  banner "apt-get could not install chromium (see its messages above)"
elif [ "$(id -u)" != "0" ]; then
  banner "Chromium is not installed and installing it needs root (this is user $(id -un))"
else
  banner "Chromium is not installed and apt-get is not available on this machine"
fi
exit 0
