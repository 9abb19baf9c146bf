"""The README stays true: its check table is generated from checks/, and CI runs its test command."""

import re

from conftest import REPO
from rocmlint.checks_loader import load_catalog
from rocmlint.docs import render_check_table

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
