"""Results kept between scans, so that a re-scan reads only what changed.

Two kinds of result are kept, in one pack file per scan root (see "where" below):

- the per-file pass of one file: its hits, gated ones included, and its problems (a syntax
  error, a file too deeply nested to parse);
- the project pass of one scan (rocmlint.project.kept): the gate it gave each hit and the
  problems it found, with what it read to decide them.

A per-file result is found by a key made of everything the per-file pass reads:
- the file's bytes (a hash of them), its path as shown and its absolute path, its language;
- the checks that run (each check's whole definition, in order) and the GPU target
  (`rocm-version`, `arch`), from the configuration and the command line;
- whether its C/C++ directives are collected for a project pass (they are not kept: the
  project pass reads them itself for a file whose result was kept);
- rocmlint itself: its version, the size and modification time of each of its modules
  (a changed rocmlint never reads old results), the Python version (`ast` differs between
  versions) and the ast-grep version (the C/C++ parser).
A file whose result is kept is also found without being read: the pack maps its signature
(size, modification and change times, inode: rocmlint.files.tree.file_signature), with its
paths, language and the scan's salt, to its key, so that a warm re-scan looks at each file
with one `stat` and reads only those whose signature changed (signature_key, by_signature).
A signature is kept only when the file had not changed for two seconds before it was read
(tree.RACY_NANOSECONDS): a file changed again within the same tick of its file system's clock
could keep its signature with other bytes, and those files are read and hashed until they
settle, as git does. Any write changes the change time, which no program can set back.
The per-file pass of a Python file also asks questions about other files: whether a module
sits in a package named for one GPU stack, whether an import names a module of the same
source tree, which file a module it imports platform tests from is and what its bytes are
(a hash: cheaper to ask again than whether the name is a platform test, which parses it).
Those answers are kept with the entry (the functions marked `external_input`), and the entry
is used only when every question, asked again, gets the same answer. So an edit to an
imported module, a new `__init__.py` or a moved file makes the entry stale, without any list
of dependencies kept by hand. A function that keeps answers in memory keeps with each the
questions computing it asked, and asks them again when it answers from memory
(questions_so_far, asked_since, ask_again).

The pack. Kept results are read in one go, one file a scan, rather than one file per source
file: `results.pack`, a header line and then one line per entry, `KIND TAB KEY TAB USED TAB
SALT TAB PATH TAB VALUE` (kinds: F a file's result, S a file's signature, whose value is the
key of the file's result, P a project pass), the value JSON (never pickle: a cache someone
else can write to must not be able to run code). Lines are split when the pack is read and a
value is decoded only when its entry is asked for. Files whose per-file pass had nothing to do
(no check's marker in them) have an entry with no value (`-`), so that a re-scan neither
decodes nor searches them again. A scan writes the pack once, at its end, and only when it
made an entry: into a temporary file renamed over the pack, so a reader sees a whole pack or
the one before. What is written is pruned: an entry of a file that is gone, an older entry
of a file this scan checked with the same checks (its bytes changed), an entry another
rocmlint made (never read again: the key covers rocmlint) and a signature whose result is not
kept are left out; past _PACK_TARGET bytes the entries used longest ago go first; of the
project passes, the last _PROJECT_RECORDS are kept.
`rocmlint clean` removes the folder's files.

Why a pack and not SQLite (the standard library has both): the user's cache folder is often on
a network file system (home folders of GPU clusters: NFS, Lustre, GPFS), where SQLite's locks
are unreliable and its write-ahead log does not work at all, and a database a crash or two
writers damaged stays damaged. A pack is replaced whole by a rename, which those file systems
do atomically: two scans that write at once never mix, the last one's pack is kept, and what
the other made is only made again when next needed (before replacing, a scan takes in the
entries another scan has written since it read the pack, so little is lost). No lock is ever
held, so a killed scan leaves nothing to wait on; nothing but JSON is parsed from the folder;
and there is one file to guard against links rather than a database and its journals. A scan
rewrites the whole pack when it changes it (2.5 MB for the installed `torch` package), which
costs less than what a changed file costs to check.

An entry that cannot be read or does not have the expected shape is a miss, never an error,
and so is a pack that cannot be read; a cache directory that cannot be written is a cache that
keeps nothing.

A kept result decides what a scan reports, so it must never come from the tree being scanned:
anyone with the same rocmlint can compute the keys, and a checkout could carry entries with no
findings in them. Results are kept in the user's cache folder by default, one folder per scan
root (default_directory), and a folder that git tracks files in, or that belongs to another
user, is never used, whoever named it (refusal). Inside the folder only regular files of the
user's are read, never through a symbolic link and never more than _MAX_PACK_BYTES of one; a
named pipe or a device put there is not waited on, and nothing is written through a link. The
folder holds a `CACHEDIR.TAG` (https://bford.info/cachedir/), so that backup tools pass it
over, and a `.gitignore` that ignores it whole.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
from pathlib import Path
from typing import Callable, Sequence

from rocmlint import __version__
from rocmlint.findings import CHECK_ID, SEVERITIES, Edit, Finding, Fix, Problem

ENVIRONMENT_VARIABLE = "ROCMLINT_CACHE_DIR"
_FORMAT = 1  # of one entry's value
PACK = "results.pack"
_PACK_HEADER = b"rocmlint-results\t2\t"  # then the pack's generation: how many times it was written
# A pack longer than this is not read (nothing is kept): twice what pruning leaves.
_MAX_PACK_BYTES = 96 << 20
# What a written pack is pruned to: the entries used longest ago go first. The installed
# `torch` package (12,000 files) needs a twentieth of it.
_PACK_TARGET = 48 << 20
# Project passes kept (one per set of scan options and folders), the last used first.
_PROJECT_RECORDS = 8
# One file's entry longer than this is neither written nor read: a result that large (tens of
# thousands of findings in one file) costs little to compute again.
_MAX_ENTRY_BYTES = 16 << 20
# The cache directory tag (https://bford.info/cachedir/): backup tools pass the folder over.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file marks a cache folder of rocmlint (results kept between scans).\n"
    "# It can be deleted at any time (`rocmlint clean`). See https://bford.info/cachedir/ for what this file is.\n"
)
_GITIGNORE = "# Created by rocmlint: results kept between scans (safe to delete).\n*\n"
# A temporary file older than this was left by a scan that was stopped mid-write.
_STALE_TEMPORARY_SECONDS = 3600

# --- questions about other files --------------------------------------------------------------

_EXTERNAL: dict[str, Callable] = {}
_recording: list | None = None
_nesting = 0


def external_input(function: Callable) -> Callable:
    """Mark a function whose answer depends on files other than the one being checked. While
    a file's per-file pass is recorded, each outermost call and its answer are kept, so that a
    kept result can be checked against the files as they are now. Positional arguments of
    JSON types only; the answer must be JSON too (str, bool, None)."""
    name = f"{function.__module__}:{function.__qualname__}"
    _EXTERNAL[name] = function

    @functools.wraps(function)
    def recorded(*args):
        global _nesting
        if _recording is None:
            return function(*args)
        _nesting += 1
        try:
            answer = function(*args)
        finally:
            _nesting -= 1
        if _nesting == 0:
            _recording.append([name, list(args), answer])
        return answer

    return recorded


def record_questions() -> list:
    """Start keeping the questions of one file's per-file pass; returns the list they go to."""
    global _recording, _nesting
    _recording, _nesting = [], 0
    return _recording


