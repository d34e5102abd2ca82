#!/usr/bin/env bash
# Replace static/vendor/plotly.min.js with plotly.js's cartesian partial bundle from npm (the plot types the
# site draws: bar, scatter, heatmap, box). Usage: scripts/vendor_plotly.sh [VERSION]
set -euo pipefail
version=${1:-4.1.1}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "plotly.js-cartesian-dist-min@$version" >/dev/null && tar xzf ./*.tgz)
cp "$work/package/plotly-cartesian.min.js" static/vendor/plotly.min.js
head -c 120 static/vendor/plotly.min.js | tr '\n' ' '; echo
echo "static/vendor/plotly.min.js: $(wc -c <static/vendor/plotly.min.js) bytes; update static/vendor/README.md"
