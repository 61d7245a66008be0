from typing import Any

def headings(
    offsets: Any,
    data: Any,
    date_offsets: Any,
    date_data: Any,
    date_valid: Any,
    date_bit_offset: int,
    /,
) -> tuple[tuple[bytes, bytes], tuple[bytes, bytes]] | None: ...
def plain_paths(
    offsets: Any, data: Any, /
) -> tuple[tuple[bytes, bytes], tuple[bytes, bytes]] | None: ...
def citations(offsets: Any, data: Any, /) -> tuple[bytes, bytes, bytes]: ...
def turn_stats(bounds: Any, scores: Any, /) -> tuple[bytes, bytes, bytes]: ...
def attr_strings(
    objects: list[Any], names: tuple[str | None, ...], /
) -> tuple[tuple[bytes, bytes, bytes | None], ...] | None: ...