def stop_recording() -> None:
    global _recording
    _recording = None


def questions_so_far() -> int | None:
    """How many questions the file being recorded has asked, where a question asked now is kept
    (None: no file is recorded, or this is inside a question, whose own answer is kept). For a
    function that keeps its answer in memory (asked_since, ask_again)."""
    return len(_recording) if _recording is not None and _nesting == 0 else None


def asked_since(start: int) -> list:
    """The questions asked since questions_so_far() said `start`."""
    return [list(question) for question in _recording[start:]] if _recording is not None else []


def ask_again(questions: list) -> None:
    """Keep `questions` (from asked_since) for the file being recorded, as if asked again: an
    answer taken from memory depends on what computing it asked."""
    if _recording is not None and _nesting == 0:
        _recording.extend([list(question) for question in questions])


def _external(name: str) -> Callable | None:
    """The function a kept question names. Its module registers it when imported, and a warm
    scan may read kept results before anything has imported it: then it is imported here (one
    of rocmlint's own modules only), or every first kept result with a question in a process
    was taken for stale."""
    function = _EXTERNAL.get(name)
    module = name.partition(":")[0]
    if function is None and module.startswith("rocmlint.") and module not in sys.modules:
        import importlib

        try:
            importlib.import_module(module)
        except ImportError:
            return None
        function = _EXTERNAL.get(name)
    return function


def _answers_hold(questions: list) -> bool:
    for name, args, answer in questions:
        function = _external(name)
        if function is None or function(*args) != answer:
            return False
    return True


# --- the key ----------------------------------------------------------------------------------


def _stat_lines(folder: str, suffix: str = "") -> list[str]:
    """Name, size and modification time of every file under `folder` whose name ends with
    `suffix`, sorted (compiled-code folders left out)."""
    lines = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            if not name.endswith(suffix):
                continue
            stat = os.stat(os.path.join(root, name))
            lines.append(f"{os.path.relpath(os.path.join(root, name), folder)}|{stat.st_size}|{stat.st_mtime_ns}\n")
    return lines


@functools.lru_cache(maxsize=1)
def _rocmlint_stamp() -> str:
    """rocmlint's own code as it is on disk (size and modification time of each module), the
    Python version and ast-grep's package as it is on disk (a new build or version of it is a
    new stamp). The checks are in every key whole (scan_salt)."""
    import hashlib
    import importlib.util

    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{__version__}|{sys.version_info[:3]}".encode())
    package = Path(__file__).resolve().parent
    for line in _stat_lines(str(package), ".py"):
        digest.update(line.encode())
    # Its files rather than its version from the package metadata: importlib.metadata costs
    # more to import than the rest of a one-file scan's key.
    try:
        spec = importlib.util.find_spec("ast_grep_py")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
    except (ImportError, ValueError):
        locations = []
    for folder in locations:
        digest.update(f"ast-grep-py {folder}\n".encode())
        for line in _stat_lines(folder):
            digest.update(line.encode())
    if not locations:  # an unknown ast-grep only makes the key stricter
        digest.update(b"ast-grep-py ?")
    return digest.hexdigest()


