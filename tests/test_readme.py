"""The README stays true: its check table is generated from checks/, and CI runs its test command."""

import re

from conftest import REPO
from rocmlint.catalog.loader import load_catalog
from rocmlint.catalog.docs import render_check_table

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_check_table_is_fresh():
    table = re.search(r"<!-- checks:begin -->\n(.*?)<!-- checks:end -->", README, re.S)
    assert table, "README lost its checks markers"
    assert table.group(1) == render_check_table(list(load_catalog())), (
        "README check table is stale: paste the output of `rocmlint rules --format markdown`"
    )


def test_readme_starts_with_exactly_two_set_up_commands():
    first_block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    commands = [line for line in first_block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    assert "rocmlint scan sample_repos/" in commands[0]
    assert "pytest" in commands[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "README.md" in ci and "# 2. " in first_block, ".ci/run must take the test command from the README"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_integration_sections_match_the_files_they_use():
    import json

    import yaml

    from rocmlint import REPOSITORY_URL

    owner_and_name = REPOSITORY_URL.removeprefix("https://github.com/")
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    documents = [yaml.safe_load(block) for block in _blocks("yaml")]  # every YAML example parses
    steps = [step for d in documents if isinstance(d, dict) and "jobs" in d for job in d["jobs"].values() for step in job["steps"]]
    uses_action = [s for s in steps if s.get("uses", "").startswith(owner_and_name + "@")]
    assert uses_action, "the README's workflow uses the Action"
    assert set(uses_action[0].get("with", {})) <= set(action["inputs"])
    # Installed from the repository, as the package is not on PyPI yet.
    installs = re.findall(r'pip install "rocmlint @ git\+([^@"]+)@main"', README)
    assert installs and set(installs) == {REPOSITORY_URL}
    assert "pip install rocmlint " not in README
    pre_commit = next(d for d in documents if isinstance(d, dict) and "repos" in d)
    assert pre_commit["repos"][0]["repo"] == REPOSITORY_URL
    assert [h["id"] for h in pre_commit["repos"][0]["hooks"]] == [hooks[0]["id"]]
    gitlab = next(d for d in documents if isinstance(d, dict) and "rocmlint" in d)
    assert gitlab["rocmlint"]["artifacts"]["reports"]["codequality"] in " ".join(gitlab["rocmlint"]["script"])
    for block in _blocks("json"):
        json.loads(block)
    for heading in ("### In GitHub code scanning", "### In GitLab merge requests", "### With pre-commit", "### In editors",
                    "### Adopting it on a large code base", "## The flake8 plugin"):
        assert heading in README
