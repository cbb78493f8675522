"""Sources that cannot be read stop every entry point at start (exit 1, one line); a build that cannot
be written fails ``python -m index build`` instead of passing without an index."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES
from index import cli
from index.build import store
from index.cli_progress import PREFIX

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("L5R_", "DISCORD_"))}
    full.update(L5R_INDEX_DIR=str(tmp_path / "ix"), **env)
    return subprocess.run(
        [sys.executable, *args], cwd=tmp_path, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "args, extra_env",
    [
        (["-m", "bot", "ask", "/define target"], {}),  # the console
        (["-m", "bot", "run"], {"DISCORD_TOKEN": "not-a-real-token", "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10"}),
        (["-m", "index", "define", "target"], {}),
        (["-m", "glossary", "lint"], {}),
    ],
    ids=["bot-console", "bot-run", "index-cli", "glossary-cli"],
)
def test_missing_source_refuses_to_start(
    tmp_path: Path, args: list[str], extra_env: dict[str, str]
) -> None:
    missing = tmp_path / "rulings"  # e.g. a house-rulings folder on a volume that did not mount
    proc = run(args, tmp_path, L5R_SOURCES=str(SHIPPED_SOURCES), L5R_HOUSE_RULINGS=str(missing), **extra_env)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot read the sources" in lines[0]
    assert f"{missing}: no such file or folder" in lines[0]
    assert proc.stdout == ""


def test_unopenable_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from glossary import loader

    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "page.txt").write_text("Glossary T\n", encoding="utf-8")
    real_open = Path.open

    def denied(self: Path, *args: object, **kwargs: object):  # root can read anything: simulate EACCES
        if self.name == "page.txt":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", denied)
    errors = loader.unreadable_sources([folder])
    assert [str(e) for e in errors] == [f"{folder / 'page.txt'}: cannot read: Permission denied"]


def test_build_on_a_full_disk_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], index_copy: Callable[..., Path]
) -> None:
    index_copy(tmp_path / "ix", cache_only=True)  # no index, but the build embeds nothing before the disk is full
    def full(_folder: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "write_manifest", full)
    code = cli.main(["build", "--index-dir", str(tmp_path / "ix"), "--sources", str(SHIPPED_SOURCES)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    progress = [line for line in err.splitlines() if line.startswith(PREFIX)]  # the build's stages, then:
    assert err.strip().splitlines()[len(progress) :] == [
        f"python -m index: error: BuildError: cannot write the index in {tmp_path / 'ix'}: No space left on device"
    ]
    assert not list((tmp_path / "ix").glob("build-*")) and not list((tmp_path / "ix").glob(".tmp-*"))


def test_build_into_a_folder_that_cannot_be_made_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = run(["-m", "index", "build", "--index-dir", str(blocker / "ix")], tmp_path)
    assert proc.returncode == 1
    progress = [line for line in proc.stderr.splitlines() if line.startswith(PREFIX)]  # the build's stages, then:
    assert proc.stderr.strip().splitlines()[len(progress) :] == [
        f"python -m index: error: BuildError: cannot write the index folder {blocker / 'ix'}: Not a directory"
    ]
    assert "index_path" not in proc.stdout  # no "index_path: None" that passes for success