def scan_salt(checks: Sequence, gpu_target) -> str:
    """The part of every key that one scan shares: rocmlint, the checks and the target."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    digest.update(_rocmlint_stamp().encode())
    for check in checks:
        digest.update(repr(check).encode())
    digest.update(repr(gpu_target).encode())
    return digest.hexdigest()


def write_by_rename(target: str, text: str | bytes, prefix: str, suffix: str = ".json") -> None:
    """Write a kept file whole or not at all: into a temporary file beside it, renamed over it,
    so that a reader never sees half a file (a scan stopped mid-write, two scans at once). No
    fsync: a kept file lost in a crash only costs the time to make it again. Nothing is written
    through a symbolic link: the temporary file is created new, and a rename replaces a link
    at `target` rather than following it."""
    import tempfile

    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def _read_kept(path: str, limit: int = _MAX_PACK_BYTES, prefix: bool = False) -> bytes | None:
    """The bytes of a file in the cache folder, or None: only a regular file that belongs to
    the user, never one reached through a symbolic link, at most `limit` bytes (with
    `prefix`, the first `limit` bytes of a longer one). Opened without blocking and checked on
    the open descriptor, so a named pipe or a device in its place is never waited on nor read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None  # missing, a link (O_NOFOLLOW), unreadable
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or (info.st_size > limit and not prefix) or not _own(info):
            return None
        chunks, total = [], 0
        while True:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return b"".join(chunks)[:limit] if prefix else None
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _own(info: os.stat_result) -> bool:
    """Whether a file or folder belongs to the user rocmlint runs as (always, where the system
    has no owners)."""
    return not hasattr(os, "geteuid") or info.st_uid == os.geteuid()


def _is_folder(path: str) -> bool:
    """A real folder, not a symbolic link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


class _Pack:
    """A pack as read: each line kept as its bytes, entries by key and project passes by slot,
    until one is asked for (_line_fields)."""

    def __init__(self, generation: int = 0, signature: tuple | None = None):
        self.generation = generation
        self.signature = signature  # of the file it was read from (_signature); None: no file
        self.entries: dict[str, bytes] = {}
        self.signatures: dict[str, bytes] = {}
        self.projects: dict[str, bytes] = {}


def _signature(path: str) -> tuple | None:
    """What tells one version of a pack file from another, without following a link."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _parse_pack(data: bytes | None, signature: tuple | None) -> _Pack:
    """The lines of a pack file, by key. A header of another format is an empty pack; a line
    that is not one of ours is left out (its fields are checked when it is used)."""
    if not data or not data.startswith(_PACK_HEADER):
        return _Pack(0, signature)
    header, _, body = data.partition(b"\n")
    count = header[len(_PACK_HEADER):]
    pack = _Pack(int(count) if count.isdigit() and len(count) < 16 else 0, signature)
    for line in body.split(b"\n"):
        kind, _, rest = line.partition(b"\t")
        key = rest.partition(b"\t")[0]
        if kind == b"F" and len(key) == 40:
            pack.entries[key.decode("latin-1")] = line
        elif kind == b"S" and len(key) == 40:
            pack.signatures[key.decode("latin-1")] = line
        elif kind == b"P" and len(key) == 32:
            pack.projects[key.decode("latin-1")] = line
    return pack


_HEX = frozenset(b"0123456789abcdef")


def _line_fields(line: bytes) -> tuple[str, int, bytes, bytes, bytes] | None:
    """(key, the generation it was last used in, salt, path as JSON, value) of a pack line, or
    None for a line of another shape."""
    fields = line.split(b"\t", 5)
    if len(fields) != 6:
        return None
    _, key, used, salt, path, value = fields
    if not (key and set(key) <= _HEX and used.isdigit() and len(used) < 16 and len(salt) == 16 and set(salt) <= _HEX):
        return None
    if fields[0] != b"P" and not (path[:1] == b'"' and path[-1:] == b'"' and len(path) > 2):
        return None
    return key.decode("ascii"), int(used), salt, path, value


# Kept packs of this process, by folder, while the file is the one read (the language server
# checks one document at a time and must not read the pack again each time).
_LOADED: dict[str, _Pack] = {}


