#!/usr/bin/env bash
# Fails when code includes a header from a layer above it.
# Libraries (lowest first): discovery, telemetry, routing, scheduler_hooks, api.
# Rooms inside api/ (lowest first): osm, service, metrics, http, daemon — the data flows
# osm -> service -> metrics -> http -> daemon (docs/architecture.md). api/federation
# (ibfabric-federate) stands beside them: it talks to daemons over HTTP and may include only the
# api layer's HTTP/JSON helpers (api/http/http_json.h, auth.h, list_cursor.h); no room includes it.
# tools/ and tests/ may include any library; no library, room or tool may include tests/, and
# no file there is a test double (fake_*: those live in tests/fakes/).
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A forbidden=(
  [discovery]="telemetry routing scheduler_hooks api tools tests"
  [telemetry]="routing scheduler_hooks api tools tests"
  [routing]="scheduler_hooks api tools tests"
  [scheduler_hooks]="api tools tests"
  [api]="tools tests"
  [api/osm]="api/service api/metrics api/http api/daemon api/federation"
  [api/service]="api/metrics api/http api/daemon api/federation"
  [api/metrics]="api/http api/daemon api/federation"
  [api/http]="api/daemon api/federation"
  [api/daemon]="api/federation"
  [api/federation]="discovery telemetry routing scheduler_hooks api/osm api/service api/metrics api/daemon tools tests"
)
status=0
for layer in "${!forbidden[@]}"; do
  for up in ${forbidden[$layer]}; do
    if hits=$(grep -rnE "#include \"${up}/" "$layer" --include='*.h' --include='*.cpp' 2>/dev/null); then
      echo "check-layering: $layer must not include $up/:" >&2
      echo "$hits" | sed 's/^/  /' >&2
      status=1
    fi
  done
done
# api/federation uses only the HTTP/JSON helpers of api/http.
if hits=$(grep -rnE '#include "api/http/' api/federation --include='*.h' --include='*.cpp' 2>/dev/null |
            grep -vE '#include "api/http/(http_json|auth|list_cursor)\.h"'); then
  echo "check-layering: api/federation may include only api/http/{http_json,auth,list_cursor}.h:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi
# Every api source lives in a room.
if stray=$(find api -maxdepth 1 -name '*.h' -o -maxdepth 1 -name '*.cpp' | grep .); then
  echo "check-layering: api sources outside a room (osm, service, metrics, http, daemon, federation):" >&2
  echo "$stray" | sed 's/^/  /' >&2
  status=1
fi
# Test doubles live in tests/fakes/: no production source is a fake or includes tests/.
production="discovery telemetry routing scheduler_hooks api tools"
# shellcheck disable=SC2086
if fakes=$(find $production -name 'fake_*' | grep .); then
  echo "check-layering: fakes in production code (they belong in tests/fakes/):" >&2
  echo "$fakes" | sed 's/^/  /' >&2
  status=1
fi
# shellcheck disable=SC2086
if hits=$(grep -rnE '#include "tests/' $production --include='*.h' --include='*.cpp' \
            --include='*.c' --include='*.in' 2>/dev/null); then
  echo "check-layering: production code includes tests/:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi
# Only discovery/*.cpp may see libibnetdisc.
if hits=$(grep -rln "infiniband/ibnetdisc.h" --include='*.h' . 2>/dev/null | grep -v '^./build'); then
  echo "check-layering: libibnetdisc types leak through headers:" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi
[ $status -eq 0 ] && echo "check-layering: ok"
exit $status
