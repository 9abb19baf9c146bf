"""Records: small classes of named fields, made the way `dataclasses` makes them, at a
fraction of the cost of making the class.

Every face starts by importing the records it uses (a check, a finding, a configuration), and
on Python 3.11 `@dataclass` takes about half a millisecond a class and `import dataclasses`
another 8 (it imports `inspect`): a third of a one-file scan. `@record` reads the class's
annotations once; `__repr__`, `__eq__` and `__hash__` are shared by all records, and
`__init__`, written with `exec` as dataclasses write theirs, is written when the class is
first called.

    @record
    class Capture:
        text: str
        start: int
        end: int = 0
        note: dict = field(default_factory=dict, compare=False, repr=False)

A record compares and hashes by its fields (those with `compare=True`), like a frozen
dataclass; `@record(mutable=True)` makes one that is not hashable, like a plain dataclass.
Fields are not frozen: records are not written to after they are made, by convention.
`replace(record, **changes)` is `dataclasses.replace`, and a `__post_init__` is called after
`__init__` as dataclasses call it. Inheritance is not supported.
"""

from __future__ import annotations

_MISSING = object()


class Field:
    __slots__ = ("name", "default", "default_factory", "compare", "hash", "repr")

    def __init__(self, default=_MISSING, default_factory=_MISSING, compare=True, hash=None, repr=True):
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.hash = compare if hash is None else hash
        self.repr = repr


def field(*, default=_MISSING, default_factory=_MISSING, compare: bool = True, hash: bool | None = None, repr: bool = True):
    """A field's options, as `dataclasses.field` takes them."""
    return Field(default, default_factory, compare, hash, repr)


def record(cls=None, *, mutable: bool = False):
    """Make `cls` a record (see the module docstring)."""
    if cls is None:
        return lambda c: _make(c, mutable)
    return _make(cls, mutable)


def _make(cls, mutable: bool):
    fields = []
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        spec.name = name
        if isinstance(value, Field):
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        fields.append(spec)
    cls.__record_fields__ = tuple(fields)
    compared = [spec.name for spec in fields if spec.compare]
    hashed = [spec.name for spec in fields if spec.hash]
    cls._record_compared = _getter(compared)
    cls._record_hashed = _getter(hashed)
    cls._record_shown = tuple(spec.name for spec in fields if spec.repr)
    # `__init__` is written for the class when it is first called: a start-up that never makes
    # a record of a class pays nothing for it.
    cls.__init__ = _first_init
    cls.__repr__ = _repr
    cls.__eq__ = _eq
    cls.__hash__ = None if mutable else _hash
    return cls


def _getter(names: list[str]):
    """A function from a record to the tuple of these fields (operator.attrgetter gives a bare
    value for one name)."""
    from operator import attrgetter

    if not names:
        return lambda record: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda record: (get(record),)
    return attrgetter(*names)


def _first_init(self, *args, **kwargs):
    cls = type(self)
    init = _written_init(cls)
    cls.__init__ = init
    init(self, *args, **kwargs)


def _written_init(cls):
    names = {"_MISSING": _MISSING}
    parameters, body = [], []
    for spec in cls.__record_fields__:
        if spec.default_factory is not _MISSING:
            names[f"_factory_{spec.name}"] = spec.default_factory
            parameters.append(f"{spec.name}=_MISSING")
            body.append(f"    self.{spec.name} = _factory_{spec.name}() if {spec.name} is _MISSING else {spec.name}")
        else:
            if spec.default is not _MISSING:
                names[f"_default_{spec.name}"] = spec.default
                parameters.append(f"{spec.name}=_default_{spec.name}")
            else:
                parameters.append(spec.name)
            body.append(f"    self.{spec.name} = {spec.name}")
    if "__post_init__" in cls.__dict__:
        body.append("    self.__post_init__()")
    source = "\n".join([f"def __init__(self, {', '.join(parameters)}):", *(body or ["    pass"])])
    exec(source, names)  # noqa: S102 - the source is made above from the class's field names
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _repr(self) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._record_shown)
    return f"{type(self).__qualname__}({shown})"


def _eq(self, other):
    if other.__class__ is self.__class__:
        return self._record_compared(self) == self._record_compared(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(self._record_hashed(self))


def replace(instance, **changes):
    """A copy of the record `instance` with `changes` to its fields."""
    values = {spec.name: getattr(instance, spec.name) for spec in instance.__record_fields__}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(instance).__name__} has no field {', '.join(sorted(unknown))}")
    values.update(changes)
    return instance.__class__(**values)