class ResultCache:
    """Kept results under `directory` (the folder is created on first write): the pack read at
    once, what this process makes kept in memory until `save`. A directory that must not be
    trusted (refusal) is a cache that keeps nothing.

    A scan's workers each hold a copy; what one makes and uses goes back to the scanning
    process (take_made, add_made), which alone writes the pack (save)."""

    def __init__(self, directory: str | os.PathLike, salt: str, check_ids: frozenset[str] | None = None):
        import hashlib

        self.directory = os.path.abspath(directory)
        self.salt = salt
        # The checks the scan runs: a kept finding of any other (an entry edited by hand) is a
        # miss, as the reports look every finding's check up among them. None: not asked.
        self.check_ids = check_ids
        # Which rocmlint made an entry, then which checks and target: entries of another
        # rocmlint are never read again (the salt covers rocmlint), and are dropped.
        self._rocmlint_field = hashlib.blake2b(_rocmlint_stamp().encode(), digest_size=4).hexdigest().encode("ascii")
        self._salt_field = self._rocmlint_field + hashlib.blake2b(salt.encode(), digest_size=4).hexdigest().encode("ascii")
        self.refused = refusal(self.directory)
        self._writable = self.refused is None
        # Read now, by the scanning process: the workers of a pool started after this find it
        # in memory, rather than each reading it again.
        self._pack = self._load()
        self._made: dict[str, tuple[bytes, bytes]] = {}  # key -> (path as JSON, value) made since save
        self._used: set[str] = set()  # keys of kept entries used since save
        self._signatures_made: dict[str, tuple[bytes, bytes]] = {}  # signature key -> (path as JSON, key)
        self._signatures_used: set[str] = set()
        self._projects_made: dict[str, bytes] = {}  # slot -> value
        self._projects_used: set[str] = set()

    @property
    def pack_path(self) -> str:
        return os.path.join(self.directory, PACK)

    def _load(self) -> _Pack:
        if self.refused is not None:
            return _Pack()
        path = self.pack_path
        signature = _signature(path)
        known = _LOADED.get(self.directory)
        if known is not None and signature is not None and known.signature == signature:
            return known
        pack = _parse_pack(_read_kept(path) if signature is not None else None, signature)
        if signature is not None:
            _LOADED[self.directory] = pack
        return pack

    # --- per-file results -----------------------------------------------------------------

    def key(self, path: str, language: str, data: bytes, collect_directives: bool, absolute: str | None = None) -> str:
        """`absolute`: os.path.abspath(path), where the caller has it already."""
        import hashlib  # here, as in scan_salt: a scan without a cache never needs it

        digest = hashlib.blake2b(data, digest_size=20)
        digest.update(self._named(path, language, collect_directives, absolute))
        return digest.hexdigest()

    def _named(self, path: str, language: str, collect_directives: bool, absolute: str | None) -> bytes:
        """What a key holds besides the file's bytes or signature. Paths as the file system's
        bytes: a name that is not UTF-8 is still a name."""
        absolute = os.path.abspath(path) if absolute is None else absolute
        return b"\0".join([b"", self.salt.encode(), os.fsencode(path), os.fsencode(absolute), language.encode(), b"%d" % collect_directives])

    def signature_key(
        self, path: str, language: str, collect_directives: bool, signature: Sequence[int], absolute: str | None = None,
    ) -> str:
        """The key under which a file of this signature (tree.file_signature) is found without
        reading it: everything of the key but the bytes, and the signature in their place."""
        import hashlib

        named = self._named(path, language, collect_directives, absolute)
        return hashlib.blake2b(b"\0".join([named, *(b"%d" % n for n in signature)]), digest_size=20).hexdigest()

    def by_signature(self, signature_key: str) -> str | None:
        """The key of the result kept for the file of this signature key, or None."""
        key = self._signed(signature_key)
        if key is not None:
            self._signatures_used.add(signature_key)
        return key

    def note_signature(self, signature_key: str | None, path: str, key: str) -> None:
        """That the file at `path`, of the result kept under `key` (used or made by this scan),
        has the signature of `signature_key` (None: a signature not to keep)."""
        if signature_key is None:
            return
        if self._signed(signature_key) == key:
            self._signatures_used.add(signature_key)
        else:
            self._signatures_made[signature_key] = (_path_json(path), key.encode("ascii"))

    def _signed(self, signature_key: str) -> str | None:
        line = self._pack.signatures.get(signature_key)
        fields = _line_fields(line) if line is not None else None
        if fields is None or len(fields[4]) != 40 or not set(fields[4]) <= _HEX:
            return None
        return fields[4].decode("ascii")

    def _value(self, key: str) -> bytes | None:
        line = self._pack.entries.get(key)
        fields = _line_fields(line) if line is not None else None
        return fields[4] if fields is not None else None

    def unmarked(self, key: str) -> bool:
        """Whether an earlier scan found that the file of this key holds no marker of any
        check that runs (the key covers the file's bytes, its path and the checks)."""
        if self._value(key) == b"-":
            self._used.add(key)
            return True
        return False

    def kept(self, key: str) -> tuple[list[Finding], list[Problem]] | None:
        """The result kept under `key`: no findings for a file found to hold no marker
        (unmarked), else the entry (get); None when neither is kept."""
        return ([], []) if self.unmarked(key) else self.get(key)

    def note_unmarked(self, key: str, path: str) -> None:
        self._made[key] = (_path_json(path), b"-")

    def get(self, key: str) -> tuple[list[Finding], list[Problem]] | None:
        """The kept result, or None: missing, unreadable, of another shape, or stale."""
        value = self._value(key)
        if value is None or value == b"-" or len(value) > _MAX_ENTRY_BYTES:
            return None
        try:
            entry = json.loads(value)
            if not _is_entry(entry) or not _answers_hold(entry["questions"]):
                return None
            if self.check_ids is not None and any(f[1] not in self.check_ids for f in entry["findings"]):
                return None
            kept = [_finding(f) for f in entry["findings"]], [Problem(*p) for p in entry["problems"]]
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, whatever is wrong with it
            return None
        self._used.add(key)
        return kept

    def put(self, key: str, path: str, questions: list, findings: list[Finding], problems: list[Problem]) -> bool:
        """Keep a file's result; whether it is kept."""
        if not self._writable:
            return False
        entry = {
            "format": _FORMAT,
            "questions": questions,
            "findings": [_finding_json(f) for f in findings],
            "problems": [[p.path, p.reason, p.line, p.internal] for p in problems],
        }
        try:
            encoded = json.dumps(entry, separators=(",", ":"))
        except (TypeError, ValueError):
            return False  # an answer JSON cannot hold: this file's result is not kept, the others are
        if len(encoded) > _MAX_ENTRY_BYTES:
            return False  # not read back either
        # ASCII JSON (json.dumps escapes the rest): no tab or line end inside a line of the pack.
        self._made[key] = (_path_json(path), encoded.encode("ascii"))
        return True

    def take_made(self) -> tuple:
        """What this process made and used since the last call, for the scanning process
        (add_made)."""
        taken = (
            [(key, path, value) for key, (path, value) in self._made.items()], sorted(self._used),
            [(key, path, value) for key, (path, value) in self._signatures_made.items()], sorted(self._signatures_used),
        )
        self._made, self._used, self._signatures_made, self._signatures_used = {}, set(), {}, set()
        return taken

    def add_made(
        self, made: Sequence[tuple[str, bytes, bytes]], used: Sequence[str],
        signatures_made: Sequence[tuple[str, bytes, bytes]] = (), signatures_used: Sequence[str] = (),
    ) -> None:
        for key, path, value in made:
            self._made[key] = (path, value)
        self._used.update(used)
        for key, path, value in signatures_made:
            self._signatures_made[key] = (path, value)
        self._signatures_used.update(signatures_used)

    # --- project passes -------------------------------------------------------------------

    def has_project_record(self, slot: str) -> bool:
        """Whether a project pass is kept for `slot`, without decoding it (project_record
        decodes it, and says whether it is whole)."""
        return slot in self._pack.projects

    def project_record(self, slot: str) -> dict | None:
        """The project pass kept for `slot` (rocmlint.project.kept), or None."""
        line = self._pack.projects.get(slot)
        fields = _line_fields(line) if line is not None else None
        if fields is None or len(fields[4]) > _MAX_ENTRY_BYTES:
            return None
        try:
            record = json.loads(fields[4])
        except ValueError:
            return None
        if type(record) is not dict:
            return None
        self._projects_used.add(slot)
        return record

    def keep_project_record(self, slot: str, record: dict) -> None:
        if not self._writable:
            return
        try:
            encoded = json.dumps(record, separators=(",", ":")).encode("ascii")
        except (TypeError, ValueError):
            return
        if len(encoded) <= _MAX_ENTRY_BYTES:
            self._projects_made[slot] = encoded

    # --- writing --------------------------------------------------------------------------

    def save(self) -> None:
        """Write the pack with what this scan made (nothing is written when it made nothing),
        pruned (see the module docstring). Called once, by the scanning process, at the end."""
        if not self._writable or not (self._made or self._signatures_made or self._projects_made):
            return
        try:
            self._prepare()
            # Another scan may have written the pack since this one read it: its entries count too.
            current = self._pack
            signature = _signature(self.pack_path)
            if signature != current.signature:
                current = _parse_pack(_read_kept(self.pack_path) if signature is not None else None, signature)
            pack, data = self._pruned(self._pack, current)
            write_by_rename(self.pack_path, data, prefix=".tmp-", suffix=".pack")
            pack.signature = _signature(self.pack_path)
            self._pack = _LOADED[self.directory] = pack
            self._made, self._used, self._projects_made, self._projects_used = {}, set(), {}, set()
            self._signatures_made, self._signatures_used = {}, set()
            _remove_leftovers(self.directory)
        except OSError:
            self._writable = False  # a read-only place or a full disk: keep nothing, say nothing

    def _pruned(self, read: _Pack, current: _Pack) -> tuple[_Pack, bytes]:
        generation = max(read.generation, current.generation) + 1
        used = str(generation).encode("ascii")
        pack = _Pack(generation)
        this_scan: dict[str, bytes] = {}
        seen: set[tuple[bytes, bytes]] = set()  # (salt, path) of the files this scan checked
        seen_paths: set[bytes] = set()
        for key, (path, value) in sorted(self._made.items()):
            this_scan[key] = b"\t".join((b"F", key.encode("ascii"), used, self._salt_field, path, value))
            seen.add((self._salt_field, path))
            seen_paths.add(path)
        for key in sorted(self._used):
            line = current.entries.get(key) or read.entries.get(key)
            fields = _line_fields(line) if line is not None and key not in this_scan else None
            if fields is not None:
                this_scan[key] = b"\t".join((b"F", key.encode("ascii"), used, fields[2], fields[3], fields[4]))
                seen.add((fields[2], fields[3]))
                seen_paths.add(fields[3])
        projects: dict[str, bytes] = {}
        for slot, value in sorted(self._projects_made.items()):
            projects[slot] = b"\t".join((b"P", slot.encode("ascii"), used, self._salt_field, b"", value))
        for slot in sorted(self._projects_used - set(projects)):
            line = current.projects.get(slot) or read.projects.get(slot)
            fields = _line_fields(line) if line is not None else None
            if fields is not None:
                projects[slot] = b"\t".join((b"P", slot.encode("ascii"), used, fields[2], b"", fields[4]))
        # The others, most recently used first: not those of a file this scan checked again
        # with the same checks (its bytes changed), nor of a file that is gone.
        others: list[tuple[int, str, bytes, bytes]] = []
        for entries in (current.entries, read.entries):
            for key, line in entries.items():
                if key in this_scan:
                    continue
                fields = _line_fields(line)
                if fields is None or (fields[2], fields[3]) in seen or not fields[2].startswith(self._rocmlint_field):
                    continue
                others.append((fields[1], key, fields[3], line))
        others.sort(key=lambda item: (-item[0], item[1]))
        gone: dict[bytes, bool] = {}
        budget = _PACK_TARGET - len(_PACK_HEADER) - 24
        for key, line in this_scan.items():
            if budget >= len(line) + 1:
                pack.entries[key] = line
                budget -= len(line) + 1
        for slot, line in projects.items():
            if budget >= len(line) + 1:
                pack.projects[slot] = line
                budget -= len(line) + 1
        kept_projects = len(pack.projects)
        for source in (current.projects, read.projects):
            for slot, line in sorted(source.items(), key=lambda item: -(_line_fields(item[1]) or ("", 0))[1]):
                fields = _line_fields(line)
                if kept_projects >= _PROJECT_RECORDS or slot in pack.projects or fields is None:
                    continue
                if not fields[2].startswith(self._rocmlint_field):
                    continue
                if budget >= len(line) + 1:
                    pack.projects[slot] = line
                    budget -= len(line) + 1
                    kept_projects += 1
        for _, key, path, line in others:
            if key in pack.entries or budget < len(line) + 1:
                continue
            if path not in seen_paths:
                if path not in gone:
                    gone[path] = not _exists(path)
                if gone[path]:
                    continue
            pack.entries[key] = line
            budget -= len(line) + 1
        # Signatures: this scan's, then the others not of a file this scan checked with the same
        # checks, most recently used first; only those whose file's result is kept.
        signatures: list[tuple[int, str, bytes]] = []
        for key, (path, value) in sorted(self._signatures_made.items()):
            signatures.append((generation, key, b"\t".join((b"S", key.encode("ascii"), used, self._salt_field, path, value))))
        for key in sorted(self._signatures_used - set(self._signatures_made)):
            line = current.signatures.get(key) or read.signatures.get(key)
            fields = _line_fields(line) if line is not None else None
            if fields is not None:
                signatures.append((generation, key, b"\t".join((b"S", key.encode("ascii"), used, fields[2], fields[3], fields[4]))))
        this_scan_signatures = {key for _, key, _ in signatures}
        for source in (current.signatures, read.signatures):
            for key, line in source.items():
                fields = _line_fields(line) if key not in this_scan_signatures else None
                if fields is not None and (fields[2], fields[3]) not in seen:
                    signatures.append((fields[1], key, line))
        signatures.sort(key=lambda item: (-item[0], item[1]))
        for _, key, line in signatures:
            if key in pack.signatures or budget < len(line) + 1 or line.rpartition(b"\t")[2].decode("latin-1") not in pack.entries:
                continue
            pack.signatures[key] = line
            budget -= len(line) + 1
        lines = [_PACK_HEADER + used, *pack.entries.values(), *pack.signatures.values(), *pack.projects.values()]
        return pack, b"\n".join(lines) + b"\n"

    def _prepare(self) -> None:
        """Create the directory with a .gitignore that ignores it whole (git, and so rocmlint's
        discovery, never list it) and a cache directory tag that says what it is. Each is written
        by rename where nothing of that name is there (a link there is left alone, never
        followed). The user cache folder's `rocmlint/` is tagged too: what else rocmlint keeps
        there (the parsed check catalog) is a cache as well."""
        os.makedirs(self.directory, exist_ok=True)
        folders = [self.directory]
        user = user_cache_folder()
        if user is not None and os.path.dirname(self.directory) == os.path.join(user, "rocmlint", "results"):
            folders.append(os.path.join(user, "rocmlint"))
        for folder in folders:
            marks = {"CACHEDIR.TAG": _CACHEDIR_TAG, ".gitignore": _GITIGNORE} if folder == self.directory else {"CACHEDIR.TAG": _CACHEDIR_TAG}
            for name, text in marks.items():
                path = os.path.join(folder, name)
                if not os.path.lexists(path):
                    write_by_rename(path, text, prefix=".tmp-", suffix="")


