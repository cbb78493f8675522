"""No telemetry: loading the embedding model in a fresh home leaves no onnxruntime telemetry store.

onnxruntime (1.2x and later) writes a device id and an event database under ``~/.cache/Microsoft`` when it
is imported, unless ``ORT_DISABLE_TELEMETRY`` is set first; the second test shows that this check can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STORE = Path(".cache") / "Microsoft"
# onnxruntime also stays silent on a CI machine (it reads these): the premise test runs without them.
CI_MARKERS = (
    "CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID",
    "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER", "ORT_DISABLE_TELEMETRY",
)


def run(code: str, home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (*CI_MARKERS, "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_judges_model_writes_no_telemetry_store(tmp_path: Path) -> None:
    run(
        "from index.text import embedding\n"
        "e = embedding.load(embedding.DEFAULT_MODEL)\n"
        "assert e is not None and len(e.embed(['is a terrain an enemy card'])) == 1\n",
        tmp_path,
    )
    assert not (tmp_path / STORE).exists(), sorted(p.name for p in (tmp_path / STORE).rglob("*"))


def test_onnxruntime_left_alone_does_write_one(tmp_path: Path) -> None:
    """The premise: without the setting, importing onnxruntime creates the store (so the test above means
    something). If a later onnxruntime stops doing this, this test says so rather than passing silently."""
    run("import onnxruntime\n", tmp_path)
    assert (tmp_path / STORE).exists()
