"""--statistics: how many findings each check has, most first (text or json)."""

from __future__ import annotations

import json
from collections import Counter

from rocmlint.catalog.loader import check_by_id


def _rows(result) -> list[dict]:
    counts = Counter(f.check_id for f in result.findings)
    fixable = Counter(f.check_id for f in result.findings if f.fix is not None and f.fix.safety == "safe")
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        check = check_by_id(code)
        rows.append(
            {
                "code": code,
                "name": check.name if check else code,
                "title": check.title if check else "",
                "count": count,
                "fixable": fixable[code],
            }
        )
    return rows


def render_statistics_text(result) -> str:
    from rocmlint.report.text import summary

    rows = _rows(result)
    width = max((len(str(r["count"])) for r in rows), default=1)
    lines = [f"{r['count']:>{width}}  {r['code']}  {'[*]' if r['fixable'] else '   '}  {r['title']}" for r in rows]
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def render_statistics_json(result) -> str:
    return json.dumps(_rows(result), indent=2, ensure_ascii=False) + "\n"
