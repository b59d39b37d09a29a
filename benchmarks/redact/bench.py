"""Speed of the built-in redactor, and of the secret-scanning libraries it was compared with.

    .venv/bin/python benchmarks/redact/bench.py [--mb 5] [--libraries]

Texts (each --mb megabytes):
- synthetic: transcript-like text without secrets (prose, code, log lines with git shas, UUIDs and
  ids in URL paths, JSON records, base64 blobs), made here with a fixed seed;
- samples: the real sample transcripts in ../shared/samples, repeated (when present);
- with-secrets: the synthetic text with a fake secret of every kind on about 1 line in 200.

--libraries also times detect-secrets (`scan_line` per line, default plugins and regex plugins only)
and microsoft-security-utilities-secret-masker, when they are importable; install them in a
scratch environment, they are not dependencies.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
SAMPLES = REPO.parent / "shared" / "samples"

WORDS = ("the a of to and in is it that for on with as was at by this be from or an are not have function return "
         "import class def self value error file test run build config path session agent summary user assistant "
         "tool output commit branch merge").split() * 10 + "token password secret key auth credentials".split()

FAKE_SECRETS = [
    "export GITHUB_TOKEN=ghp_R4nd0mF4k3T0k3nV4lu3F0rT3st1ng12345",
    "AWS_ACCESS_KEY_ID=AKIAQ3EGTQ7ZKDWXR4HN",
    "aws_secret_access_key = Hf8kL2mN9pQr4sT7uVw1xYz3AbCdEfGhIjKlMnOp",
    'curl -H "Authorization: Bearer sk-proj-4fQ9x2LmN8pRt6VwYz1AbC3dEfGh5IjK7lMnO9pQrStUv" https://api.example.com',
    "DATABASE_URL=postgres://app:S3cr3tPassw0rd@db.internal:5432/app",
    '{"password": "hunter2-but-longer"}',
    "SLACK_BOT_TOKEN=xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "ANTHROPIC_API_KEY=sk-ant-api03-Xy7_fAkEkEyFoRtEsTiNgOnLy-0123456789abcdefABCDEF",
]


def prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def synthetic(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        k = rng.random()
        if k < 0.35:
            s = prose(rng, 60)
        elif k < 0.55:
            s = (f"def handle_{rng.randint(0, 99)}(x, y=None):\n    result = compute(x) + {rng.randint(0, 999)}\n"
                 f"    return result  # {prose(rng, 5)}")
        elif k < 0.8:
            sha = hashlib.sha1(str(rng.random()).encode()).hexdigest()
            s = (f"2025-09-1{rng.randint(0, 9)}T12:30:00Z INFO commit {sha} request_id={uuid.UUID(int=rng.getrandbits(128))} "
                 f"path=/api/v1/items/{uuid.UUID(int=rng.getrandbits(128)).hex[:22]} took {rng.randint(1, 900)}ms")
        elif k < 0.97:
            s = json.dumps({"type": "assistant", "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                            "message": {"role": "assistant", "content": [{"type": "text", "text": prose(rng, 40)}]},
                            "cwd": "/home/alice/src/project", "usage": {"input_tokens": rng.randint(1, 9999)}})
        else:
            s = base64.b64encode(rng.randbytes(600)).decode()
        parts.append(s)
        total += len(s) + 1
    return "\n".join(parts)[:size]


def samples(size: int) -> str | None:
    files = sorted(SAMPLES.rglob("*.jsonl")) if SAMPLES.is_dir() else []
    if not files:
        return None
    text = "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in files)
    return (text * (size // len(text) + 1))[:size]


def with_secrets(text: str, seed: int = 11) -> str:
    rng = random.Random(seed)
    lines = text.split("\n")
    for i in range(0, len(lines), 200):
        lines[i] += " " + rng.choice(FAKE_SECRETS)
    return "\n".join(lines)


def timed(fn, text: str, repeat: int = 5) -> float:
    """MB/s, best of `repeat` runs, in CPU time of this process (the machine is shared: wall time
    also counts the time other processes hold the cores)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t)
    return len(text) / 1e6 / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=5)
    ap.add_argument("--libraries", action="store_true")
    args = ap.parse_args()
    size = int(args.mb * 1_000_000)

    texts = {"synthetic": synthetic(size)}
    real = samples(size)
    if real is not None:
        texts["samples"] = real
    texts["with-secrets"] = with_secrets(texts["synthetic"])

    try:
        from jezero.ingest.redact import redact
    except ImportError as e:  # a scratch environment with only the libraries
        print(f"builtin: not importable here ({e})")
    else:
        for name, text in texts.items():
            out = redact(text)
            print(f"builtin   {name:13s} {timed(redact, text):8.1f} MB/s   {out.count('[REDACTED:')} markers")

    if args.libraries:
        print("libraries, on the first 300 KB of the synthetic text (no secrets):")
        libraries(texts["synthetic"][:300_000])


def libraries(text: str) -> None:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        print("detect-secrets: not installed")
    else:
        with default_settings() as settings:
            def scan(t: str) -> int:
                return sum(1 for line in t.splitlines() for _ in scan_line(line))
            print(f"detect-secrets default      {timed(scan, text, 1):8.3f} MB/s   {scan(text)} findings")
            settings.disable_plugins("Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector")
            print(f"detect-secrets regex only   {timed(scan, text, 1):8.3f} MB/s   {scan(text)} findings")
    try:
        from microsoft_security_utilities_secret_masker import SecretMasker, load_regex_patterns_from_json_file
    except ImportError:
        print("microsoft-security-utilities-secret-masker: not installed")
    else:
        patterns = set()
        for f in ("HighConfidenceSecurityModels.json", "MediumConfidenceSecurityModels.json"):
            patterns |= load_regex_patterns_from_json_file(f)
        masker = SecretMasker(patterns)
        print(f"ms secret-masker            {timed(masker.mask_secrets, text, 1):8.3f} MB/s")


if __name__ == "__main__":
    main()
