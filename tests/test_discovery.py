"""Which files a scan reads."""

from pathlib import Path

from rocmlint.files.discovery import Excludes, discover


def _paths(root: Path, *patterns: str) -> list[str]:
    import os

    old = os.getcwd()
    os.chdir(root)
    try:
        return [t.path for t in discover([Path(".")], Excludes(patterns, root))]
    finally:
        os.chdir(old)


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def test_skips_vcs_venvs_build_output_and_unknown_languages(tmp_path):
    _touch(
        tmp_path,
        "src/a.py",
        "src/k.cu",
        "src/notes.txt",
        ".git/hooks/h.py",
        "env/lib/site.py",
        "build/lib/b.py",
        "__pycache__/c.py",
        "pkg.egg-info/d.py",
        "node_modules/x/e.py",
    )
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    assert _paths(tmp_path) == ["src/a.py", "src/k.cu"]


def test_gitignore_files_apply_relative_to_their_folder(tmp_path):
    _touch(tmp_path, "a.py", "gen/b.py", "sub/c.py", "sub/keep/d.py", "sub/skip_me.py")
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("skip_*.py\n")
    assert _paths(tmp_path) == ["a.py", "sub/c.py", "sub/keep/d.py"]


def test_exclude_patterns(tmp_path):
    _touch(tmp_path, "a.py", "third_party/b.py", "pkg/c_pb2.py", "pkg/d.py")
    assert _paths(tmp_path, "third_party/", "*_pb2.py") == ["a.py", "pkg/d.py"]


def test_explicit_files_are_scanned_and_reported_once(tmp_path):
    _touch(tmp_path, "build/gen.py", "a.py")
    import os

    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        targets = list(discover([Path("build/gen.py"), Path("."), Path("a.py")], Excludes((), tmp_path)))
    finally:
        os.chdir(old)
    assert [t.path for t in targets] == ["build/gen.py", "a.py"]


def test_build_and_container_files_are_routed_by_name():
    from rocmlint.files.languages import language_of

    assert language_of("CMakeLists.txt") == "cmake"
    assert language_of("Dockerfile.rocm") == "dockerfile"
    assert language_of("requirements-dev.txt") == "requirements"
    assert language_of("kernel.hip") == "cpp"
    assert language_of("model.pyi") == "python"
    assert language_of("README.md") is None


def test_a_file_reached_through_links_or_named_twice_is_scanned_once(tmp_path, monkeypatch):
    from rocmlint.settings import Settings, scan_paths

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("import pynvml\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "alias.py").symlink_to(tmp_path / "pkg" / "m.py")
    (tmp_path / "linked_pkg").symlink_to(tmp_path / "pkg", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    paths = [Path("pkg"), Path("other/alias.py"), Path("linked_pkg/m.py"), Path("pkg/m.py")]
    result, _ = scan_paths(paths, Settings(), use_project=False)
    assert [(f.path, f.check_id) for f in result.findings] == [("pkg/m.py", "ROCM001")]


def _package_in_an_ignored_venv(root: Path) -> Path:
    """A checkout whose .gitignore ignores its virtual environment, with a package installed in it."""
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text(".venv/\n*.log\n")
    venv = root / ".venv"
    package = venv / "lib" / "python3.11" / "site-packages" / "pkg"
    package.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    (package / "__init__.py").write_text("import pynvml\n")
    (package / "sub").mkdir()
    (package / "sub" / "mod.py").write_text("x = 1\n")
    return package


def test_a_named_folder_that_a_gitignore_above_ignores_is_scanned(tmp_path):
    from conftest import run_cli

    package = _package_in_an_ignored_venv(tmp_path)
    proc = run_cli("scan", str(package), "--format", "json", "--no-cache", cwd=tmp_path)
    document = __import__("json").loads(proc.stdout)
    assert proc.returncode == 1, proc.stderr
    assert document["files_checked"] == 2
    assert [f["path"] for f in document["findings"]] == [".venv/lib/python3.11/site-packages/pkg/__init__.py"]
    assert document["skipped"] == []


def test_a_named_ignored_folder_outside_git_is_scanned_and_its_own_rules_still_apply(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCMLINT_NO_GIT", "1")
    package = _package_in_an_ignored_venv(tmp_path)
    (package / "generated.log.py").write_text("x = 1\n")
    (package / ".gitignore").write_text("sub/\n")
    monkeypatch.chdir(tmp_path)
    found = [t.path for t in discover([package], Excludes((), tmp_path))]
    assert found == [".venv/lib/python3.11/site-packages/pkg/__init__.py", ".venv/lib/python3.11/site-packages/pkg/generated.log.py"]


def test_real_paths_are_realpath(tmp_path, monkeypatch):
    # Folders resolved once each, through their parents, give what realpath gives: relative
    # paths with `.` and `..`, links to folders (relative, absolute, upwards, in a loop, dangling).
    import os
    import random

    from conftest import link_maze
    from rocmlint.files.discovery import RealPaths

    names = link_maze(tmp_path) + [".", ".."]
    monkeypatch.chdir(tmp_path / "a" / "b")
    rng = random.Random(3)
    for _ in range(500):
        parts = [rng.choice(names) for _ in range(rng.randint(1, 6))] + ["f.py"]
        path = os.path.join(str(tmp_path), *parts) if rng.random() < 0.5 else os.path.join(*parts)
        real_paths = RealPaths()
        for _ in range(2):  # asked again: from what it keeps
            assert real_paths.of(path, os.path.islink(path)) == os.path.realpath(path), path
