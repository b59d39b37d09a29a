"""How much of all-MiniLM-L6-v2's paraphrase ranking the static table keeps, and which derivation
to ship. Every variant is made by the embedder's own code (jezero_embedders.derive) from one run
of the token forward pass; the reference is the full transformer (the same numpy encoder, on
whole texts, as sentence-transformers runs it: 256-token window, mean pooling, normalised).

For each question of pairs.py the candidates are every match and every decoy of both sets (96
texts); a question scores when its own match ranks first (R@1), by the reciprocal rank of its
match (MRR), and when its match beats its own decoy (vs decoy). Variants are chosen on the even
rows (tune) and reported on the odd rows too (held out).

    .venv/bin/python benchmarks/embed/quality.py [--vectors /tmp/token_vectors.npy]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from pairs import CHAT, CODING, split  # noqa: E402

from jezero_embedders import derive, source  # noqa: E402
from jezero_embedders.minilm_static import source_tokenizer  # noqa: E402
from jezero_embedders.static import StaticEmbedder  # noqa: E402
from jezero_embedders.table import DISK_DTYPE  # noqa: E402
from jezero_embedders.transformer import Encoder  # noqa: E402

WINDOW = 256  # all-MiniLM-L6-v2's max_seq_length (sentence_bert_config.json)


def full_embed(encoder: Encoder, tokenizer, texts: list[str]) -> np.ndarray:
    tok = tokenizer.__class__.from_str(tokenizer.to_str())
    tok.enable_truncation(WINDOW)
    out = []
    for enc in tok.encode_batch(texts):  # one text at a time: no padding to get wrong
        ids = np.asarray([enc.ids])
        out.append(encoder.mean_pooled(ids, np.ones_like(ids))[0])
    v = np.stack(out)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def scores(q: np.ndarray, cands: np.ndarray, rows: list[int], n: int) -> dict:
    """q: question vectors (all rows); cands: matches (n) then decoys (n)."""
    sims = q @ cands.T
    r1 = mrr = beats = 0.0
    for i in rows:
        rank = 1 + int((sims[i] > sims[i, i]).sum())
        r1 += rank == 1
        mrr += 1.0 / rank
        beats += sims[i, i] > sims[i, n + i]
    k = len(rows)
    return {"R@1": r1 / k, "MRR": mrr / k, "vs decoy": beats / k}


def tfidf(questions: list[str], cands: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Word counts weighted by inverse document frequency over the candidates: what literal
    matching alone ranks, for scale."""
    words = [re.findall(r"\w+", t.lower()) for t in cands]
    vocab = {w: i for i, w in enumerate(sorted({w for ws in words for w in ws}))}
    df = np.zeros(len(vocab))
    for ws in words:
        df[[vocab[w] for w in set(ws)]] += 1
    idf = np.log((1 + len(cands)) / (1 + df)) + 1

    def vec(texts):
        m = np.zeros((len(texts), len(vocab)))
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                if w in vocab:
                    m[i, vocab[w]] += idf[vocab[w]]
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)

    return vec(questions), vec(cands)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = a.ravel().argsort().argsort(), b.ravel().argsort().argsort()
    return float(np.corrcoef(ra, rb)[0, 1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", type=Path, help="keep (or reuse) the token vectors of the forward pass here")
    args = ap.parse_args()

    src = source.find()
    encoder = Encoder(src.folder)
    tokenizer = source_tokenizer(src.folder)
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    ids = derive.kept_ids(tokenizer)
    if args.vectors and args.vectors.exists():
        vectors = np.load(args.vectors)
        print(f"token vectors from {args.vectors}")
    else:
        t = time.process_time()
        vectors = derive.token_vectors(encoder, tokenizer, ids)
        print(f"token forward pass: {len(ids):,} tokens, {time.process_time() - t:.0f} s CPU")
        if args.vectors:
            np.save(args.vectors, vectors)

    rows = CODING + CHAT
    n = len(rows)
    questions = [r[0] for r in rows]
    cands = [r[1] for r in rows] + [r[2] for r in rows]
    tune_c, held_c = split(list(range(len(CODING))))
    tune_h, held_h = split(list(range(len(CODING), n)))
    sets = {"coding tune": tune_c, "coding held": held_c, "chat tune": tune_h, "chat held": held_h}

    full_q, full_c = full_embed(encoder, tokenizer, questions), full_embed(encoder, tokenizer, cands)
    full_sims = full_q @ full_c.T

    variants: dict[str, tuple] = {"full MiniLM (reference)": (full_q, full_c)}
    inputs = encoder.word_embeddings[ids]

    def static(name, vecs, dim, sif, dtype=DISK_DTYPE):
        table = derive.static_table(vecs, ids, vocab_size, dim, sif).astype(dtype)
        e = StaticEmbedder(name, table, tokenizer)
        variants[name] = (e.embed(questions, query=True), e.embed(cands))

    static("static pca256 sif1e-5 (shipped)", vectors, 256, 1e-5)
    static("static pca256 sif1e-5, float16 table", vectors, 256, 1e-5, np.float16)
    static("static pca384 sif1e-5", vectors, 384, 1e-5)
    static("static pca128 sif1e-5", vectors, 128, 1e-5)
    static("static pca256 sif1e-4 (model2vec's default)", vectors, 256, 1e-4)
    static("static pca256 sif3e-6", vectors, 256, 3e-6)
    static("static pca256 no weighting (sif 0.99)", vectors, 256, 0.99)
    static("input embeddings only, pca256 sif1e-5", inputs, 256, 1e-5)

    def unit(m):
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    static("distilled + input embeddings, pca256 sif1e-5 (not shipped)", unit(vectors) + unit(inputs), 256, 1e-5)
    variants["words only (tf-idf, lexical baseline)"] = tfidf(questions, cands)

    head = f"| variant | {' | '.join(f'{s} R@1 / MRR / vs decoy' for s in sets)} | Spearman vs full |"
    print(head)
    print("|" + "---|" * (len(sets) + 2))
    for name, (q, c) in variants.items():
        cells = []
        for rows_ in sets.values():
            s = scores(q, c, rows_, n)
            cells.append(f"{s['R@1']:.2f} / {s['MRR']:.2f} / {s['vs decoy']:.2f}")
        print(f"| {name} | {' | '.join(cells)} | {spearman(q @ c.T, full_sims):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
