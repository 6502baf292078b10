# Debian's Chromium for the browser tests (@toolgate/inbox, driven by playwright-core): installs the
# `chromium` package when it is missing (as root), and exports TOOLGATE_CHROMIUM, its binary. Nothing
# is started: each test file launches its own headless browser with a fresh profile.
#
# .ci/run sources this file (it provides `step`). Locally:
#   bash .ci/services/chromium.sh -- npx jest packages/inbox/test/browser.test.ts
# Without a Chromium the browser tests skip with a note; this step then fails, so CI says so.

# step, on_exit and toolgate_free_port.
# shellcheck source=/dev/null
source "$(dirname "${BASH_SOURCE[0]}")/../standalone.sh"

toolgate_chromium_find() {
  local candidate
  for candidate in "${TOOLGATE_CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [[ -n $candidate && -x $candidate ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

toolgate_chromium_start() {
  local binary
  if ! binary=$(toolgate_chromium_find); then
    if [[ $(id -u) != 0 ]]; then
      echo 'chromium: not found; install Debian'"'"'s chromium (apt-get install chromium) or set TOOLGATE_CHROMIUM' >&2
      return 1
    fi
    echo 'chromium: not found; installing Debian'"'"'s chromium'
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
      return 1
    binary=$(toolgate_chromium_find) || {
      echo 'chromium: still no chromium after installing it' >&2
      return 1
    }
  fi
  export TOOLGATE_CHROMIUM=$binary
  echo "chromium: $("$binary" --version 2>/dev/null | head -n 1) (TOOLGATE_CHROMIUM is set)"
}

step chromium toolgate_chromium_start

# Run directly: `bash .ci/services/chromium.sh -- <command...>` runs the command with TOOLGATE_CHROMIUM set.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [[ ${1:-} == -- ]] && shift
  if [[ -z ${TOOLGATE_CHROMIUM:-} ]]; then exit 1; fi
  if (($# > 0)); then "$@"; fi
fi