def _path_json(path: str) -> bytes:
    # ASCII JSON: a name with a tab, a line end or bytes that are not UTF-8 stays on its line.
    return json.dumps(os.path.abspath(path)).encode("ascii")


def _exists(path_json: bytes) -> bool:
    try:
        path = json.loads(path_json)
        return type(path) is str and os.path.lexists(path)
    except (ValueError, OSError):
        return False


# --- what else is in the folder ----------------------------------------------------------------

# Format 1 kept one JSON file per entry, in folders named by the key's first two characters,
# and the keys of files without markers in `unmarked.json`.
_LEGACY_ENTRY_NAME_LENGTH = 38 + len(".json")


def _is_legacy_folder(name: str) -> bool:
    return len(name) == 2 and set(name) <= set("0123456789abcdef")


def _is_legacy_entry(name: str) -> bool:
    return len(name) == _LEGACY_ENTRY_NAME_LENGTH and name.endswith(".json") and set(name[:38]) <= set("0123456789abcdef")


def _remove_leftovers(directory: str, every_temporary: bool = False) -> list[tuple[str, int]]:
    """Remove what older versions kept in the folder (format 1) and temporary files a scan
    stopped mid-write left (those older than an hour, or all of them): only files of those
    names, never through a link (a link itself is removed). Returns (path, size) of each file
    removed."""
    import time

    removed: list[tuple[str, int]] = []

    def remove(path: str, info: os.stat_result) -> None:
        try:
            os.unlink(path)
            removed.append((path, info.st_size if stat.S_ISREG(info.st_mode) else 0))
        except OSError:
            pass

    now = time.time()
    try:
        listed = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in listed:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.name == "unmarked.json" or (
            entry.name.startswith(".tmp-") and (every_temporary or now - info.st_mtime > _STALE_TEMPORARY_SECONDS)
        ):
            if not stat.S_ISDIR(info.st_mode):
                remove(entry.path, info)
        elif _is_legacy_folder(entry.name) and stat.S_ISDIR(info.st_mode):
            try:
                inside = list(os.scandir(entry.path))
            except OSError:
                continue
            for item in inside:
                try:
                    item_info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if (_is_legacy_entry(item.name) or item.name.startswith(".tmp-")) and not stat.S_ISDIR(item_info.st_mode):
                    remove(item.path, item_info)
            try:
                os.rmdir(entry.path)  # only once empty: anything else in it stays
            except OSError:
                pass
    return removed


