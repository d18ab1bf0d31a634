#!/bin/sh
# conform.sh: certify your Host Store with conform in any CI.
#
# Run it from your module's root:
#
#     ci/conform.sh                  # go test -count=1 -run TestConform ./...
#     ci/conform.sh ./store/... -v   # your own packages and go test flags
#
# It runs your conform test with the reports written to one directory,
# says where they are, copies report.md where your CI shows it, and exits
# with the test's exit code.
#
# Environment:
#     CONFORM_REPORT_DIR  where the four reports go (default: conform-report,
#                         made absolute: go test runs each package in its
#                         own directory)
#     CONFORM_TEST        the test name pattern to run (default: TestConform)
#     CONFORM_SUMMARY     if set, a file report.md is appended to (created if
#                         missing), e.g. your CI's job summary
#     GO                  the go command (default: go)
#
# Anything else conform reads (CONFORM_SEED, CONFORM_REPRO,
# CONFORM_LABEL_FILTER) passes through to the test.

set -u

dir=${CONFORM_REPORT_DIR:-conform-report}
case $dir in
/*) ;;
*) dir=$(pwd)/$dir ;;
esac
test_pattern=${CONFORM_TEST:-TestConform}
go_cmd=${GO:-go}
reports="junit.xml report.json report.md report.html"

if [ $# -eq 0 ]; then
	set -- ./...
fi

# Reports of an earlier run must not pass for this one's.
mkdir -p "$dir" || exit 1
for f in $reports; do
	rm -f "$dir/$f" || exit 1
done

echo "conform: $go_cmd test -count=1 -run $test_pattern $* (reports in $dir)"
CONFORM_REPORT_DIR=$dir
export CONFORM_REPORT_DIR
"$go_cmd" test -count=1 -run "$test_pattern" "$@"
status=$?

if [ -f "$dir/report.md" ]; then
	echo "conform: reports:"
	for f in $reports; do
		[ -f "$dir/$f" ] && echo "  $dir/$f"
	done
	if [ -n "${CONFORM_SUMMARY:-}" ]; then
		if cat "$dir/report.md" >>"$CONFORM_SUMMARY"; then
			echo "conform: report.md appended to $CONFORM_SUMMARY"
		else
			echo "conform: could not append report.md to $CONFORM_SUMMARY" >&2
			[ "$status" -eq 0 ] && status=1
		fi
	fi
else
	echo "conform: no report in $dir: the conform test did not run to its end (see the output above)" >&2
	if [ -n "${CONFORM_SUMMARY:-}" ]; then
		printf '## conform\n\nNo report: the conform test did not run to its end (exit code %s); see the job log.\n' "$status" >>"$CONFORM_SUMMARY"
	fi
	# A run that wrote no report certified nothing, whatever go test said.
	[ "$status" -eq 0 ] && status=1
fi

echo "conform: exit code $status"
exit "$status"
