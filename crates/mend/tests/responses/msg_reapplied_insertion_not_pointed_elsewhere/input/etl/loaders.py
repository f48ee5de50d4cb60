"""Loading the nightly CSV drops into domain objects."""

import csv
import logging
from decimal import Decimal
from pathlib import Path

from .models import Customer, Item, Order

log = logging.getLogger(__name__)

ENCODING = "utf-8-sig"


def read_csv(path):
    with open(path, newline="", encoding=ENCODING) as f:
        return list(csv.DictReader(f))


def parse_money(value):
    value = value.strip().replace(",", "")
    if not value:
        return Decimal("0")
    return Decimal(value)


def load_customers(path):
    rows = read_csv(path)
    customers = {}
    for row in rows:
        customer = Customer.from_row(row)
        customers[customer.id] = customer
    return customers


def load_orders(path):
    rows = read_csv(path)
    log.info("loaded %d rows from %s", len(rows), path)
    return [Order.from_row(r) for r in rows]


def load_items(path):
    rows = read_csv(path)
    return [Item.from_row(r) for r in rows]


def load_drop(folder):
    folder = Path(folder)
    return {
        "customers": load_customers(folder / "customers.csv"),
        "orders": load_orders(folder / "orders.csv"),
        "items": load_items(folder / "items.csv"),
    }
