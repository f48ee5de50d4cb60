"""Limits the importer enforces on each batch."""

DEFAULT_REORDER_LEVEL = 10
MAX_BATCH = 500
MAX_RETRIES = 3


def batch_ok(size: int) -> bool:
    return 0 < size <= MAX_BATCH
