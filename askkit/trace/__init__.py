"""Follow a question through kimun's whole answer: where each note of interest stopped, and why.

:func:`trace_pool` follows sections through one query's stages (the pool,
de-duplication, the reranker, the cut, the search surface, the context and
the citations); :func:`trace` does it from a retriever and a question.
"""

from __future__ import annotations

from askkit.trace.columnar import (
    SECTION_COLUMNS,
    SectionPools,
    graded_sections,
    query_grades,
    relevant_sections,
    trace_pools,
    trace_pools_reference,
)
from askkit.trace.interest import (
    Interest,
    closest_headings,
    closest_paths,
    printed_path,
    section_id,
    sections_of,
    typed_section,
)
from askkit.trace.run import (
    PoolRetriever,
    VaultHeadings,
    funnel,
    gather,
    read_headings,
    trace,
    trace_log,
    trace_queries,
    trace_turn,
    unjudged_per_query,
    vault_headings,
)
from askkit.trace.stages import (
    FUNNEL_STAGES,
    STAGE_DTYPE,
    STAGES,
    TRACE_COLUMNS,
    UnjudgedAbove,
    is_frontmatter,
    ranked_pool,
    trace_frame,
    trace_pool,
    unjudged_above,
)
from askkit.trace.view import (
    CHAIN_STAGES,
    ChainRow,
    chain_rows,
    chain_table,
    frontmatter_note,
    trace_html,
    unjudged_lines,
    what_if_html,
)
from askkit.trace.whatif import WHAT_IF_COLUMNS, smallest_changes, what_if

__all__ = [
    "CHAIN_STAGES",
    "FUNNEL_STAGES",
    "SECTION_COLUMNS",
    "STAGES",
    "STAGE_DTYPE",
    "TRACE_COLUMNS",
    "WHAT_IF_COLUMNS",
    "ChainRow",
    "Interest",
    "PoolRetriever",
    "SectionPools",
    "UnjudgedAbove",
    "VaultHeadings",
    "chain_rows",
    "chain_table",
    "closest_headings",
    "closest_paths",
    "frontmatter_note",
    "funnel",
    "gather",
    "graded_sections",
    "is_frontmatter",
    "printed_path",
    "query_grades",
    "ranked_pool",
    "read_headings",
    "relevant_sections",
    "section_id",
    "sections_of",
    "smallest_changes",
    "trace",
    "trace_frame",
    "trace_html",
    "trace_log",
    "trace_pool",
    "trace_pools",
    "trace_pools_reference",
    "trace_queries",
    "trace_turn",
    "typed_section",
    "unjudged_above",
    "unjudged_lines",
    "unjudged_per_query",
    "vault_headings",
    "what_if",
    "what_if_html",
]
