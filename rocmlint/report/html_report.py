"""The porting report as one self-contained HTML page: inline CSS and SVG charts drawn here, no
request at view time, readable without JavaScript (a few lines of it only sort and filter).

Every string that comes from the scanned tree (file names, messages, gate reasons, owners) goes
through `_e`, so that a file named `<script>...</script>.py` is text on the page.
"""

from __future__ import annotations

import datetime
import html

from rocmlint import __version__
from rocmlint.catalog.docs import docs_url, fix_safety, prose
from rocmlint.report.porting import EFFORTS, FAMILIES, PortingFigures

SEVERITY_COLOURS = {"error": "#c0392b", "warning": "#d68910", "note": "#2e86c1"}
EFFORT_COLOURS = {"fix": "#1e8449", "unsafe-fix": "#7dcea0", "rewrite": "#d68910", "kernel": "#884ea0"}
# Findings listed one by one at most; the json report has every one.
FINDINGS_LISTED = 5000
DIRECTORIES_CHARTED = 25


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _anchor(check_id: str) -> str:
    return "check-" + "".join(ch for ch in check_id if ch.isalnum())


def _bars(rows: list[tuple[str, dict]], colours: dict, *, label_width: int = 300, width: int = 800) -> str:
    """A horizontal stacked bar chart as inline SVG: one row per (label, {part: count})."""
    if not rows:
        return '<p class="none">Nothing to chart.</p>'
    row_height, bar_room = 22, width - label_width - 60
    biggest = max(sum(parts.values()) for _, parts in rows) or 1
    out = [f'<svg class="chart" role="img" width="{width}" height="{row_height * len(rows) + 6}" '
           f'viewBox="0 0 {width} {row_height * len(rows) + 6}" xmlns="http://www.w3.org/2000/svg">']
    for index, (label, parts) in enumerate(rows):
        y = index * row_height + 3
        total = sum(parts.values())
        room = (label_width - 12) // 8  # characters of 12px text (wide ones, such as @, included) left of the bars
        shown = label if len(label) <= room else "…" + label[-(room - 1):]
        out.append(f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end"><title>{_e(label)}</title>{_e(shown)}</text>')
        x = float(label_width)
        for part, colour in colours.items():
            count = parts.get(part, 0)
            if not count:
                continue
            w = max(bar_room * count / biggest, 1.5)
            out.append(f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{row_height - 6}" fill="{colour}">'
                       f'<title>{_e(label)}: {count} {_e(part)}</title></rect>')
            x += w
        out.append(f'<text x="{x + 6:.1f}" y="{y + 15}" class="n">{total}</text>')
    out.append("</svg>")
    return "".join(out)


def _legend(colours: dict, labels: dict | None = None) -> str:
    items = "".join(f'<span><i style="background:{c}"></i>{_e((labels or {}).get(k, k))}</span>' for k, c in colours.items())
    return f'<p class="legend">{items}</p>'


def _table(head: list[str], rows: list[list[str]], *, sortable: bool = True, cls: str = "") -> str:
    """Cells are HTML already (escaped by the caller)."""
    header = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="{"sortable " if sortable else ""}{cls}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _cards(figures: PortingFigures) -> str:
    total = len(figures.findings)
    cards = [("findings", total, ""), ("files checked", figures.files_checked, "")]
    cards += [(severity, figures.by_severity.get(severity, 0), SEVERITY_COLOURS[severity]) for severity in SEVERITY_COLOURS]
    cards += [("gated, not reported", figures.gated_total, ""), ("files not analysed", figures.skipped, "")]
    return '<div class="cards">' + "".join(
        f'<div class="card"{f" style=border-top-color:{c}" if c else ""}><b>{n}</b><span>{_e(label)}</span></div>' for label, n, c in cards
    ) + "</div>"


def _problems(figures: PortingFigures) -> str:
    if not figures.problems:
        return ""
    rows = [[f"<code>{_e(name)}{f':{line}' if line else ''}</code>", _e(reason)] for name, line, reason in figures.problems]
    return (f"<details><summary>{len(rows)} file{'s' if len(rows) != 1 else ''} not analysed</summary>"
            + _table(["file", "why"], rows) + "</details>")


def _effort_section(figures: PortingFigures) -> str:
    if not figures.findings:
        return "<p>No findings: nothing to do.</p>"
    labels = {e.key: e.label for e in EFFORTS}
    total = len(figures.findings) or 1
    stacked = ['<svg class="chart" role="img" width="800" height="34" viewBox="0 0 800 34" xmlns="http://www.w3.org/2000/svg">']
    x = 0.0
    for effort in EFFORTS:
        count = figures.by_effort.get(effort.key, 0)
        if count:
            w = 800 * count / total
            stacked.append(f'<rect x="{x:.1f}" y="2" width="{w:.1f}" height="30" fill="{EFFORT_COLOURS[effort.key]}">'
                           f'<title>{_e(effort.label)}: {count}</title></rect>')
            if w > 28:
                stacked.append(f'<text x="{x + w / 2:.1f}" y="22" text-anchor="middle" class="on">{count}</text>')
            x += w
    stacked.append("</svg>")
    rows = [[f'<i class="sw" style="background:{EFFORT_COLOURS[e.key]}"></i>{_e(e.label)}', _e(e.meaning),
             str(figures.by_effort.get(e.key, 0))] for e in EFFORTS]
    return "".join(stacked) + _legend(EFFORT_COLOURS, labels) + _table(["effort", "what it takes", "findings"], rows, sortable=False)


def _checks_section(figures: PortingFigures, rocm_version) -> str:
    labels = {e.key: e.label for e in EFFORTS}
    rows = []
    for row in figures.checks:
        efforts = ", ".join(f"{labels[k]} {n}" for k, n in sorted(row.effort.items(), key=lambda kv: [e.key for e in EFFORTS].index(kv[0])))
        rows.append([f'<a href="#{_anchor(row.id)}">{_e(row.id)}</a>', _e(row.title), _e(row.family), _sev(row.severity), _e(efforts),
                     str(row.count)])
    table = _table(["check", "title", "family", "severity", "effort", "findings"], rows)
    docs = "".join(_fix_it(row, rocm_version) for row in figures.checks)
    return table + '<h3>Fix-its</h3><div class="fixits">' + docs + "</div>"


def _fix_it(row, rocm_version) -> str:
    check = row.check
    if check is None:
        return f'<section class="fixit" id="{_anchor(row.id)}"><h4>{_e(row.id)}</h4><p>Not in this rocmlint\'s catalog.</p></section>'
    title, snippet = check.fix.for_rocm(rocm_version) if check.fix else ("", "")
    url = docs_url(check)
    return (
        f'<section class="fixit" id="{_anchor(check.id)}"><h4>{_e(check.id)}: {_e(check.title)}</h4>'
        f'<p>{_e(prose(check.rationale))}</p>'
        f'<p><b>{_e(title)}</b>:</p><pre>{_e(snippet.rstrip())}</pre>'
        f'<p class="safety">{_e(fix_safety(check).replace("**", ""))}</p>'
        f'<p><a href="{_e(url)}">{_e(check.id)} documentation</a> · <code>rocmlint explain {_e(check.id)}</code> · '
        f'<a href="#findings">back to the findings</a></p></section>'
    )


def _sev(severity: str) -> str:
    return f'<span class="sev {_e(severity)}">{_e(severity)}</span>'


def _findings_section(figures: PortingFigures) -> str:
    labels = {e.key: e.label for e in EFFORTS}
    listed = figures.findings[:FINDINGS_LISTED]
    rows = [
        [f"<code>{_e(figures.shown_paths[f.path])}:{f.line}:{f.col + 1}</code>", f'<a href="#{_anchor(f.check_id)}">{_e(f.check_id)}</a>',
         _sev(f.severity), _e(labels[figures.efforts[f]]), _e(f.message)]
        for f in listed
    ]
    more = len(figures.findings) - len(listed)
    note = f"<p>{more} more not listed here: <code>rocmlint scan --format json</code> lists every one.</p>" if more > 0 else ""
    search = '<p class="js-only"><label>Filter: <input id="filter" type="search" placeholder="path, check or words"></label></p>'
    return search + _table(["where", "check", "severity", "effort", "message"], rows, cls="findings") + note


def _trend_section(figures: PortingFigures) -> str:
    trend = figures.trend
    if trend is None:
        return "<p>No previous report given (<code>rocmlint report --previous old.json</code>, where old.json was written by <code>rocmlint scan --format json</code>).</p>"
    delta = trend.now - trend.before
    gated = f", gated {trend.gated_before} → {figures.gated_total}" if trend.gated_before is not None else ""
    said = (f'<p class="big">{trend.before} → {trend.now} findings (<b>{delta:+d}</b>): {trend.new} new, {trend.gone} gone{gated}.</p>')
    rows = [[f'<a href="#{_anchor(code)}">{_e(code)}</a>' if any(r.id == code for r in figures.checks) else _e(code), str(before), str(now),
             f"{now - before:+d}"] for code, before, now in trend.by_check]
    return said + (_table(["check", "before", "now", "change"], rows) if rows else "<p>No check's count changed.</p>")


def render_html(figures: PortingFigures, *, rocm_version=None, generated: datetime.datetime | None = None) -> str:
    generated = generated or datetime.datetime.now(datetime.timezone.utc)
    family_names = {name: f"{name} {meaning}" for _, name, meaning in FAMILIES}
    families = [(family_names.get(name, name), dict(counts)) for name, counts in figures.by_family.items()]
    directories = [(name, dict(counts)) for name, counts in figures.by_directory[:DIRECTORIES_CHARTED]]
    more_directories = len(figures.by_directory) - len(directories)
    directory_rows = [[f"<code>{_e(name)}</code>", str(sum(c.values()))] + [str(c.get(s, 0)) for s in SEVERITY_COLOURS]
                      for name, c in figures.by_directory]
    if figures.by_component is None:
        components = "<p>No CODEOWNERS file (.github/CODEOWNERS, CODEOWNERS or docs/CODEOWNERS) was found: findings are counted by folder above.</p>"
    else:
        chart = _bars([(owner, {"findings": n}) for owner, n, _ in figures.by_component[:DIRECTORIES_CHARTED]], {"findings": "#5d6d7e"})
        rows = [[_e(owner), str(n), str(files)] for owner, n, files in figures.by_component]
        components = (f"<p>Owners from <code>{_e(figures.codeowners)}</code> (the last matching line decides).</p>" + chart
                      + _table(["owners", "findings", "files"], rows))
    documented = {row.id for row in figures.checks}
    gated_rows = [[_e(reason or "(no reason recorded)"), str(n),
                   ", ".join(f'<a href="#{_anchor(code)}">{_e(code)}</a> {k}' if code in documented else f"{_e(code)} {k}"
                             for code, k in checks.most_common())]
                  for reason, n, checks in figures.gated[:200]]
    gated_more = len(figures.gated) - len(gated_rows)
    gated = (
        f"<p>{figures.gated_total} hits are not reported because the code is already gated for one GPU stack or the ROCm build "
        "never compiles it (<code>rocmlint explain gates</code>; <code>rocmlint scan --show-gated</code> lists each).</p>"
        + (_table(["reason", "hits", "checks"], gated_rows) if gated_rows else "")
        + (f"<p>{gated_more} more reasons not listed.</p>" if gated_more > 0 else "")
    )
    sections = [
        ("overview", "Overview", _cards(figures) + _problems(figures)),
        ("families", "By check family", _legend(SEVERITY_COLOURS) + _bars(families, SEVERITY_COLOURS)),
        ("directories", "By folder",
         _legend(SEVERITY_COLOURS) + _bars(directories, SEVERITY_COLOURS)
         + (f"<p>{more_directories} more folders in the table below.</p>" if more_directories > 0 else "")
         + "<details><summary>Every folder</summary>" + _table(["folder", "findings", *SEVERITY_COLOURS], directory_rows) + "</details>"),
        ("components", "By component (CODEOWNERS)", components),
        ("effort", "Effort", _effort_section(figures)),
        ("trend", "Trend", _trend_section(figures)),
        ("gated", "Gated, not reported", gated),
        ("checks", "By check", _checks_section(figures, rocm_version)),
        ("findings", "Findings", _findings_section(figures)),
    ]
    nav = " · ".join(f'<a href="#{key}">{_e(title)}</a>' for key, title, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{_e(title)}</h2>{content}</section>' for key, title, content in sections)
    scanned = ", ".join(f"<code>{_e(p)}</code>" for p in figures.scanned)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{_e(figures.title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(figures.title)}</h1><p>Scanned {scanned} with rocmlint {_e(__version__)} on "
        f"{generated.strftime('%Y-%m-%d %H:%M UTC')}.</p><nav>{nav}</nav></header><main>{body}</main>"
        f"<script>{_JS}</script></body></html>\n"
    )


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1c2833;background:#fbfcfc}
header{background:#1c2833;color:#fdfefe;padding:16px 32px}header h1{margin:0 0 4px;font-size:22px}
header code{color:#f9e79f}nav a{color:#aed6f1;margin-right:2px}main{padding:8px 32px 48px;max-width:1200px}
h2{border-bottom:2px solid #d5d8dc;padding-bottom:4px;margin-top:32px}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{background:#fff;border:1px solid #d5d8dc;border-top:4px solid #5d6d7e;
border-radius:6px;padding:10px 16px;min-width:120px}.card b{display:block;font-size:26px}.card span{color:#566573}
.chart text{font-size:12px;fill:#1c2833}.chart .n{fill:#566573}.chart .on{fill:#fff;font-weight:bold}
.legend span{margin-right:14px}.legend i,.sw{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}
table{border-collapse:collapse;margin:8px 0;background:#fff;max-width:100%}td code{word-break:break-all}
th,td{border:1px solid #d5d8dc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eaeded}table.sortable th{cursor:pointer}table.findings td:last-child{max-width:560px}
.sev{border-radius:3px;padding:0 5px;color:#fff;font-size:12px}.sev.error{background:#c0392b}.sev.warning{background:#d68910}.sev.note{background:#2e86c1}
pre{background:#f4f6f6;border:1px solid #d5d8dc;padding:8px;overflow:auto;white-space:pre-wrap}.chart{max-width:100%;height:auto}
.fixit{border-left:4px solid #aab7b8;padding-left:12px;margin:16px 0}
.fixit:target{border-left-color:#2e86c1;background:#ebf5fb}.big{font-size:18px}.js-only{display:none}.none{color:#566573}
"""

# Optional: sort a table by a column (click its header) and filter the findings; the page reads
# the same without it.
_JS = """
(function(){
  var filter=document.getElementById('filter');
  if(filter){filter.parentNode.parentNode.style.display='block';
    filter.addEventListener('input',function(){var q=filter.value.toLowerCase();
      document.querySelectorAll('table.findings tbody tr').forEach(function(r){
        r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';});});}
  document.querySelectorAll('table.sortable th').forEach(function(th,_){th.addEventListener('click',function(){
    var table=th.closest('table'),body=table.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
    var down=th.getAttribute('data-down')!=='1';th.setAttribute('data-down',down?'1':'0');
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=a.cells[i].textContent,y=b.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y);
      var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return down?-c:c;});
    rows.forEach(function(r){body.appendChild(r);});});});
})();
"""
