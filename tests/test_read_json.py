"""`read_json`, the plugin kit's json.loads for text from outside, and the JSONL reader built on
it: JSON nested too deep is a bad line like any other, never an exception that ends a run (one
such line once stopped a connector's whole run, and every run after it, at the same file)."""

from __future__ import annotations

import json

import pytest

from jezero.plugin import MAX_JSON_DEPTH, JsonlStream, read_json


def nested(depth: int, inner: str = '"x"') -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize("text", [nested(100_000), nested(MAX_JSON_DEPTH + 1),
                                  '{"a": ' + nested(MAX_JSON_DEPTH) + "}", "not json", '{"cut": '])
def test_what_cannot_be_used_raises_value_error_only(text):
    with pytest.raises(ValueError):
        read_json(text)
    with pytest.raises(ValueError):
        read_json(text.encode())


@pytest.mark.parametrize("text", [nested(MAX_JSON_DEPTH), '{"a": ' + nested(MAX_JSON_DEPTH - 1) + "}",
                                  json.dumps({"brackets in text": "[" * 5000 + "{" * 5000}), "42", '"s"'])
def test_what_is_nested_as_deep_as_allowed_reads_as_json_loads_reads_it(text):
    assert read_json(text) == json.loads(text)


def test_a_jsonl_file_keeps_its_other_lines_around_one_nested_too_deep(tmp_path):
    lines = [json.dumps({"n": 1}), '{"n": 2, "deep": ' + nested(100_000) + "}",
             '{"n": 3, "deep": ' + nested(MAX_JSON_DEPTH + 5) + "}", json.dumps({"n": 4})]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    read = JsonlStream(path)
    assert [obj["n"] for _, obj in read if obj is not None] == [1, 4]
    assert read.bad_lines == [2, 3]
