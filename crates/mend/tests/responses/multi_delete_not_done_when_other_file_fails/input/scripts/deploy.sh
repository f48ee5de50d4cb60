#!/usr/bin/env bash
# Deploys a release tarball to the app servers and restarts the service.
set -euo pipefail

APP=notes-api
RELEASES_DIR=/srv/$APP/releases
KEEP_RELEASES=5
HOSTS=(app1.internal app2.internal)

usage() {
  echo "usage: $0 VERSION [--dry-run]" >&2
  exit 2
}

log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

run() {
  if [[ "${DRY_RUN:-0}" == 1 ]]; then
    echo "would run: $*"
  else
    "$@"
  fi
}

[[ $# -ge 1 ]] || usage
VERSION=$1
DRY_RUN=0
if [[ "${2:-}" == "--dry-run" ]]; then
  DRY_RUN=1
fi

TARBALL="dist/$APP-$VERSION.tar.gz"
if [[ ! -f "$TARBALL" ]]; then
  echo "missing $TARBALL; run make dist first" >&2
  exit 1
fi

for host in "${HOSTS[@]}"; do
  log "uploading $VERSION to $host"
  run scp "$TARBALL" "$host:/tmp/"
  run ssh "$host" "mkdir -p $RELEASES_DIR/$VERSION && tar -xzf /tmp/$APP-$VERSION.tar.gz -C $RELEASES_DIR/$VERSION"
  run ssh "$host" "ln -sfn $RELEASES_DIR/$VERSION /srv/$APP/current"
  log "restarting $APP on $host"
  run ssh "$host" "sudo systemctl restart $APP"
done

for host in "${HOSTS[@]}"; do
  log "pruning old releases on $host"
  run ssh "$host" "ls -1dt $RELEASES_DIR/* | tail -n +$((KEEP_RELEASES + 1)) | xargs -r rm -rf"
done

log "deployed $VERSION to ${#HOSTS[@]} hosts"
