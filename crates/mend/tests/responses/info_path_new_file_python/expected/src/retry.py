"""Retry a callable with exponential backoff and full jitter."""

import random
import time


def retry(fn, *, attempts=5, base=0.2, cap=5.0, retry_on=(ConnectionError, TimeoutError)):
    for attempt in range(attempts):
        try:
            return fn()
        except retry_on:
            if attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0, min(cap, base * 2**attempt)))