def _is_our_pack(path: str) -> bool:
    return (_read_kept(path, len(_PACK_HEADER), prefix=True) or b"") == _PACK_HEADER


def _holds_our_tag(directory: str) -> bool:
    data = _read_kept(os.path.join(directory, "CACHEDIR.TAG"), 4096)
    return data is not None and data.startswith(b"Signature: 8a477f597d28d172789f06886806bc55") and b"rocmlint" in data


def clean(directory: str) -> list[tuple[str, int]]:
    """Remove what rocmlint keeps in `directory` (`rocmlint clean`): the pack, the entries of
    older versions, temporary files, the cache directory tag and the .gitignore rocmlint wrote,
    then the folder itself once empty. Only a folder rocmlint tagged is touched, and in it only
    files of those names (a file someone else put there stays). Returns (path, size) of each
    file removed. Raises ValueError for a folder that must not be touched (refusal) or that
    rocmlint did not make."""
    directory = os.path.abspath(directory)
    if not os.path.lexists(directory):
        return []
    if not _is_folder(directory):
        raise ValueError("not a folder")
    refusal.cache_clear()
    why = refusal(directory)
    if why is not None:
        raise ValueError(why)
    try:
        if not os.listdir(directory):
            os.rmdir(directory)
            return []
    except OSError:
        pass
    if not _holds_our_tag(directory) and not _is_our_pack(os.path.join(directory, PACK)):
        raise ValueError("it does not hold rocmlint's CACHEDIR.TAG: not a folder of rocmlint's results")
    removed = _remove_leftovers(directory, every_temporary=True)
    ours = {PACK: None, "CACHEDIR.TAG": None, ".gitignore": _GITIGNORE.encode()}
    for name, text in ours.items():
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if name == ".gitignore" and stat.S_ISREG(info.st_mode) and _read_kept(path, 4096) != text:
            continue  # not the one rocmlint wrote
        if name == PACK and stat.S_ISREG(info.st_mode) and not _is_our_pack(path):
            continue
        if stat.S_ISDIR(info.st_mode):
            continue
        try:
            os.unlink(path)
            removed.append((path, info.st_size if stat.S_ISREG(info.st_mode) else 0))
        except OSError:
            pass
    _LOADED.pop(directory, None)
    try:
        os.rmdir(directory)
    except OSError:
        pass  # something else is in it: it stays
    return removed


