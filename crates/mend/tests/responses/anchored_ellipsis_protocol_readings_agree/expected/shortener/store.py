"""Storage interfaces for the shortener."""

from typing import Protocol

from .models import Link


class Store(Protocol):
    def get(self, code: str) -> Link:
        ...

    def create(self, url: str, alias: str | None = None) -> Link:
        ...

    def delete(self, code: str) -> None:
        ...
