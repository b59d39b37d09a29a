"""What each Codex tool call did, said by the connector: the summarizers never see a tool name."""

from jezero.plugin import Block

from jezero_connectors_codex.actions import annotate


def call(tool, text):
    return Block("assistant", "tool_call", text, tool=tool)


def result(tool, text, is_error=False):
    return Block("tool", "tool_result", text, tool=tool, is_error=is_error)


def test_shell_calls_carry_their_command_and_a_poll_its_running_command():
    blocks = annotate([
        call("exec_command", "npm run build"),
        result("exec_command", "Process running with session ID 7\nOutput:\nbuilding..."),
        call("write_stdin", 'session 7: (poll)'),
        result("write_stdin", "Process exited with code 1\nOutput:\nerror TS2322: Type 'string' is not assignable"),
        call("shell", '{"command": ["bash", "-lc", "pytest -q"]}'),
        result("shell", "1 failed"),
    ])
    assert [b.action for b in blocks] == ["shell"] * 6
    assert blocks[0].command == "npm run build" and blocks[4].command == "pytest -q"
    assert blocks[2].command is None  # a poll runs nothing new
    assert blocks[3].command == "npm run build"  # the output of the command still running
    assert blocks[1].command is None and blocks[5].command is None  # a plain result answers the call before it


def test_file_tools_name_their_paths_and_other_tools_are_other():
    patch = "*** Begin Patch\n*** Update File: billing/env.py\n@@\n-a\n+b\n*** Add File: billing/new.py\n*** End Patch"
    blocks = annotate([call("apply_patch", patch), call("read_file", '{"file_path": "src/app.py"}'),
                       call("list_dir", '{"dir_path": "src"}'), call("update_plan", '{"plan": []}'),
                       call("mcp__github__search", '{"q": "x"}'), result(None, "orphan output")])
    assert [b.action for b in blocks] == ["edit", "read", "search", "plan", "other", "other"]
    assert blocks[0].paths == ["billing/env.py", "billing/new.py"]
    assert blocks[1].paths == ["src/app.py"] and blocks[2].paths == ["src"]
