#!/usr/bin/env bash
set -euo pipefail

for f in src/*.c; do
  if [ -f "$f" ]; then
    cc -c "$f"
done
