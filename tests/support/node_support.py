"""The web app's modules run under node: what the Python twins are checked against."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_web_module(module: str, expression: str, names: str = "") -> str:
    """``expression`` evaluated under node with client/web/``module`` imported (its
    ``names``, or the expression's first name), printed as JSON; skipped without node."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CONTEUR_REQUIRE_NODE") == "1":
            pytest.fail("CONTEUR_REQUIRE_NODE=1 but node is not installed")
        pytest.skip("node is not installed: the web app's twin is not run")
    # messages.js fetches the catalogues beside itself at import: node reads them from
    # events/messages/, where the server serves them from (as tests/support/js/differential.mjs)
    script = f"""
        import {{ readFileSync }} from "node:fs";
        globalThis.fetch = async (url) => {{
          const name = new URL(url).pathname.split("/").pop();
          const text = readFileSync(new URL(name, {json.dumps((ROOT / "events" / "messages").as_uri() + "/")}), "utf8");
          return {{ ok: true, status: 200, json: async () => JSON.parse(text) }};
        }};
        const {{ {names or expression.split("(")[0]} }} = await import({json.dumps((ROOT / "client" / "web" / module).as_uri())});
        console.log(JSON.stringify({expression}));"""
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout
