"""`rocmlint report`: the porting report's page and Markdown summary, made from the same scan as
`rocmlint scan` (the counts are compared with scan's json), with names from the scanned tree
escaped, CODEOWNERS read with the gitignore matcher, and the trend against a previous report."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from conftest import REPO, run_cli

from rocmlint.catalog.loader import check_by_id
from rocmlint.findings import Finding, Fix
from rocmlint.report.codeowners import parse_codeowners
from rocmlint.report.porting import effort_of, family_of

SAMPLE = REPO / "sample_repos"


class _Page(HTMLParser):
    """What a page holds: element names, ids, in-page links, script bodies, text."""

    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.links, self.scripts, self.text = [], set(), [], [], []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if tag in ("script", "link", "img", "iframe") and any(k in attrs for k in ("src", "href")):
            self.links.append(attrs.get("src") or attrs.get("href"))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


def _page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _report(tmp_path, *args, cwd=REPO):
    out = tmp_path / "report.html"
    done = run_cli("report", *args, "--output", str(out), "--no-cache", cwd=cwd)
    return done, out


def test_report_counts_what_scan_finds(tmp_path):
    done, out = _report(tmp_path, "sample_repos", "--summary", str(tmp_path / "summary.md"))
    assert done.returncode == 1, done.stderr  # findings, as scan says
    scan = run_cli("scan", "sample_repos", "--format", "json", "--no-cache")
    document = json.loads(scan.stdout)
    page = _page(out)
    text = " ".join(page.text)
    total = len(document["findings"])
    assert total > 20
    assert f"{total} finding" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert f"rocmlint: wrote {out}: {total} findings in {document['files_checked']} files" in done.stderr
    # Every finding is listed with its place, and its check links to the check's fix-it.
    for finding in document["findings"]:
        shown = finding["path"].removeprefix("sample_repos/")
        assert f"{shown}:{finding['line']}:{finding['column']}" in text
        assert f"check-{finding['code']}" in page.ids
    assert f"#check-{document['findings'][0]['code']}" in page.links
    # The gated count is the scan's, and its reasons (with their checks) add up to it.
    assert f"{document['gated_count']} hits are not reported" in text
    gated_section = out.read_text(encoding="utf-8").split('<section id="gated">')[1].split("</section>")[0]
    hits = [int(n) for n in re.findall(r"</td><td>(\d+)</td><td>(?:<a |ROCM)", gated_section)]
    assert sum(hits) == document["gated_count"] > 0
    # One file: nothing is fetched at view time (only in-page anchors and links to the docs).
    for link in page.links:
        assert link.startswith(("#", "data:", "https://github.com/rocmlint/rocmlint/blob/main/checks/")), link
    for href in (link for link in page.links if link.startswith("#")):
        assert href[1:] in page.ids, href
    assert page.tags.count("svg") >= 3 and "rect" in page.tags


def test_report_takes_scan_options_and_refuses_the_ones_that_change_files(tmp_path):
    done, out = _report(tmp_path, "sample_repos/nvidia_app", "--select", "ROCM001", "--exit-zero")
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "ROCM001" in text and 'id="check-ROCM301"' not in text
    for option in ("--fix", "--diff", "--add-noqa"):
        refused = run_cli("report", "sample_repos", option, "--output", str(tmp_path / "x.html"))
        assert refused.returncode == 2 and f"{option} is a scan option a report does not take" in refused.stderr
    missing = run_cli("report", "no/such/folder", "--output", str(tmp_path / "x.html"))
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    assert not (tmp_path / "x.html").exists()


def test_names_from_the_scanned_tree_are_text_on_the_page_and_in_the_summary(tmp_path):
    tree = tmp_path / "tree"
    folder = tree / "<img src=x onerror=alert(2)>"
    folder.mkdir(parents=True)
    # The `/` of `</script>` makes a folder of `<script>alert(1)<`.
    hostile = folder / "<script>alert(1)</script>.py"
    hostile.parent.mkdir()
    hostile.write_text("import pynvml\n", encoding="utf-8")
    (tree / ".github").mkdir()
    (tree / ".github" / "CODEOWNERS").write_text("* @team-<b>bold</b>\n", encoding="utf-8")
    (tree / "<u>latin1.py").write_bytes(b"# caf\xe9\nimport pynvml\n")  # not UTF-8: listed as not analysed
    done, out = _report(tmp_path, str(tree), "--summary", str(tmp_path / "summary.md"), "--title", "<i>t</i>")
    assert done.returncode == 1, done.stderr
    page = _page(out)
    html_text = out.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html_text and "<img src=x" not in html_text and "<b>bold" not in html_text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in html_text
    assert page.tags.count("script") == 1 and "img" not in page.tags and "u" not in page.tags
    assert "<title>&lt;i&gt;t&lt;/i&gt;</title>" in html_text
    assert "&lt;u&gt;latin1.py" in html_text and "1 file not analysed" in html_text
    assert any("<script>alert(1)</script>.py:1:1" in t for t in page.text)  # shown as the name it is
    assert "@team-<b>bold</b>" in " ".join(page.text)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "<script>" not in summary and "<b>" not in summary and "<i>" not in summary
    assert "| @team-&lt;b&gt;bold&lt;/b&gt; | 1 |" in summary


def test_codeowners_last_matching_line_decides(tmp_path):
    owners = parse_codeowners(
        "# comment\n*  @everyone\n/csrc/ @kernels  # the CUDA sources\n*.cu @cuda-team\n!nothing @x\ndocs/[[:digit:]]*.md @writers\n",
        tmp_path / "CODEOWNERS",
        tmp_path,
    )
    assert owners.owners_of(str(tmp_path / "setup.py")) == ("@everyone",)
    assert owners.owners_of(str(tmp_path / "csrc" / "ops" / "norm.cpp")) == ("@kernels",)
    assert owners.owners_of(str(tmp_path / "csrc" / "ops" / "norm.cu")) == ("@cuda-team",)
    assert owners.owners_of(str(tmp_path / "docs" / "1-intro.md")) == ("@writers",)
    assert owners.owners_of(str(tmp_path / "docs" / "intro.md")) == ("@everyone",)
    assert owners.owners_of(str(tmp_path.parent / "elsewhere.py")) == ()


def test_report_counts_findings_per_owner(tmp_path):
    tree = tmp_path / "tree"
    (tree / "kernels").mkdir(parents=True)
    (tree / "app").mkdir()
    (tree / "kernels" / "reduce.cu").write_text(
        "__device__ float sum(float v) {\n  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n  return v;\n}\n",
        encoding="utf-8",
    )
    (tree / "app" / "monitor.py").write_text("import pynvml\n", encoding="utf-8")
    (tree / "CODEOWNERS").write_text("* @app-team\nkernels/ @kernel-team\n", encoding="utf-8")
    scan = json.loads(run_cli("scan", str(tree), "--format", "json", "--no-cache").stdout)
    kernel_findings = sum(1 for f in scan["findings"] if "/kernels/" in f["path"])
    app_findings = sum(1 for f in scan["findings"] if "/app/" in f["path"])
    assert kernel_findings and app_findings
    done, out = _report(tmp_path, str(tree), "--summary", str(tmp_path / "s.md"))
    assert done.returncode == 1, done.stderr
    text = out.read_text(encoding="utf-8")
    assert re.search(rf"<td>@kernel-team</td><td>{kernel_findings}</td><td>1</td>", text)
    assert re.search(rf"<td>@app-team</td><td>{app_findings}</td><td>1</td>", text)
    assert f"| @kernel-team | {kernel_findings} |" in (tmp_path / "s.md").read_text(encoding="utf-8")


def test_trend_against_a_previous_json_report(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("import pynvml\n", encoding="utf-8")
    (tree / "b.py").write_text("import pynvml\n", encoding="utf-8")
    old = run_cli("scan", "tree", "--format", "json", "--no-cache", "--output", "old.json", cwd=tmp_path)
    assert old.returncode == 1
    (tree / "a.py").write_text("x = 1\n", encoding="utf-8")
    done = run_cli("report", "tree", "--previous", "old.json", "--output", "r.html", "--summary", "s.md", "--no-cache", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    text = "".join(_page(tmp_path / "r.html").text)
    assert "2 → 1 findings (-1): 0 new, 1 gone" in text
    assert "2 → 1 (-1), 0 new, 1 gone" in (tmp_path / "s.md").read_text(encoding="utf-8")
    (tmp_path / "bad.json").write_text('{"tool": "other"}', encoding="utf-8")
    refused = run_cli("report", "tree", "--previous", "bad.json", "--output", "r2.html", cwd=tmp_path)
    assert refused.returncode == 2 and "not a rocmlint json report" in refused.stderr
    assert not (tmp_path / "r2.html").exists()


def test_effort_and_family_come_from_the_finding_and_its_check():
    def finding(code, fix=None):
        return Finding("x", code, "m", "warning", 1, 0, 1, 1, fix=fix)

    assert effort_of(finding("ROCM101", Fix("t", "safe", ())), check_by_id("ROCM101")) == "fix"
    assert effort_of(finding("ROCM002", Fix("t", "unsafe", ())), check_by_id("ROCM002")) == "unsafe-fix"
    assert effort_of(finding("ROCM201"), check_by_id("ROCM201")) == "kernel"  # reads C/C++
    assert effort_of(finding("ROCM301"), check_by_id("ROCM301")) == "rewrite"
    assert effort_of(finding("ROCM102"), check_by_id("ROCM102")) == "rewrite"
    assert [family_of(c) for c in ("ROCM001", "ROCM109", "ROCM216", "ROCM312", "ROCM901")] == [
        "ROCM0xx", "ROCM1xx", "ROCM2xx", "ROCM3xx", "ROCM9xx"]


def test_gate_reasons_of_one_kind_count_together_whatever_their_line():
    from rocmlint.report.porting import gate_kind

    assert gate_kind("inside `#ifdef USE_ROCM` (line 27), code for one GPU stack") == gate_kind(
        "inside `#ifdef USE_ROCM` (line 80), code for one GPU stack") == "inside `#ifdef USE_ROCM`, code for one GPU stack"
    assert gate_kind("CMakeLists.txt:602 (under `if(A)`, line 554)") == "CMakeLists.txt:602 (under `if(A)`)"
    assert gate_kind("inside `#ifdef USE_ROCM`") != gate_kind("inside `#ifndef USE_ROCM`")
