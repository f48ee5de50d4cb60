"""Stock levels, reservations and reorder points for the warehouse service."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Iterable

log = logging.getLogger(__name__)

DEFAULT_REORDER_DAYS = 14
RESERVATION_TTL = timedelta(minutes=30)


class StockError(Exception):
    """Raised when a reservation cannot be honoured."""


@dataclass
class Item:
    sku: str
    name: str
    on_hand: int = 0
    reserved: int = 0
    daily_demand: float = 0.0
    lead_time_days: int = 7

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved

    def reorder_point(self) -> int:
        safety = self.daily_demand * DEFAULT_REORDER_DAYS * 0.25
        return int(self.daily_demand * self.lead_time_days + safety)


@dataclass
class Reservation:
    sku: str
    quantity: int
    order_id: str
    created_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def expired(self, now: datetime | None = None) -> bool:
        now = now or datetime.now(timezone.utc)
        return now - self.created_at > RESERVATION_TTL


class Inventory:
    def __init__(self, items: Iterable[Item] = ()):
        self._items: dict[str, Item] = {item.sku: item for item in items}
        self._reservations: dict[str, list[Reservation]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, sku: str) -> bool:
        return sku in self._items

    def get(self, sku: str) -> Item:
        try:
            return self._items[sku]
        except KeyError:
            raise StockError(f"unknown sku {sku!r}") from None

    def add(self, item: Item) -> None:
        if item.sku in self._items:
            raise StockError(f"sku {item.sku!r} already exists")
        self._items[item.sku] = item

    def receive(self, sku: str, quantity: int) -> int:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        item = self.get(sku)
        item.on_hand += quantity
        log.info("received %d x %s, now %d on hand", quantity, sku, item.on_hand)
        return item.on_hand

    def reserve(self, sku: str, quantity: int, order_id: str) -> Reservation:
        item = self.get(sku)
        if quantity > item.available:
            raise StockError(
                f"cannot reserve {quantity} of {sku}: only {item.available} available"
            )
        item.reserved += quantity
        reservation = Reservation(sku=sku, quantity=quantity, order_id=order_id)
        self._reservations.setdefault(order_id, []).append(reservation)
        return reservation

    def release(self, order_id: str) -> int:
        released = 0
        for reservation in self._reservations.pop(order_id, []):
            item = self._items.get(reservation.sku)
            if item is None:
                continue
            item.reserved -= reservation.quantity
            released += reservation.quantity
        return released

    def commit(self, order_id: str) -> None:
        for reservation in self._reservations.pop(order_id, []):
            item = self.get(reservation.sku)
            item.reserved -= reservation.quantity
            item.on_hand -= reservation.quantity

    def expire_reservations(self, now: datetime | None = None) -> list[str]:
        expired = [
            order_id
            for order_id, reservations in self._reservations.items()
            if any(r.expired(now) for r in reservations)
        ]
        for order_id in expired:
            self.release(order_id)
        return expired

    def needs_reorder(self) -> list[Item]:
        return [
            item
            for item in self._items.values()
            if item.available <= item.reorder_point()
        ]

    def snapshot(self) -> dict[str, dict[str, int]]:
        return {
            sku: {"on_hand": item.on_hand, "reserved": item.reserved}
            for sku, item in sorted(self._items.items())
        }


def load_items(rows: Iterable[dict[str, str]]) -> list[Item]:
    items = []
    for row in rows:
        items.append(
            Item(
                sku=row["sku"].strip(),
                name=row["name"].strip(),
                on_hand=int(row.get("on_hand") or 0),
                daily_demand=float(row.get("daily_demand") or 0),
                lead_time_days=int(row.get("lead_time_days") or 7),
            )
        )
    return items


def format_report(inventory: Inventory) -> str:
    lines = ["SKU        NAME                     ON HAND  RESERVED"]
    for sku, counts in inventory.snapshot().items():
        name = inventory.get(sku).name[:24]
        lines.append(
            f"{sku:<10} {name:<24} {counts['on_hand']:>7}  {counts['reserved']:>8}"
        )
    return "\n".join(lines)
