"""The porting report in a real browser: headless Chromium from the distribution's packages (CI
installs it: .ci/run) loads the report of sample_repos/, and the page logs nothing to the
console, its script runs, its charts are in the DOM and on the screenshot, and every in-page link
has its target. A control page with a deliberate error shows that the console check can fail."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import REPO, run_cli

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="module")
def chromium() -> str:
    found = os.environ.get("ROCMLINT_CHROMIUM") or next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)
    assert found, "the browser tests need Chromium: apt-get install chromium (or set ROCMLINT_CHROMIUM to its path)"
    return found


def _browse(chromium: str, page: Path, *action: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
        f"--user-data-dir={cwd / 'profile'}", "--enable-logging=stderr", "--v=0", "--window-size=1280,2400",
        "--virtual-time-budget=5000", *action, page.as_uri(),
    ]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def _console(stderr: str) -> list[str]:
    """What the page wrote to the console (errors, uncaught exceptions, failed loads): Chromium
    logs each as `INFO:CONSOLE` with --enable-logging=stderr."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.anchors, self.tags, self.styles = set(), [], Counter(), {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags[tag] += 1
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.anchors.append(attrs["href"][1:])
        if attrs.get("class"):
            self.styles[attrs["class"]] = attrs.get("style")


def _pixels(png: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Decode an 8-bit RGB or RGBA PNG (what Chromium writes): width, height and its pixels."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(png):
        length, kind = struct.unpack(">I4s", png[position : position + 8])
        data = png[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            chunks.append(data)
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    pixels = []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        pixels.extend(tuple(line[i : i + 3]) for i in range(0, stride, channels))
        previous = line
    return width, height, pixels


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def test_the_console_check_sees_a_page_that_fails(chromium, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><link rel="icon" href="data:,"><p>x</p><script>console.error("on purpose"); missing();</script>',
                    encoding="utf-8")
    done = _browse(chromium, page, "--dump-dom", cwd=tmp_path)
    said = _console(done.stderr)
    assert any("on purpose" in line for line in said) and any("missing is not defined" in line for line in said), done.stderr


def test_report_of_the_sample_repos_loads_cleanly_and_draws_its_charts(chromium, tmp_path):
    from rocmlint.report.html_report import EFFORT_COLOURS, SEVERITY_COLOURS

    page = tmp_path / "report.html"
    made = run_cli("report", str(REPO / "sample_repos"), "--output", str(page), "--no-cache", "--exit-zero")
    assert made.returncode == 0, made.stderr

    done = _browse(chromium, page, "--dump-dom", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _console(done.stderr) == []
    dom = _Dom()
    dom.feed(done.stdout)
    # The script ran: it shows the findings filter, hidden when there is no script.
    assert (dom.styles.get("js-only") or "").replace(" ", "") == "display:block;"
    assert dom.tags["svg"] >= 3 and dom.tags["rect"] >= 10
    assert len(dom.anchors) > 50
    missing = sorted({target for target in dom.anchors if target not in dom.ids})
    assert missing == []

    shot = tmp_path / "report.png"
    done = _browse(chromium, page, f"--screenshot={shot}", cwd=tmp_path)
    assert shot.is_file(), done.stderr
    assert _console(done.stderr) == []
    width, height, pixels = _pixels(shot.read_bytes())
    assert (width, height) == (1280, 2400)
    colours = Counter(pixels)
    background = colours.most_common(1)[0][0]
    drawn = sum(n for colour, n in colours.items() if colour != background)
    assert drawn > 0.15 * len(pixels), f"only {drawn} of {len(pixels)} pixels differ from the background"
    # The bars are on the screen in their colours: the severity bars (by family, by folder) and
    # the effort bar. Each covers more than a few hundred pixels.
    for colour in [*SEVERITY_COLOURS.values(), EFFORT_COLOURS["kernel"], EFFORT_COLOURS["rewrite"]]:
        assert colours[_rgb(colour)] > 300, (colour, colours[_rgb(colour)])
    # The header band is dark, the page below it light: the layout is there, not one flat colour.
    top_left = pixels[10 * width + 10]
    assert sum(top_left) < 150 and sum(background) > 600
