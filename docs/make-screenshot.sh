#!/usr/bin/env bash
# Regenerates docs/console-answer.png: a console answer rendered as a terminal page by headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
query=${1:-/define terrain}
.venv/bin/python -m bot ask "$query" > "$work/out.txt" 2>&1
.venv/bin/python - "$work" "$query" <<'PY'
import html, sys
work, query = sys.argv[1], sys.argv[2]
text = open(f"{work}/out.txt", encoding="utf-8").read()
style = ("body{background:#1e1f22;margin:0;padding:16px}"
         ".t{background:#111;color:#ddd;font:14px/1.45 'DejaVu Sans Mono',monospace;padding:14px 18px;"
         "border-radius:8px;white-space:pre-wrap;width:1000px}.p{color:#8fd18f}")
with open(f"{work}/page.html", "w", encoding="utf-8") as f:
    f.write(f'<!doctype html><meta charset="utf-8"><style>{style}</style><div class="t">'
            f'<span class="p">$ python -m bot ask "{html.escape(query)}"</span>\n{html.escape(text)}</div>')
PY
lines=$(wc -l < "$work/out.txt")
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$work/profile" --hide-scrollbars \
    --window-size=1060,$(( (lines * 3 / 2 + 4) * 21 )) --screenshot=docs/console-answer.png "file://$work/page.html" 2>/dev/null
echo "wrote docs/console-answer.png"
