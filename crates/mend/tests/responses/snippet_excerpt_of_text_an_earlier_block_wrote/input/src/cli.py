#!/usr/bin/env python3
"""Command line for the nightly export job."""

import argparse
import csv
import json
import os
import sys
from pathlib import Path

from .exporter import Exporter, ExportError

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_FAILED = 3


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="export",
        description="Export orders from the warehouse database.",
    )
    parser.add_argument("--since", help="only orders after this date (YYYY-MM-DD)")
    parser.add_argument("--until", help="only orders before this date (YYYY-MM-DD)")
    parser.add_argument(
        "--format",
        choices=["csv", "json"],
        default="csv",
        help="output format (default: csv)",
    )
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--dry-run", action="store_true", help="count rows, write nothing")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    return parser.parse_args(argv)


def database_url():
    url = os.environ.get("WAREHOUSE_DB")
    if not url:
        raise SystemExit("WAREHOUSE_DB is not set")
    return url


def write_csv(rows, out):
    writer = csv.DictWriter(out, fieldnames=["order_id", "sku", "quantity", "placed_at"])
    writer.writeheader()
    for row in rows:
        writer.writerow(row)


def write_json(rows, out):
    json.dump(list(rows), out, indent=2, default=str)
    out.write("\n")


def main(argv=None):
    args = parse_args(argv)
    exporter = Exporter(database_url(), verbose=args.verbose)
    try:
        rows = exporter.orders(since=args.since, until=args.until)
    except ExportError as exc:
        print(f"export failed: {exc}", file=sys.stderr)
        return EXIT_FAILED

    if args.dry_run:
        print(f"{sum(1 for _ in rows)} rows")
        return EXIT_OK

    writer = write_csv if args.format == "csv" else write_json
    if args.output:
        with args.output.open("w", newline="") as out:
            writer(rows, out)
    else:
        writer(rows, sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
