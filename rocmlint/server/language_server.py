"""The protocol side of `rocmlint server`: pygls speaks JSON-RPC over stdio; this module says
what each request and notification does with a DocumentChecker (rocmlint.server.checking).

Checks run one at a time on one worker thread, so the event loop keeps reading messages while
a file is checked. A document's pending check is cancelled by its next change (a check not yet
started never starts; one running finishes, and its result is not published when the document
has moved on). When a configuration or build file changes on disk, every open document is
checked again with what is read anew, and a further change of that kind cancels what is left
of that round.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from rocmlint import __version__
from rocmlint.server.checking import Checked, DocumentChecker, watched_file_kind
from rocmlint.server.protocol import (
    APPLY_FIXES_COMMAND,
    FIX_ALL_KIND,
    diagnostic,
    finding_range,
    hover_markdown,
    line_edit,
    problem_diagnostic,
    text_edits,
    touches,
)

log = logging.getLogger(__name__)
# What the server asks the client to watch (when the client can): the files whose change
# makes every result stale (rocmlint.server.checking.watched_file_kind).
WATCHED_GLOB = "**/{pyproject.toml,rocmlint.toml,CMakeLists.txt,*.cmake,setup.py,Makefile,makefile,GNUmakefile,.gitmodules,*.py}"


class RocmlintServer(LanguageServer):
    def __init__(self, use_cache: bool = True):
        super().__init__("rocmlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.checker = DocumentChecker(use_cache=use_cache)
        self.unsafe_fixes = False
        # One worker: the engine's caches are not shared between threads.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rocmlint-check")
        self.pending: dict[str, asyncio.Task] = {}

    # --- settings ---------------------------------------------------------------------------

    def read_settings(self, options) -> None:
        """`{"unsafeFixes": bool, "preview": bool}`, alone or under a "rocmlint" key, from
        initializationOptions or workspace/didChangeConfiguration."""
        if isinstance(options, dict) and isinstance(options.get("rocmlint"), dict):
            options = options["rocmlint"]
        if not isinstance(options, dict):
            return
        if "unsafeFixes" in options:
            self.unsafe_fixes = options.get("unsafeFixes") is True
        if "preview" in options:
            preview = options.get("preview")
            self.checker.set_preview(preview if isinstance(preview, bool) else None)

    @property
    def encoding(self) -> str:
        return self.server_capabilities.position_encoding or types.PositionEncodingKind.Utf16

    # --- checking ---------------------------------------------------------------------------

    def document(self, uri: str):
        """(the open document, its path), or (None, None) when it is not a local file."""
        if not uri.startswith("file:"):
            return None, None
        document = self.workspace.text_documents.get(uri)
        path = to_fs_path(uri)
        return document, path

    async def checked(self, uri: str) -> Checked | None:
        """The result for the document's text as it is now (kept when unchanged)."""
        document, path = self.document(uri)
        if document is None:
            return None
        return await asyncio.get_running_loop().run_in_executor(self.worker, self.checker.check, path, document.source)

    def schedule(self, uri: str) -> None:
        """Check the document and publish its diagnostics; a check still waiting for it is
        cancelled."""
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._check_and_publish(uri))

    async def _check_and_publish(self, uri: str) -> None:
        document, _ = self.document(uri)
        if document is None:
            return
        version = document.version
        try:
            checked = await self.checked(uri)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug must not stop the server; the editor's log says what
            log.exception("rocmlint: internal error while checking %s", uri)
            return
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]
        current, _ = self.document(uri)
        if checked is None or current is None or current.version != version:
            return  # the document changed or closed meanwhile: its next check publishes
        self.publish(uri, checked, version)

    def diagnostic_for(self, finding, checked: Checked) -> types.Diagnostic:
        from rocmlint.catalog.docs import docs_url
        from rocmlint.catalog.loader import check_by_id

        check = check_by_id(finding.check_id)
        return diagnostic(finding, checked.lines, self.encoding, docs_url(check) if check else None)

    def publish(self, uri: str, checked: Checked, version) -> None:
        diagnostics = [self.diagnostic_for(finding, checked) for finding in checked.result.findings]
        diagnostics.extend(problem_diagnostic(p, checked.lines, self.encoding) for p in checked.result.problems)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    async def files_changed(self, paths: list[str]) -> None:
        """A configuration or build file changed: cancel the checks not yet started (they
        would read what is now stale: what is left of the last such round, say), forget what
        was read from disk on the worker thread, between two checks (never during one), then
        check every open document again."""
        if not any(watched_file_kind(p) for p in paths):
            return
        for waiting in self.pending.values():
            waiting.cancel()
        self.pending.clear()
        await asyncio.get_running_loop().run_in_executor(self.worker, self.checker.files_changed, paths)
        for uri in list(self.workspace.text_documents):
            self.schedule(uri)

    # --- fixes ------------------------------------------------------------------------------

    def allowed(self, fix) -> bool:
        return fix is not None and (fix.safety == "safe" or self.unsafe_fixes)

    def fix_all_edit(self, uri: str, checked: Checked) -> tuple[types.WorkspaceEdit | None, int]:
        from rocmlint.fixes.edits import choose_edits

        edits, applied = choose_edits(checked.result.findings, self.unsafe_fixes)
        if not applied:
            return None, 0
        return types.WorkspaceEdit(changes={uri: text_edits(edits, checked.lines, self.encoding)}), applied

    def noqa_action(self, uri: str, checked: Checked, finding, language) -> types.CodeAction | None:
        from rocmlint.noqa.add import line_with_noqa, same_meaning

        new_line, _why = line_with_noqa(language, checked.lines, finding.line, [finding.check_id])
        if new_line is None or new_line == checked.lines[finding.line - 1]:
            return None
        after = checked.lines.copy()
        after[finding.line - 1] = new_line
        if not same_meaning(language, "\n".join(checked.lines), "\n".join(after)):
            return None  # the comment would land inside a string or change the data
        return types.CodeAction(
            title=f"Add noqa: {finding.check_id} on this line",
            kind=types.CodeActionKind.QuickFix,
            edit=types.WorkspaceEdit(changes={uri: [line_edit(checked.lines, finding.line, new_line, self.encoding)]}),
        )


