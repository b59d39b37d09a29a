"""Turn Codex payload pieces into block text: message content, tool calls, tool outputs, images.

Everything here is a pure function of one payload; the reader decides which payloads become
blocks and folds the duplicated pairs."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from jezero.plugin import clip, read_json, strip_ansi

# Text the harness injects as a "user" message: context and instructions, not something a
# person typed. A message made only of these is dropped; a mixed one keeps its other parts.
SCAFFOLDING_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions for ",
    "<turn_aborted>",
    "<subagent_notification>",
    "<skill>",
    "<collaboration_mode>",
    "<personality_spec>",
)

# `user_message` events of early envelope builds also carried the scaffolding, marked by `kind`.
PROMPT_KINDS = (None, "", "plain")

_SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "powershell.exe", "cmd", "cmd.exe"}
_SHELL_FLAGS = {"-c", "-lc", "-ilc", "-lic", "-ic", "/c", "-Command", "-command"}
_IMAGE_TAG = re.compile(r"</?image\b[^>]*>|\[Image #\d+\]", re.IGNORECASE)
# Newer builds wrap each pasted image in text items `<image name=[Image #1]>` ... `</image>`.
_IMAGE_WRAPPER = re.compile(r"</?image\b[^>]*>")
_CWD_TAG = re.compile(r"<cwd>\s*(.*?)\s*</cwd>", re.DOTALL)
_EXITED = re.compile(r"Process exited with code (-?\d+)")
_EXIT_CODE = re.compile(r"\A\s*Exit code: (-?\d+)")
# Unified exec prefixes every output with these; only the exit status line is worth keeping.
_EXEC_HEADER = ("Chunk ID:", "Wall time:", "Original token count:")


def is_scaffolding(text: str) -> bool:
    return text.lstrip().startswith(SCAFFOLDING_PREFIXES)


def cwd_from_environment_context(text: str) -> str | None:
    """Early rollouts had no `cwd` field; their `<environment_context>` message names it."""
    if "<environment_context>" not in text:
        return None
    m = _CWD_TAG.search(text)
    return m.group(1) if m and m.group(1) else None


def image(ref: Any) -> str:
    """`[image: ...]` for an image reference; a data URL becomes its media type and size, never
    its bytes."""
    while isinstance(ref, dict):  # {"image_url": ...}, {"image_url": {"url": ...}}, {"path": ...}
        ref = ref.get("image_url") or ref.get("url") or ref.get("path") or ""
    ref = str(ref or "")
    if ref.startswith("data:"):
        head, _, data = ref.partition(",")
        media = head[5:].split(";")[0] or "image"
        size = len(data) * 3 // 4 if ";base64" in head else len(data)
        return f"[image: {media}, {_size(size)}]"
    if not ref:
        return "[image]"
    return f"[image: {ref if len(ref) <= 200 else ref[:200] + '...'}]"


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.0f} KB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB"


def content_text(content: Any) -> str:
    """The readable text of a message's `content`: a string, or a list of `input_text` /
    `output_text` / `input_image` items (other item types are tolerated and skipped)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict):
            kind = item.get("type")
            if kind in ("input_image", "image", "output_image"):
                parts.append(image(item))
            elif isinstance(item.get("text"), str):
                if not _IMAGE_WRAPPER.fullmatch(item["text"].strip()):
                    parts.append(item["text"])
            elif isinstance(item.get("refusal"), str):
                parts.append(item["refusal"])
    return "\n".join(p for p in parts if p)


def user_text(content: Any) -> str:
    """A user message's content without the harness scaffolding parts."""
    if isinstance(content, list):
        kept = [i for i in content if not (isinstance(i, dict) and isinstance(i.get("text"), str) and is_scaffolding(i["text"]))]
        text = content_text(kept)
    else:
        text = content_text(content)
    return "" if is_scaffolding(text) else text.strip()


def fold_key(text: str) -> str:
    """What two sides of one message have in common: the words, without image markers or
    spacing (the event side names images differently from the response side)."""
    text = re.sub(r"\[image[^\]]*\]", " ", _IMAGE_TAG.sub(" ", text))
    return " ".join(text.split())


