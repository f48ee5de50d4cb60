#!/usr/bin/env bash
# Deploys a release to the app servers with rsync and a health check.
set -euo pipefail

: "${APP:=notes-api}"
: "${HOSTS:=app1.internal app2.internal}"

version=${1:?usage: deploy.sh VERSION}
src="dist/$APP-$version"

for host in $HOSTS; do
  echo "==> $host"
  rsync -a --delete "$src/" "$host:/srv/$APP/releases/$version/"
  ssh "$host" "ln -sfn /srv/$APP/releases/$version /srv/$APP/current && sudo systemctl restart $APP"
  curl -fsS --retry 5 --retry-delay 2 "http://$host:3000/healthz" >/dev/null
done
