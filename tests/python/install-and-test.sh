#!/bin/sh
# Installs the Python package the way a user does (pip install from the
# source tree, offline: no build isolation, no index) into a fresh folder,
# then runs its tests against that installed copy, not the source tree.
#   install-and-test.sh PYTHON SOURCE_DIR WORK_DIR
set -eu
python="$1"
src="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
# pip builds a local folder in place (build/, *.egg-info): build a copy, so
# the source tree stays clean and concurrent runs do not meet.
cp -R "$src" "$work/src"
rm -rf "$work/src/build" "$work/src/tilec.egg-info"
"$python" -m pip install --quiet --no-build-isolation --no-index --no-deps --disable-pip-version-check \
  --target "$work/site" "$work/src"
cd "$work"
PYTHONPATH="$work/site${TILEC_TEST_PYTHONPATH:+:$TILEC_TEST_PYTHONPATH}" \
TILEC_EXPECT_PACKAGE_DIR="$work/site/tilec" \
  exec "$python" -m unittest discover -s "$src/tests" -v
