"""The exact path: a coded run ranked, de-duplicated and graded, the specification.

Document ids get one Arrow ``dictionary_encode`` shared by run and qrels;
:func:`~askkit.metrics.ranked.rank_run` ranks the run and drops repeated
documents (the document order for trec_eval's tie break is computed only when
tied scores need it), and each row's grade comes from a merge with the qrels,
one grade per (query, document), the highest. :mod:`askkit.metrics.fast`
gives the same result faster for the usual run and is held to this one by
``tests/metrics/test_fast.py``; :func:`askkit.metrics.preparation.prepare`
chooses between them.

Examples
--------
>>> import pandas as pd
>>> from askkit.metrics.preparation import code
>>> run = pd.DataFrame({"turn_id": ["q", "q", "q"], "path": ["a.md", "b.md", "a.md"],
...                     "score": [1.0, 1.0, 2.0]})
>>> qrels = pd.DataFrame({"query_id": ["q"], "path": ["b.md"], "grade": [2]})
>>> g = exact(code(run, qrels, "note", "trec"))
>>> g.ranked.rows.tolist(), g.ranked.rank.tolist(), g.grade.tolist(), g.ranked.duplicates
([2, 1], [1, 2], [0, 2], 1)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from askkit.metrics.ranked import (
    Coded,
    Graded,
    IntArray,
    Ranked,
    argsort_keys,
    dictionary_codes,
    lookup_grades,
    rank_run,
    take,
)

__all__ = ["exact"]


def _chunks(values: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(values.chunks) if isinstance(values, pa.ChunkedArray) else [values]


def exact(coded: Coded) -> Graded:
    """Rank, de-duplicate and grade the run with one document dictionary: the specification.

    Document ids are dictionary-encoded once for run and qrels together;
    :func:`~askkit.metrics.ranked.rank_run` ranks and de-duplicates (the
    codes' order by id is computed only when tied scores need it); the qrels
    keep one grade per (query, document), the highest, and
    :func:`~askkit.metrics.ranked.lookup_grades` grades each kept row.
    ``ranked.rows`` are rows of the run; ``ranked.doc`` indexes ``docs``.
    """
    keep, rdoc = coded.keep, coded.docs
    if keep is None:
        keep = np.arange(len(coded.query), dtype=np.int64)
    else:
        rdoc = take(rdoc, keep)
    codes, dictionary = dictionary_codes(
        pa.chunked_array([*_chunks(rdoc), *_chunks(coded.qrels_docs)], pa.large_string())
    )
    rdoc_codes, jdoc_codes = codes[: len(keep)], codes[len(keep) :]

    def doc_rank() -> IntArray:
        by_id = np.asarray(pc.sort_indices(dictionary), dtype=np.int64)
        ranks = np.empty(len(by_id), dtype=np.int64)
        ranks[by_id] = np.arange(len(by_id), dtype=np.int64)
        return ranks

    ranked = rank_run(
        coded.query, rdoc_codes, coded.score, coded.order, ties=coded.ties, doc_rank=doc_rank
    )
    # qrels: one grade per (query, document), the highest
    n, n_docs = len(coded.qids), len(dictionary)
    jq, jgrade = coded.qrels_query, coded.qrels_grade
    if len(jq):
        low, high = int(jgrade.min()), int(jgrade.max())
        by = argsort_keys([(jq, n), (jdoc_codes, max(n_docs, 1)), (high - jgrade, high - low + 1)])
        jq, jd, jg = jq[by], jdoc_codes[by], jgrade[by]
        first = np.ones(len(jq), dtype=bool)
        first[1:] = (jq[1:] != jq[:-1]) | (jd[1:] != jd[:-1])
        jq, jd, jg = jq[first], jd[first], jg[first]
    else:
        jd = jg = jq
    grade, judged = lookup_grades(
        n_docs, ranked.query, ranked.doc, qrels_query=jq, qrels_doc=jd, qrels_grade=jg
    )
    return Graded(
        ranked=Ranked(keep[ranked.rows], ranked.query, ranked.doc, ranked.rank, ranked.duplicates),
        docs=dictionary,
        score=coded.score[ranked.rows],
        grade=grade,
        judged=judged,
        qrels_query=jq,
        qrels_grade=jg,
    )
