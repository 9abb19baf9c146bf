"""Azure Pipelines logging commands: each finding becomes an issue on the pipeline run
(`##vso[task.logissue ...]`), errors as errors and everything else as warnings."""

from __future__ import annotations

from rocmlint.report.text import shown


def _escape_data(text: str) -> str:
    # Azure Pipelines' escapes for a logging command's message.
    return shown(text.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape(text: str) -> str:
    # In a property, `;` ends the property and `]` the properties.
    return _escape_data(text).replace(";", "%3B").replace("]", "%5D")


def render_azure(result) -> str:
    out = []
    for f in result.findings:
        kind = "error" if f.severity == "error" else "warning"
        out.append(
            f"##vso[task.logissue type={kind};sourcepath={_escape(f.path)};linenumber={f.line};columnnumber={f.col + 1};"
            f"code={_escape(f.check_id)};]{_escape_data(f.check_id + ' ' + f.message)}"
        )
    return "".join(line + "\n" for line in out)