def clean_all() -> list[tuple[str, int]]:
    """`rocmlint clean --all`: the results of every project in the user's cache folder
    (`rocmlint/results/*`), the parsed check catalogs kept beside them and the tag of
    `rocmlint/`, then the folders once empty."""
    user = user_cache_folder()
    if user is None:
        return []
    top = os.path.join(user, "rocmlint")
    results = os.path.join(top, "results")
    removed: list[tuple[str, int]] = []
    if _is_folder(results):
        for entry in sorted(os.scandir(results), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                try:
                    removed.extend(clean(entry.path))
                except ValueError:
                    pass  # not rocmlint's: left alone
        try:
            os.rmdir(results)
        except OSError:
            pass
    if _is_folder(top):
        for entry in sorted(os.scandir(top), key=lambda e: e.name):
            name = entry.name
            ours = (name.startswith("catalog-") and name.endswith(".json")) or name.startswith(".tmp-catalog-")
            if name == "CACHEDIR.TAG":
                ours = _holds_our_tag(top)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if ours and not stat.S_ISDIR(info.st_mode):
                try:
                    os.unlink(entry.path)
                    removed.append((entry.path, info.st_size if stat.S_ISREG(info.st_mode) else 0))
                except OSError:
                    pass
        try:
            os.rmdir(top)
        except OSError:
            pass
    return removed


# --- the shape of an entry ------------------------------------------------------------------
# Read back exactly as written: every field of the type `put` writes, or the entry is a miss.
# A field of another type (a number for a path, a string for a line) would fail far from here,
# in a sort or a report, and a kept result must never be able to stop a scan.


def _is_int(value) -> bool:
    return type(value) is int  # bool is an int subclass, and never a line or a column


def _is_optional_str(value) -> bool:
    return value is None or type(value) is str


def _is_entry(entry) -> bool:
    return (
        type(entry) is dict
        and _is_int(entry.get("format")) and entry["format"] == _FORMAT
        and type(entry.get("questions")) is list and all(_is_question(q) for q in entry["questions"])
        and type(entry.get("findings")) is list and all(_is_finding(f) for f in entry["findings"])
        and type(entry.get("problems")) is list and all(_is_problem(p) for p in entry["problems"])
    )


def _is_plain(value, depth: int = 0) -> bool:
    """A JSON scalar, or a list of them (a few levels deep): what external_input functions
    take and answer."""
    if value is None or type(value) in (str, bool, int, float):
        return True
    return type(value) is list and depth < 4 and all(_is_plain(v, depth + 1) for v in value)


def _is_question(item) -> bool:
    """[function name, its arguments, its answer]."""
    return (
        type(item) is list and len(item) == 3 and type(item[0]) is str and type(item[1]) is list
        and all(_is_plain(a) for a in item[1]) and _is_plain(item[2])
    )


def _is_problem(item) -> bool:
    return (
        type(item) is list and len(item) == 4 and type(item[0]) is str and type(item[1]) is str
        and (item[2] is None or _is_int(item[2])) and type(item[3]) is bool
    )


def _is_finding(item) -> bool:
    if type(item) is not list or len(item) != 12:
        return False
    path, check_id, message, severity, line, col, end_line, end_col, fix_json, gate, gate_fixed, context = item
    return (
        # Only a check's id (the reports look the check up by it): an entry with another is not
        # one this scanner wrote.
        type(path) is str and type(check_id) is str and CHECK_ID.match(check_id) is not None
        and type(message) is str and severity in SEVERITIES
        and all(_is_int(n) for n in (line, col, end_line, end_col))
        and (fix_json is None or _is_fix(fix_json)) and _is_optional_str(gate) and type(gate_fixed) is bool
        and type(context) is list
        and all(type(c) is list and len(c) == 2 and _is_int(c[0]) and type(c[1]) is str for c in context)
    )


def _is_fix(item) -> bool:
    return (
        type(item) is list and len(item) == 3 and type(item[0]) is str and item[1] in ("safe", "unsafe")
        and type(item[2]) is list
        and all(
            type(e) is list and len(e) == 7 and type(e[2]) is str and all(_is_int(e[i]) for i in (0, 1, 3, 4, 5, 6))
            for e in item[2]
        )
    )


def _finding_json(finding: Finding) -> list:
    fix = finding.fix
    fix_json = None
    if fix is not None:
        fix_json = [fix.title, fix.safety, [[e.start, e.end, e.replacement, e.start_line, e.start_col, e.end_line, e.end_col] for e in fix.edits]]
    return [
        finding.path, finding.check_id, finding.message, finding.severity, finding.line, finding.col,
        finding.end_line, finding.end_col, fix_json, finding.gate, finding.gate_fixed,
        [[line, text] for line, text in finding.context.items()],
    ]


def _finding(item: list) -> Finding:
    path, check_id, message, severity, line, col, end_line, end_col, fix_json, gate, gate_fixed, context = item
    fix = None
    if fix_json is not None:
        title, safety, edits = fix_json
        fix = Fix(title, safety, tuple(Edit(*e) for e in edits))
    return Finding(
        path=path, check_id=check_id, message=message, severity=severity, line=line, col=col, end_line=end_line,
        end_col=end_col, fix=fix, gate=gate, gate_fixed=gate_fixed, context={int(n): text for n, text in context},
    )


# --- where results are kept -----------------------------------------------------------------


def user_cache_folder() -> str | None:
    """$XDG_CACHE_HOME, else ~/.cache (a relative $XDG_CACHE_HOME is not used, as the XDG base
    directory specification says); None without a home folder."""
    folder = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(folder):
        return folder
    home = os.path.expanduser("~")
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


def default_directory(root: Path) -> Path | None:
    """Where results are kept: $ROCMLINT_CACHE_DIR, else a folder of the user's cache folder
    (`rocmlint/results/`) named by a hash of the real path of `root`, the scan root, so that
    projects do not evict each other's results; None when there is no user cache folder."""
    configured = os.environ.get(ENVIRONMENT_VARIABLE)
    if configured:
        return Path(configured)
    folder = user_cache_folder()
    if folder is None:
        return None
    import hashlib

    name = hashlib.blake2b(os.fsencode(os.path.realpath(root)), digest_size=12).hexdigest()
    return Path(folder, "rocmlint", "results", name)


@functools.lru_cache(maxsize=16)
def refusal(directory: str) -> str | None:
    """Why results must not be kept in `directory`, or None. Results kept where the scanned
    tree can supply them would let it choose its own verdict: a folder that git tracks files
    in (a checkout holds those files) or that belongs to another user is never used."""
    real = os.path.realpath(directory)
    try:
        info = os.stat(real)
    except (OSError, ValueError):
        return None  # not there yet: it is created, the user's, on the first write
    if stat.S_ISDIR(info.st_mode) and not _own(info):
        return "it belongs to another user"
    if stat.S_ISDIR(info.st_mode):
        return _git_refusal(real)
    return None  # not a folder: nothing is read from it, and writing fails (keeps nothing)


def _git_refusal(folder: str) -> str | None:
    """Why not `folder` (a real path to a folder), as far as git is concerned: git tracks files
    in it, or it is in a work tree and git cannot say. Git is asked only when a folder at or
    above it has a `.git`."""
    current = folder
    while not os.path.lexists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return None  # in no git work tree
        current = parent
    import subprocess  # here: only a cache folder inside a work tree runs git

    def git(*arguments: str) -> bytes | None:
        try:
            completed = subprocess.run(
                ["git", "-C", folder, *arguments], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, timeout=120, check=False,
            )
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        return completed.stdout if completed.returncode == 0 else None

    listed = git("ls-files", "-z", "--cached", "--", ".")
    if listed is not None:
        return "git tracks files in it" if listed.strip(b"\0") else None
    if (git("rev-parse", "--is-inside-git-dir") or b"").strip() == b"true":
        return None  # inside a .git folder: git tracks nothing there
    return "it is inside a git work tree and git cannot say whether it tracks files in it"
