// Jezero's plugin for OpenCode: the team's past work in every session.
//
// A thin adapter: every decision is made by jezero_client.py (the client core, beside this file),
// which gets a small JSON payload on stdin and prints the text to add.
// - The system prompt of each session gets Jezero's protocol and the project's newest items
//   (asked once per session, then reused, so the prompt stays the same from turn to turn).
// - The first message of a session gets the related past work, when the core's rule finds any.
// - When a session goes idle, the core uploads the changed sessions from a detached process.
// - Jezero's MCP tools come through the core's local bridge, so no configuration holds a key.
// A hook never breaks OpenCode: any failure, or a core slower than its budget, adds nothing.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// This plugin's version: the client core reads it from this line (it reports it with each upload).
const PLUGIN_VERSION = "0.2.0"; // not exported: OpenCode calls every export as a plugin

const HERE = dirname(fileURLToPath(import.meta.url));
const CORE = join(HERE, "jezero_client.py");
// Starts the core as an imported module, so Python reuses its compiled form (see jezero_hook.py).
const HOOK = join(HERE, "jezero_hook.py");
const PYTHON = process.env.JEZERO_PYTHON || (process.platform === "win32" ? "python" : "python3");
const BUDGET_MS = 3000; // the core keeps to 2.5 s itself; this only bounds a stuck interpreter

function core(event, payload) {
  return new Promise((resolve) => {
    if (!existsSync(CORE)) return resolve("");
    try {
      // Without jezero_hook.py (a copy made before it existed) the core runs the hook itself.
      const args = existsSync(HOOK) ? ["-I", "-S", HOOK, event] : [CORE, "hook", event];
      const child = execFile(PYTHON, [...args, "--agent", "opencode"],
        { timeout: BUDGET_MS, windowsHide: true },
        (error, stdout) => resolve(error ? "" : String(stdout || "").trim()));
      child.on("error", () => resolve(""));
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch {
      resolve("");
    }
  });
}

export const JezeroPlugin = async ({ directory }) => {
  const starts = new Map(); // session id -> the session-start text (a promise)

  const sessionStart = (sessionID) => {
    if (!starts.has(sessionID)) {
      starts.set(sessionID, core("session-start", { session_id: sessionID, cwd: directory, hook_event_name: "SessionStart" }));
    }
    return starts.get(sessionID);
  };

  return {
    config: async (config) => {
      try {
        config.mcp = config.mcp || {};
        if (!config.mcp.jezero) {
          config.mcp.jezero = { type: "local", command: [PYTHON, "-I", "-S", CORE, "bridge"], enabled: true };
        }
      } catch {}
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        if (!input || !input.sessionID) return;
        const text = await sessionStart(input.sessionID);
        if (text) output.system.push(text);
      } catch {}
    },

    "chat.message": async (input, output) => {
      try {
        const texts = (output.parts || []).filter((p) => p && p.type === "text" && !p.synthetic);
        const prompt = texts.map((p) => p.text || "").join("\n");
        if (!prompt) return;
        const text = await core("prompt", { session_id: input.sessionID, cwd: directory, prompt, hook_event_name: "UserPromptSubmit" });
        if (text) texts[texts.length - 1].text += "\n\n" + text;
      } catch {}
    },

    event: async ({ event }) => {
      try {
        if (event && event.type === "session.idle") {
          await core("end", { session_id: event.properties && event.properties.sessionID, cwd: directory });
        }
      } catch {}
    },
  };
};
