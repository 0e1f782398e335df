#!/usr/bin/env bash
# Feeds our HdrHistogram logs to HdrHistogram's reference HistogramLogProcessor (Java) and
# checks its percentiles against ours (results.TestHlogReferenceProcessor). Run by
# 'make test', so by CI. As root it installs what it needs (Debian: libhdrhistogram-java and
# a JRE); otherwise, when they are missing, it says how to install them and skips.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
jar=${HDRHISTOGRAM_JAR:-/usr/share/java/hdrhistogram.jar}
if [ ! -e "$jar" ] || ! command -v java >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "hlogtest: installing libhdrhistogram-java and a JRE"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libhdrhistogram-java default-jre-headless >/dev/null
	else
		echo "hlogtest: SKIPPED: HdrHistogram's reference processor is not installed; install it with" >&2
		echo "  sudo apt-get install libhdrhistogram-java default-jre-headless" >&2
		exit 0
	fi
fi
# Required from here on: a missing processor fails the test instead of skipping it.
RPCRDMA_BENCH_REQUIRE_HDRHISTOGRAM=1 HDRHISTOGRAM_JAR="$jar" CGO_ENABLED=0 "$GO" test -count=1 \
	-run '^TestHlogReferenceProcessor$' -v ./results/ | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+hlog)' 
exit "${PIPESTATUS[0]}"
