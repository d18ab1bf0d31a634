#!/usr/bin/env bash
# test.sh: every test of conform, from a fresh machine. It starts (and, where
# missing, installs) a throwaway PostgreSQL server for the PostgreSQL store's
# tests, checks formatting and vet, runs `go test -race ./...` over the
# module, then the third-party example module, and stops the server.
#
#   scripts/test.sh            # everything
#   scripts/test.sh ./harness/ # only these packages (the server still starts)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

export CONFORM_PG_STATE="${CONFORM_PG_STATE:-$(mktemp -d)/conform-pg.state}"
eval "$(scripts/pg.sh start)"
trap 'scripts/pg.sh stop >/dev/null 2>&1 || true' EXIT

# The admission chapter's tests drive a helper written in Python from the
# protocol document, and util-linux flock(1); the store process examples
# run on python3 and Node.js.
if [ ! -x /usr/bin/python3 ] || ! command -v flock >/dev/null || ! command -v node >/dev/null; then
	echo "== installing python3, util-linux and nodejs"
	apt-get update -qq && apt-get install -y -qq python3 util-linux nodejs >/dev/null
fi

echo "== gofmt"
unformatted=$(gofmt -l . | grep -v '^vendor/' || true)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
echo "== go vet"
go vet ./...

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
echo "== go test -race ${pkgs[*]}"
go test -race -count=1 -timeout 15m "${pkgs[@]}"

if [ $# -eq 0 ]; then
	# Every parser of user input has a fuzz target; each runs briefly here
	# (its seed corpus also runs in the go test above). A short minimize
	# budget keeps a new input's minimization from taking the whole time.
	echo "== fuzz, ${CONFORM_FUZZTIME:-4s} a target"
	for target in internal/faults:FuzzParseFailpointFlag internal/engine:FuzzParseRepro \
		internal/engine:FuzzValidateLabelFilter internal/textsafe:FuzzLine internal/engine:FuzzMergeReports \
		stores/postgres:FuzzParseURL internal/explore:FuzzReplayScript internal/explore:FuzzDecodeRepro \
		procstore:FuzzDecodeResponse; do
		# A target that moved would fuzz nothing and pass: refuse it.
		listed=$(go test -list "^${target#*:}\$" "./${target%%:*}")
		if ! grep -qx "${target#*:}" <<<"$listed"; then
			echo "fuzz target ${target#*:} is not in ./${target%%:*}"; exit 1
		fi
		go test -run '^$' -fuzz "^${target#*:}\$" -fuzztime "${CONFORM_FUZZTIME:-4s}" -fuzzminimizetime 100x "./${target%%:*}"
	done
fi

if [ $# -eq 0 ] && [ -d examples/thirdparty ]; then
	echo "== examples/thirdparty"
	(cd examples/thirdparty && go vet ./... && go test -count=1 ./...)
fi
