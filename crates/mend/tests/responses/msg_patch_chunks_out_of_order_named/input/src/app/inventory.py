"""Inventory management for the warehouse service."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional

logger = logging.getLogger(__name__)

DEFAULT_REORDER_LEVEL = 10
MAX_BATCH = 500


class InventoryError(Exception):
    """Raised when an inventory operation cannot be completed."""


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    reorder_level: int = DEFAULT_REORDER_LEVEL
    tags: list[str] = field(default_factory=list)
    updated_at: Optional[datetime] = None

    def needs_reorder(self) -> bool:
        return self.quantity <= self.reorder_level

    def to_dict(self) -> dict:
        return {
            "sku": self.sku,
            "name": self.name,
            "quantity": self.quantity,
            "reorder_level": self.reorder_level,
            "tags": list(self.tags),
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        updated = data.get("updated_at")
        return cls(
            sku=data["sku"],
            name=data["name"],
            quantity=int(data.get("quantity", 0)),
            reorder_level=int(data.get("reorder_level", DEFAULT_REORDER_LEVEL)),
            tags=list(data.get("tags", [])),
            updated_at=datetime.fromisoformat(updated) if updated else None,
        )


class Inventory:
    def __init__(self, path: Path):
        self.path = path
        self.items: dict[str, Item] = {}

    def load(self) -> None:
        if not self.path.exists():
            logger.info("no inventory file at %s, starting empty", self.path)
            return
        with self.path.open() as fh:
            raw = json.load(fh)
        for entry in raw.get("items", []):
            item = Item.from_dict(entry)
            self.items[item.sku] = item
        logger.info("loaded %d items", len(self.items))

    def save(self) -> None:
        data = {"items": [item.to_dict() for item in self.items.values()]}
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w") as fh:
            json.dump(data, fh, indent=2)
        tmp.replace(self.path)

    def add(self, item: Item) -> None:
        if item.sku in self.items:
            raise InventoryError(f"duplicate sku {item.sku}")
        item.updated_at = datetime.now(timezone.utc)
        self.items[item.sku] = item

    def remove(self, sku: str) -> Item:
        try:
            return self.items.pop(sku)
        except KeyError:
            raise InventoryError(f"unknown sku {sku}") from None

    def adjust(self, sku: str, delta: int) -> Item:
        item = self.items.get(sku)
        if item is None:
            raise InventoryError(f"unknown sku {sku}")
        if item.quantity + delta < 0:
            raise InventoryError(f"insufficient stock for {sku}")
        item.quantity += delta
        item.updated_at = datetime.now(timezone.utc)
        return item

    def restock(self, sku: str, amount: int) -> Item:
        if amount <= 0:
            raise InventoryError("restock amount must be positive")
        item = self.items.get(sku)
        if item is None:
            raise InventoryError(f"unknown sku {sku}")
        item.quantity += amount
        item.updated_at = datetime.now(timezone.utc)
        return item

    def bulk_adjust(self, changes: Iterable[tuple[str, int]]) -> list[Item]:
        changes = list(changes)
        if len(changes) > MAX_BATCH:
            raise InventoryError(f"batch too large: {len(changes)} > {MAX_BATCH}")
        result = []
        for sku, delta in changes:
            result.append(self.adjust(sku, delta))
        return result

    def low_stock(self) -> list[Item]:
        return sorted(
            (item for item in self.items.values() if item.needs_reorder()),
            key=lambda item: item.quantity,
        )

    def search(self, text: str) -> list[Item]:
        text = text.lower()
        return [
            item
            for item in self.items.values()
            if text in item.name.lower() or text in item.sku.lower()
        ]

    def by_tag(self, tag: str) -> list[Item]:
        return [item for item in self.items.values() if tag in item.tags]


def summarize(inventory: Inventory) -> str:
    total = sum(item.quantity for item in inventory.items.values())
    low = inventory.low_stock()
    lines = [f"{len(inventory.items)} items, {total} units in stock"]
    if low:
        lines.append(f"{len(low)} items need reordering:")
        for item in low:
            lines.append(f"  - {item.sku} ({item.name}): {item.quantity} left")
    return "\n".join(lines)
