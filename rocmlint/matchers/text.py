"""The `text` matcher: a regular expression over the file's text, for build, packaging and
container files where no parser is worth its cost.

Spec keys:
  regex:    a Python regular expression, applied per line; named groups become captures
  comment:  the line-comment prefix of the language ("#", "//"); text after it never matches
"""

from __future__ import annotations

import re
from typing import Iterator

from rocmlint.matchers import Capture, Match, check_keys


class TextMatcher:
    def __init__(self, spec: dict, where: str):
        from rocmlint.checks_loader import CheckFileError

        check_keys(spec, {"regex": str, "comment": str}, where, required=("regex",))
        try:
            self.regex = re.compile(spec["regex"])
        except re.error as exc:
            raise CheckFileError(f"{where}.regex: {exc}") from exc
        self.comment = spec.get("comment")

    def find(self, source) -> Iterator[Match]:
        gates = source.preprocessor_gates if source.language == "cpp" else None
        for number, line in enumerate(source.lines, start=1):
            searchable = line
            if self.comment and self.comment in line:
                searchable = line[: line.index(self.comment)]
            base = source.line_starts[number - 1]
            for hit in self.regex.finditer(searchable):
                captures = {
                    name: Capture(value, base + hit.start(name), base + hit.end(name))
                    for name, value in hit.groupdict().items()
                    if value is not None
                }
                gate = gates.reason(number) if gates else None
                yield Match(base + hit.start(), base + hit.end(), gate=gate, captures=captures)
