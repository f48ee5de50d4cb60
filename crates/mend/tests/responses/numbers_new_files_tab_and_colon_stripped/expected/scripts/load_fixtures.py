"""Load the fixture orders into a local database."""

import json
import os
import pathlib

from app.orders import parse_order


def main() -> None:
    db = os.environ.get("ORDERS_DATABASE_URL", "postgres://localhost/orders_dev")
    for path in sorted(pathlib.Path("fixtures").glob("*.json")):
        order = parse_order(json.loads(path.read_text()))
        print(f"loading {path} into {db}: {len(order.lines)} lines")


if __name__ == "__main__":
    main()
