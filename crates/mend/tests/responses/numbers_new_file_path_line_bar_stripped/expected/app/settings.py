"""Runtime settings for the order service, read from the environment."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    database_url: str
    max_lines: int = 200
    debug: bool = False


def from_env() -> Settings:
    return Settings(
        database_url=os.environ["ORDERS_DATABASE_URL"],
        max_lines=int(os.environ.get("ORDERS_MAX_LINES", "200")),
        debug=os.environ.get("ORDERS_DEBUG") == "1",
    )
