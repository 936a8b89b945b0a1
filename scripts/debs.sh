#!/usr/bin/env bash
# Installs the Debian packages that the tests drive as real components, when
# they are absent: COIN-OR CBC (the exact planner's and the cluster policies'
# LP/MILP solver, run as a subprocess) and Chromium (the web UI's browser
# tests, driven headless over the DevTools protocol). Each is checked by the
# command it provides; nothing is installed when all are present.
# Not root and something missing: one line says what to install, and the
# script fails, since make test requires them.
set -euo pipefail

# command|package
DEBS='
cbc|coinor-cbc
chromium|chromium
'

missing=()
while IFS='|' read -r cmd pkg; do
  [ -z "$cmd" ] && continue
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done <<< "$DEBS"

[ "${#missing[@]}" = 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "debs: missing ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}'" >&2
  exit 1
fi
echo "debs: apt-get install ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "debs: installed ${missing[*]}" >&2
