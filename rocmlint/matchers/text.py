"""The `text` matcher: a regular expression over the file's text, for build, packaging and
container files where no parser is worth its cost.

Spec keys:
  regex:    a Python regular expression, applied per line; named groups become captures
  comment:  the line-comment prefix of the language ("#", "//"); text after it never matches
  exclude:  a regular expression; lines it matches (searched from the line's start) are skipped
  strings:  C/C++ only: true to match inside string literals too (file names, option strings);
            matches that start inside a comment, or inside a string without this, are skipped
"""

from __future__ import annotations

import re
from typing import Iterator

from rocmlint.matchers import Capture, Match, check_keys


class TextMatcher:
    def __init__(self, spec: dict, where: str, check_amd_side: bool = False):
        self.check_amd_side = check_amd_side
        from rocmlint.catalog.loader import CheckFileError

        check_keys(spec, {"regex": str, "comment": str, "exclude": str, "strings": bool}, where, required=("regex",))
        self.strings = spec.get("strings", False)
        try:
            self.regex = re.compile(spec["regex"])
            self.exclude = re.compile(spec["exclude"]) if "exclude" in spec else None
        except re.error as exc:
            raise CheckFileError(f"{where}: {exc}") from exc
        self.comment = spec.get("comment")

    def find(self, source) -> Iterator[Match]:
        gates = source.preprocessor_gates if source.language == "cpp" else None
        blanked = None
        if source.language == "cpp":
            blanked = source.blanked_lines(strings=not self.strings)
        for number, line in enumerate(source.lines, start=1):
            if self.exclude is not None and self.exclude.match(line):
                continue
            searchable = line
            if self.comment and self.comment in line:
                searchable = line[: line.index(self.comment)]
            base = source.line_starts[number - 1]
            if blanked is not None:
                searchable = blanked[number - 1][: len(searchable)]
            for hit in self.regex.finditer(searchable):
                captures = {
                    name: Capture(value, base + hit.start(name), base + hit.end(name))
                    for name, value in hit.groupdict().items()
                    if value is not None
                }
                gate = gates.reason(number, self.check_amd_side) if gates else None
                yield Match(base + hit.start(), base + hit.end(), gate=gate, captures=captures)
