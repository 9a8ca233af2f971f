#!/usr/bin/env bash
# Fails when a comment or a document names a project file that does not exist (a header that
# moved, a document that was never written): every `<top-level folder>/<path>.<ext>` mentioned in
# sources, CMake files, scripts and docs must be a file of the checkout. docs/BENCHMARKS.md is a
# dated record of past runs and may name files as they were then.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs='discovery|telemetry|routing|api|scheduler_hooks|tools|tests|bench|scripts|docs|dashboards|packaging|cmake'
status=0
while IFS= read -r hit; do
  file=${hit%%:*}
  ref=${hit#*:}
  ref=${ref#*:}
  [ -e "$ref" ] && continue
  # REST paths (api/v1/...) are URLs, not files.
  case "$ref" in api/v1/*) continue ;; esac
  echo "check-references: $file names $ref, which does not exist" >&2
  status=1
done < <(grep -rnoE "(^|[^A-Za-z0-9_./-])(${dirs})/[A-Za-z0-9_./-]+\.(h|cpp|md|sh|json|yml|yaml|txt|in|net)\b" \
           --include='*.h' --include='*.cpp' --include='*.md' --include='*.sh' \
           --include='CMakeLists.txt' --include='*.cmake' \
           --exclude-dir=build --exclude-dir=build-asan --exclude-dir=.git --exclude=BENCHMARKS.md . |
         sed -E 's/^(\.\/)?([^:]+):([0-9]+):[^A-Za-z]*/\2:\3:/' | sort -u)
[ $status -eq 0 ] && echo "check-references: ok"
exit $status
