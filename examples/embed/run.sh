#!/usr/bin/env bash
# Builds and runs the embedding example as another team would: from `npm pack` tarballs of the
# built packages (run `npm run build` at the root first), installed into this directory, which is
# not a workspace of the repository. Prints the example's result; exits non-zero on failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rm -rf "$here/vendor" "$here/node_modules" "$here/dist" "$here/package-lock.json"
mkdir -p "$here/vendor"
for pkg in core adapter-hmac adapter-postgres; do
  (cd "$root/packages/$pkg" && npm pack --silent --pack-destination "$here/vendor" >/dev/null)
done
cd "$here"
npm install --no-audit --no-fund --no-package-lock --prefer-offline --loglevel=error
npm run --silent build
npm run --silent start
npm run --silent start -- --memory