def argv_text(argv: Any) -> str:
    """A command line from an argv list. `bash -lc "<script>"` wrappers are unwrapped to the
    script, verbatim; any other argv is joined with shell quoting."""
    if isinstance(argv, str):
        return argv
    if not isinstance(argv, list) or not argv:
        return ""
    argv = [str(a) for a in argv]
    shell = argv[0].replace("\\", "/").rsplit("/", 1)[-1]
    if len(argv) == 3 and shell in _SHELLS and argv[1] in _SHELL_FLAGS:
        return argv[2]
    return shlex.join(argv)


def parse_arguments(arguments: Any) -> Any:
    """`function_call.arguments` is JSON encoded as a string; tolerate an object or junk."""
    if isinstance(arguments, str):
        try:
            return read_json(arguments)
        except ValueError:
            return arguments
    return arguments


def tool_call_text(name: str | None, arguments: Any) -> str:
    """The command verbatim for shell-like tools, the patch for apply_patch, otherwise the
    arguments as compact JSON."""
    args = parse_arguments(arguments)
    if isinstance(args, dict):
        if name in ("shell", "container.exec", "local_shell") and "command" in args:
            return argv_text(args["command"])
        if name == "shell_command" and isinstance(args.get("command"), str):
            return args["command"]
        if name == "exec_command" and isinstance(args.get("cmd"), str):
            return args["cmd"]
        if name == "write_stdin":
            chars = args.get("chars") or ""
            sid = args.get("session_id")
            return f"session {sid}: " + (json.dumps(chars, ensure_ascii=False) if chars else "(poll)")
        if name == "apply_patch" and isinstance(args.get("input"), str):
            return args["input"]
        return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    return "" if args is None else str(args)


def web_search_text(action: Any, query: Any = None) -> str:
    """A web search call: its query (and the extra queries), or the page it opened."""
    if isinstance(action, dict):
        kind = action.get("type")
        if kind == "open_page" and action.get("url"):
            return f"open {action['url']}"
        if kind == "find_in_page":
            return f"find {action.get('pattern')!r} in {action.get('url')}"
        queries = [q for q in [action.get("query"), *(action.get("queries") or [])] if isinstance(q, str) and q]
        if queries:
            return "\n".join(dict.fromkeys(queries))
    return str(query or "")


def tool_output(output: Any) -> tuple[str, int | None, bool | None]:
    """(text, exit code if stated, success if stated) of a `function_call_output.output`: a
    string (often a JSON string `{"output", "metadata": {"exit_code"}}`, or unified-exec text
    with "Process exited with code N"), a list of content items, or `{content, success}`."""
    code: int | None = None
    success: bool | None = None
    if isinstance(output, str):
        text = output
        parsed = None
        if output.lstrip().startswith("{"):
            try:
                parsed = read_json(output)
            except ValueError:
                parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            text = content_text(parsed["output"]) if not isinstance(parsed["output"], str) else parsed["output"]
            meta = parsed.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
                code = meta["exit_code"]
    elif isinstance(output, list):
        text = content_text(output)
    elif isinstance(output, dict):
        body = output.get("content", output.get("output", ""))
        text = body if isinstance(body, str) else content_text(body)
        if isinstance(output.get("success"), bool):
            success = output["success"]
    else:
        text = "" if output is None else str(output)
    if code is None:
        m = _EXITED.search(text[:400]) or _EXIT_CODE.match(text)
        if m:
            code = int(m.group(1))
    return text, code, success


def result_text(text: str) -> str:
    """A tool output as a block carries it: without unified exec's bookkeeping header lines,
    ANSI codes, and the middle of a long output."""
    if text.startswith("Chunk ID:"):
        head, sep, rest = text.partition("\nOutput:\n")
        if sep:
            kept = [line for line in head.splitlines() if not line.startswith(_EXEC_HEADER)]
            text = "\n".join([*kept, "Output:", rest]) if rest else "\n".join(kept)
    return clip(strip_ansi(text))


def mcp_result(result: Any) -> tuple[str, bool]:
    """Text and error flag of an `mcp_tool_call_end.result` (`{"Ok": {content, isError}}` or
    `{"Err": "..."}`)."""
    if isinstance(result, dict):
        if "Err" in result:
            return str(result["Err"]), True
        ok = result.get("Ok", result)
        if isinstance(ok, dict):
            return content_text(ok.get("content")), bool(ok.get("isError") or ok.get("is_error"))
    return ("" if result is None else str(result)), False
