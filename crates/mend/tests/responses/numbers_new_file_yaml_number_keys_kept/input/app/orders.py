"""Order intake: validation and pricing for the warehouse API."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import Decimal

log = logging.getLogger(__name__)

MAX_LINES = 200
CURRENCIES = {"EUR", "USD", "GBP"}


class OrderError(ValueError):
    """Raised when an order cannot be accepted."""


@dataclass
class Line:
    sku: str
    quantity: int
    unit_price: Decimal


@dataclass
class Order:
    customer_id: str
    currency: str
    lines: list[Line] = field(default_factory=list)
    note: str = ""

    def subtotal(self) -> Decimal:
        return sum((l.unit_price * l.quantity for l in self.lines), Decimal("0"))


def validate(order: Order) -> None:
    if not order.customer_id:
        raise OrderError("customer_id is required")
    if order.currency not in CURRENCIES:
        raise OrderError(f"unsupported currency {order.currency!r}")
    if not order.lines:
        raise OrderError("an order needs at least one line")
    if len(order.lines) > MAX_LINES:
        raise OrderError(f"at most {MAX_LINES} lines per order")
    for line in order.lines:
        if line.quantity <= 0:
            raise OrderError(f"quantity of {line.sku} must be positive")
        if line.unit_price < 0:
            raise OrderError(f"price of {line.sku} cannot be negative")


def price(order: Order, discount: Decimal = Decimal("0")) -> Decimal:
    validate(order)
    subtotal = order.subtotal()
    if discount:
        subtotal -= (subtotal * discount).quantize(Decimal("0.01"))
    log.debug("priced order for %s at %s %s", order.customer_id, subtotal, order.currency)
    return subtotal


def parse_line(raw: dict) -> Line:
    try:
        return Line(
            sku=str(raw["sku"]),
            quantity=int(raw["quantity"]),
            unit_price=Decimal(str(raw["unit_price"])),
        )
    except (KeyError, ValueError) as exc:
        raise OrderError(f"bad order line {raw!r}: {exc}") from exc


def parse_order(raw: dict) -> Order:
    order = Order(
        customer_id=str(raw.get("customer_id", "")),
        currency=str(raw.get("currency", "EUR")).upper(),
        note=str(raw.get("note", "")),
    )
    for item in raw.get("lines", []):
        order.lines.append(parse_line(item))
    return order
