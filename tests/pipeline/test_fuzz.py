"""Damaged files of every format, made by the fuzzer (tests/fuzzing.py), end imported or refused
with a clear error through the real import: never an exception, a hang or a half-imported row.
The long run is benchmarks/fuzz.py; every input that ever failed is replayed here from its
recipe."""

from __future__ import annotations

import hashlib

import pytest

from tests.fuzzing import (
    CORPUS_DOCS,
    CachedEmbedder,
    Runner,
    built_seeds,
    cases,
    corpus_seeds,
    fuzz_settings,
    load_regressions,
    mutate,
    regenerate,
)

SHORT_RUN = 60
SMALL = 50_000  # bytes: the short run fuzzes the corpus documents below this size


@pytest.fixture(scope="module")
def cached(embedder):
    return CachedEmbedder(embedder)


@pytest.fixture(scope="module")
def seeds(cached):
    if not CORPUS_DOCS.exists():
        pytest.skip(f"needs the shared corpus ({CORPUS_DOCS} is absent)")
    return {s.name: s for s in corpus_seeds() + built_seeds(cached)}


def test_a_case_is_the_same_input_every_time(seeds):
    for name in ("docs/pdf/latex_multicolumn_lorem.pdf", "docs/office/docx_en_rag_intro.docx",
                 "built/notebook.knownote"):  # fmt: skip
        seed = seeds[name]
        first = mutate(seed, seed.load(), 7, 11)
        assert mutate(seed, seed.load(), 7, 11) == first
        assert mutate(seed, seed.load(), 7, 12) != first


def test_a_short_run_ends_every_case_imported_or_refused(seeds, cached, tmp_path):
    small = [s for s in seeds.values() if s.name.startswith("built/") or s.size < SMALL]
    runner = Runner(fuzz_settings(tmp_path), cached, tmp_path, per_db=SHORT_RUN // 2)
    outcomes = []
    for seed, case in cases(small, 1, SHORT_RUN):
        data, mutation = mutate(seed, seed.load(), 1, case)
        outcomes += runner.run(seed, data, case, mutation)
    outcomes += runner.rotate()  # `knownote check` on the last store
    assert len(outcomes) == SHORT_RUN
    assert {o.seed for o in outcomes} == {s.name for s in small}  # every seed at least once
    assert [o for o in outcomes if o.fault] == []
    outcomes_seen = {o.outcome for o in outcomes}
    assert "imported" in outcomes_seen and "UnreadableFile" in outcomes_seen


def test_every_input_that_ever_failed_now_imports_or_is_refused(seeds, cached, tmp_path):
    recipes = load_regressions()
    assert recipes, "tests/fuzz_regressions.json keeps every input that ever failed"
    runner = Runner(fuzz_settings(tmp_path), cached, tmp_path, per_db=len(recipes))
    outcomes = []
    for recipe in recipes:
        seed, data, mutation = regenerate(recipe, seeds)
        assert mutation == recipe["mutation"], recipe
        assert hashlib.sha256(data).hexdigest() == recipe["sha256"], recipe
        outcomes += runner.run(seed, data, recipe["case"], mutation)
    outcomes += runner.rotate()
    assert [(o.seed, o.case, o.outcome, o.detail[-300:]) for o in outcomes if o.fault] == []
