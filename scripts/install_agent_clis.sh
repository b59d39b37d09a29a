#!/usr/bin/env bash
# Install the five coding agents' CLIs from the npm registry, once, into a cache folder, for the
# plugin end-to-end tests (tests/test_agent_plugins_e2e.py). About 1.3 GB in all; an agent already
# installed at its pinned version is left alone, so a second run costs nothing.
#
#     scripts/install_agent_clis.sh [AGENT...]     # default: all five
#
# The folder is $JEZERO_AGENT_CLIS, else ~/.cache/jezero-agent-clis; each agent gets its own npm
# prefix (<folder>/<agent>/node_modules/.bin/<command>). It never fails the build: an agent whose
# install fails (no registry, no npm) is reported and left out, and its tests skip with the reason.
set -u
cache="${JEZERO_AGENT_CLIS:-$HOME/.cache/jezero-agent-clis}"
mkdir -p "$cache"

# agent  package@version (the versions studied in ../shared/notes/agents-offline.md)
declare -A packages=(
  [claude]="@anthropic-ai/claude-code@2.1.197"
  [codex]="@openai/codex@0.171.0"
  [gemini]="@google/gemini-cli@0.61.0"
  [copilot]="@github/copilot@1.0.102"
  [opencode]="opencode-ai@1.18.33"
)
agents=("$@")
[ ${#agents[@]} -gt 0 ] || agents=(claude codex gemini copilot opencode)

if ! command -v npm >/dev/null 2>&1; then
  echo "install_agent_clis: npm is not installed; the agent end-to-end tests will skip" >&2
  exit 0
fi

for agent in "${agents[@]}"; do
  spec="${packages[$agent]:-}"
  [ -n "$spec" ] || { echo "install_agent_clis: unknown agent $agent" >&2; continue; }
  prefix="$cache/$agent"
  if [ "$(cat "$prefix/.installed" 2>/dev/null)" = "$spec" ]; then
    echo "$agent: $spec already in $prefix"
    continue
  fi
  mkdir -p "$prefix"
  start=$(date +%s)
  if npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$spec" >"$prefix/install.log" 2>&1; then
    echo "$spec" > "$prefix/.installed"
    echo "$agent: installed $spec in $(( $(date +%s) - start )) s"
  else
    rm -f "$prefix/.installed"
    echo "install_agent_clis: $agent ($spec) failed, see $prefix/install.log" >&2
  fi
done
# OpenCode installs its plugin SDK into the config folder of any local plugin at startup, which
# offline fails only after a long wait: keep one copy here for the tests to place beforehand.
if [[ " ${agents[*]} " == *" opencode "* ]] && [ ! -f "$cache/opencode-plugin-sdk/.installed" ]; then
  mkdir -p "$cache/opencode-plugin-sdk"
  if npm install --prefix "$cache/opencode-plugin-sdk" --no-audit --no-fund --loglevel=error \
      "@opencode-ai/plugin@1.18.33" >"$cache/opencode-plugin-sdk/install.log" 2>&1; then
    echo "@opencode-ai/plugin@1.18.33" > "$cache/opencode-plugin-sdk/.installed"
  fi
fi
exit 0
