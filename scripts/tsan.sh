#!/usr/bin/env bash
# ThreadSanitizer run of the threaded code's tests: the MAD engine and its I/O thread, the MAD
# proxy and its subprocess transport, the counter sweep, the service (sweep/crawl threads, the
# snapshot publication, the OpenSM event and trap coalescing), the HTTP front and the REST
# server, the metrics page's render thread, the pool. Builds build-tsan/ (unit_tests only) and
# runs those suites; exits non-zero on the first report (halt_on_error).
#   ./scripts/tsan.sh               build and run
#   ./scripts/tsan.sh --no-build    run what build-tsan/ has
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${1:-}" = --no-build ] || ./scripts/build.sh tsan unit_tests
suites='MadEngine*:SubprocessMad*:CounterSweep*:SweepRecovery*:ApiService*:ApiOsmService*'
suites+=':RequestCoalescer*:OsmPluginQueue*:OsmEventListener*:ApiHttpFront*:ApiRest*:ApiMetricsPage*'
suites+=':ApiMetricsShardsServed*:DocumentCache*:EventLog*:EventJournal*:StateStore*:PoolTest*:ApiPool*'
suites+=':TrapSubscription*:SubnetWait*'
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4"
start=$(date +%s)
build-tsan/unit_tests --gtest_filter="$suites" --gtest_brief=1
echo "tsan.sh: $(build-tsan/unit_tests --gtest_filter="$suites" --gtest_list_tests |
  grep -c '^  ') tests clean under ThreadSanitizer in $(( $(date +%s) - start )) s"