def build_server(use_cache: bool = True) -> RocmlintServer:
    server = RocmlintServer(use_cache)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RocmlintServer, params: types.InitializeParams) -> None:
        ls.read_settings(params.initialization_options)
        folders = [f.uri for f in params.workspace_folders or ()] or ([params.root_uri] if params.root_uri else [])
        ls.checker.workspace_folders = [to_fs_path(uri) for uri in folders if uri.startswith("file:")]

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RocmlintServer, params: types.InitializedParams) -> None:
        watching = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        if watching and watching.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[types.FileSystemWatcher(glob_pattern=WATCHED_GLOB)])
            registration = types.Registration(id="rocmlint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            except Exception:  # a client that refuses: saves in the editor still refresh
                log.warning("rocmlint: the client did not watch the configuration and build files")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RocmlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RocmlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: RocmlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.startswith("file:") and watched_file_kind(to_fs_path(uri)):
            # A configuration, build or Python file: every open document is checked again, this one too.
            await ls.files_changed([to_fs_path(uri)])
        else:
            ls.schedule(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RocmlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        waiting = ls.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        if uri.startswith("file:"):
            ls.checker.forget(to_fs_path(uri))
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: RocmlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        await ls.files_changed([to_fs_path(change.uri) for change in params.changes if change.uri.startswith("file:")])

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: RocmlintServer, params: types.DidChangeConfigurationParams) -> None:
        ls.read_settings(params.settings)
        for uri in list(ls.workspace.text_documents):
            ls.schedule(uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
    )
    async def code_action(ls: RocmlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        from rocmlint.files.languages import language_of

        uri = params.text_document.uri
        checked = await ls.checked(uri)
        if checked is None:
            return []
        only = params.context.only
        actions: list[types.CodeAction] = []
        if not only or any(k in (types.CodeActionKind.QuickFix, types.CodeActionKind.QuickFix.value) for k in only):
            language = language_of(checked.path)
            for finding in checked.result.findings:
                if not touches(finding_range(finding, checked.lines, ls.encoding), params.range):
                    continue
                shown = ls.diagnostic_for(finding, checked)
                if ls.allowed(finding.fix):
                    actions.append(
                        types.CodeAction(
                            title=f"{finding.fix.title} ({finding.check_id}{', unsafe' if finding.fix.safety == 'unsafe' else ''})",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[shown],
                            is_preferred=finding.fix.safety == "safe",
                            edit=types.WorkspaceEdit(changes={uri: text_edits(finding.fix.edits, checked.lines, ls.encoding)}),
                        )
                    )
                noqa = ls.noqa_action(uri, checked, finding, language)
                if noqa is not None:
                    noqa.diagnostics = [shown]
                    actions.append(noqa)
        wants_fix_all = not only or any(
            FIX_ALL_KIND.startswith(str(getattr(k, "value", k))) for k in only
        )
        if wants_fix_all:
            edit, count = ls.fix_all_edit(uri, checked)
            if edit is not None:
                actions.append(types.CodeAction(title=f"rocmlint: apply {count} automatic fix{'es' if count != 1 else ''}",
                                                kind=FIX_ALL_KIND, edit=edit))
        return actions

    @server.command(APPLY_FIXES_COMMAND)
    async def apply_fixes(ls: RocmlintServer, *arguments) -> dict:
        """Arguments: the document's URI (or `{"uri": ...}`). Sends the fixes as a
        workspace/applyEdit request; returns how many fixes and whether the client applied them."""
        uri = arguments[0] if arguments else None
        if isinstance(uri, dict):
            uri = uri.get("uri")
        if not isinstance(uri, str):
            raise ValueError(f"{APPLY_FIXES_COMMAND} takes the document's URI")
        checked = await ls.checked(uri)
        if checked is None:
            raise ValueError(f"{uri} is not an open local document")
        edit, count = ls.fix_all_edit(uri, checked)
        if edit is None:
            return {"fixes": 0, "applied": False}
        answer = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="rocmlint: apply fixes"))
        return {"fixes": count, "applied": bool(answer and answer.applied)}

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RocmlintServer, params: types.HoverParams) -> types.Hover | None:
        from rocmlint.catalog.docs import docs_url
        from rocmlint.catalog.loader import check_by_id
        from rocmlint.config import ConfigError

        checked = await ls.checked(params.text_document.uri)
        if checked is None:
            return None
        here = types.Range(start=params.position, end=params.position)
        shown = []
        for finding in checked.result.findings:
            span = finding_range(finding, checked.lines, ls.encoding)
            if touches(span, here):
                check = check_by_id(finding.check_id)
                try:
                    rocm_version = ls.checker.settings.config_for(checked.path).target.rocm_version
                except ConfigError:
                    rocm_version = None
                shown.append((span, hover_markdown(finding, check, rocm_version, docs_url(check) if check else None)))
        if not shown:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(text for _, text in shown)),
            range=shown[0][0],
        )

    return server


def serve(use_cache: bool = True) -> int:
    """Speak the protocol on standard input and output until the client says exit."""
    logging.basicConfig(level=logging.WARNING, format="rocmlint server: %(levelname)s %(message)s")
    build_server(use_cache).start_io()
    return 0
