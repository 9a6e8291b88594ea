#!/usr/bin/env bash
# MinIO, built from source with `go install` of a pinned version into .tools/bin: the longest
# step of the demo's install (its modules from the Go module proxy, then minutes of compiling on
# 2 cores), which infra/install.sh runs beside the others.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"  # github.com/minio/minio, newest module version

[ -x "$TOOLS/bin/minio" ] && [ "$(cat "$TOOLS/minio.version" 2>/dev/null)" = "$MINIO_VERSION" ] && exit 0
echo "[install-minio] MinIO $MINIO_VERSION: go install (a few minutes on 2 cores)" >&2
GOBIN="$TOOLS/bin" GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$MINIO_VERSION"
echo "$MINIO_VERSION" >"$TOOLS/minio.version"
