"""Jobs as Python objects: `Job` and `TaskSpec` mirror job.toml one-to-one.

The shape of job.toml lives in one table, `SCHEMA`: each section maps its
keys to a kind. Adding a key to job.toml is one line here. Python checks what
Python can check at once (unknown keys and wrong types, with job.toml's own
messages); everything else (ranges, sizes, durations, paths, the framework
rules) is checked by `tony-submit --dry-run`, so there is one set of rules,
the C++ one (config/toml_reader*.cpp, config/validate.cpp), and one set of
messages.
"""

import os
import tempfile
from pathlib import Path

from .errors import JobConfigError


def _tomllib():
    # Imported when used: tasks of tony.run import this package without
    # needing TOML.
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    return tomllib

# -- the schema -----------------------------------------------------------------

# Kinds of values, with the words job.toml's errors use for them.
STRING = ("string", "a string")
INTEGER = ("integer", "an integer")
BOOLEAN = ("boolean", "a boolean (true or false)")
SIZE = ("size", 'an integer (MiB) or a string like "2g"')
DURATION = ("duration", 'an integer of seconds or a string like "30m"')
STRINGS = ("strings", "an array of strings")
ENV = ("env", "a table")  # NAME = string, number or boolean
FILES = ("files", "an array of paths or { source, name } tables")
INDEX = ("index", "a table of task indexes, each { memory, vcores, gpus }")

# The keys of a { source, name } entry of files/archives, and of one task's
# own capability in [tasks.<type>.index.<i>].
FILE_ENTRY_KEYS = {"source": STRING, "name": STRING}
INDEX_KEYS = {"memory": SIZE, "vcores": INTEGER, "gpus": INTEGER}

# Every section and key of job.toml (doc/job-toml.md). A dict is a table of
# its own; TASKS stands for [tasks.<type>], whose keys are TASK_KEYS.
TASK_KEYS = {
    "instances": INTEGER,
    "memory": SIZE,
    "vcores": INTEGER,
    "gpus": INTEGER,
    "command": STRING,
    "tracked": BOOLEAN,
    "sidecar": BOOLEAN,
    "node_label": STRING,
    "placement": STRING,
    "max_per_node": INTEGER,
    "env": ENV,
    "files": FILES,
    "archives": FILES,
    "docker_image": STRING,
    "index": INDEX,
    "restart": STRING,
    "max_restarts": INTEGER,
    "restart_backoff": DURATION,
    "tolerated_failures": INTEGER,
    "elastic": {"min": INTEGER, "max": INTEGER},
    "spec_signal": STRING,
    "execution_timeout": DURATION,
}
TASKS = "tasks"
SCHEMA = {
    "name": STRING,
    "framework": STRING,
    "queue": STRING,
    "timeout": DURATION,
    "tags": STRINGS,
    "node_label": STRING,
    "code": {
        "src_dir": STRING,
        "command": STRING,
        "python_venv": STRING,
        "python_binary_path": STRING,
        "files": FILES,
        "archives": FILES,
    },
    "docker": {"image": STRING, "mounts": STRINGS, "network": STRING,
               "run_options": STRINGS},
    "env": ENV,
    "data": {"input_path": STRING, "output_path": STRING},
    "tasks": TASKS,
    "tensorboard": {"enabled": BOOLEAN, "log_dir": STRING, "on": STRING},
    "am": {"memory": SIZE, "vcores": INTEGER, "max_app_attempts": INTEGER,
           "reconnect_timeout": DURATION},
    "policy": {
        "max_attempts": INTEGER,
        "allocation_timeout": DURATION,
        "registration_timeout": DURATION,
        "heartbeat_interval": DURATION,
        "heartbeat_timeout": DURATION,
        "stop_grace": DURATION,
        "tolerated_failures": INTEGER,
    },
    "cluster": {
        "backend": STRING,
        "hadoop_conf": STRING,
        "install_dir": STRING,
        "staging_dir": STRING,
        "shared_cache": STRING,
        "jobs_dir": STRING,
        "history_dir": STRING,
        "local": {"memory": SIZE, "vcores": INTEGER, "gpus": INTEGER},
    },
    "security": {"principal": STRING, "keytab": STRING, "file_systems": STRINGS,
                 "ca_file": STRING, "view_acl": STRING, "modify_acl": STRING},
}

# Keys whose relative paths job.toml resolves against its own directory.
_PATH_KEYS = {("code", "src_dir"), ("code", "python_venv"), ("cluster", "hadoop_conf"),
              ("security", "keytab"), ("security", "ca_file")}


def _absolute_entry(entry, base):
    """A files/archives entry with a local relative source made absolute."""
    source = entry if isinstance(entry, str) else entry.get("source", "")
    if "://" in source or not source:
        return entry
    absolute = str(base / os.path.expanduser(source))
    return absolute if isinstance(entry, str) else {**entry, "source": absolute}


# -- checks with job.toml's messages ---------------------------------------------


def _distance(a, b):
    """Edit distance ignoring case, a swap of neighbours counting as one."""
    a, b = a.lower(), b.lower()
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def _unknown_key(key, where, known):
    place = f" in {where}" if where else " at the top level"
    best = min(known, key=lambda k: _distance(key, k)) if known else None
    reach = 2 if len(key) >= 5 else 1
    if best is not None and _distance(key, best) <= reach:
        hint = f"; did you mean '{best}'?"
    else:
        hint = "; known keys: " + ", ".join(known)
    return JobConfigError(f"unknown key '{key}'{place}{hint}")


def _toml_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__


def _check_value(key, kind, value):
    name, words = kind
    t = _toml_type(value)
    ok = {
        "string": t == "string",
        "integer": t == "integer",
        "boolean": t == "boolean",
        "size": t in ("integer", "string"),
        "duration": t in ("integer", "string"),
        "strings": t == "array" and all(isinstance(x, str) for x in value),
        "env": t == "table",
        "files": t == "array" and all(isinstance(x, (str, dict)) for x in value),
        "index": t == "table" and all(isinstance(x, dict) for x in value.values()),
    }[name]
    if not ok:
        raise JobConfigError(f"'{key}' must be {words}, got {t}")
    if name == "env":
        for k, v in value.items():
            if _toml_type(v) not in ("string", "integer", "float", "boolean"):
                raise JobConfigError(f"'{key}.{k}' must be a string, number or boolean, "
                                     f"got {_toml_type(v)}")
    if name == "files":
        return [x if isinstance(x, str) else _check_table(x, FILE_ENTRY_KEYS, f"'{key}' entry")
                for x in value]
    if name == "index":
        return {str(i): _check_table(v, INDEX_KEYS, f"[{key}.{i}]") for i, v in value.items()}
    return list(value) if name == "strings" else value


def _check_table(table, schema, where):
    """A checked copy of `table` against `schema` (a dict of key -> kind)."""
    if not isinstance(table, dict):
        raise JobConfigError(f"{where or 'the job'} must be a table, got {_toml_type(table)}")
    out = {}
    for key, value in table.items():
        if key not in schema:
            raise _unknown_key(key, where, list(schema))
        kind = schema[key]
        if value is None:
            continue
        if kind is TASKS:
            out[key] = _check_tasks(value)
        elif isinstance(kind, dict):
            out[key] = _check_table(value, kind, f"[{_join(where, key)}]")
        else:
            out[key] = _check_value(key, kind, value)
    return out


def _join(where, key):
    inner = where.strip("[]")
    return f"{inner}.{key}" if inner else key


def _check_tasks(tasks):
    if not isinstance(tasks, dict):
        raise JobConfigError(f"'tasks' must be a table, got {_toml_type(tasks)}")
    out = {}
    for name, spec in tasks.items():
        if isinstance(spec, TaskSpec):
            out[name] = spec
        elif isinstance(spec, dict):
            out[name] = TaskSpec(_where=f"[tasks.{name}]", **spec)
        else:
            raise JobConfigError(f"[tasks.{name}] must be a table or a TaskSpec, "
                                 f"got {_toml_type(spec)}")
    return out


# -- the public classes ------------------------------------------------------------


class TaskSpec:
    """One task type: the keys of a [tasks.<type>] table (TASK_KEYS).

    `fn` is for `tony.run` only: the function this type's tasks call instead
    of the one given to run() (e.g. an evaluator's)."""

    def __init__(self, _where="[tasks.<type>]", fn=None, **keys):
        self.__dict__["_keys"] = _check_table(keys, TASK_KEYS, _where)
        self.__dict__["fn"] = fn

    def __getattr__(self, key):
        if key in TASK_KEYS:
            return self._keys.get(key)
        raise AttributeError(key)

    def __setattr__(self, key, value):
        if key == "fn":
            self.__dict__["fn"] = value
            return
        self._keys.update(_check_table({key: value}, TASK_KEYS, "[tasks.<type>]"))

    def to_dict(self):
        return dict(self._keys)

    def replace(self, **keys):
        """A copy with `keys` changed."""
        return TaskSpec(fn=keys.pop("fn", self.fn), **{**self._keys, **keys})

    def __eq__(self, other):
        return isinstance(other, TaskSpec) and self._keys == other._keys and \
            self.fn is other.fn

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._keys.items())
        return f"TaskSpec({args})"


class Job:
    """A whole job.toml. Top-level keys are keyword arguments (name=...,
    framework=..., timeout=..., tags=[...]); sections are dicts (code={...},
    policy={...}, cluster={"local": {...}}); tasks maps type names to TaskSpec
    (or dicts). Unknown keys and wrong types raise JobConfigError at once."""

    def __init__(self, tasks=None, **keys):
        doc = dict(keys)
        if tasks is not None:
            doc["tasks"] = tasks
        self.__dict__["_doc"] = _check_table(doc, SCHEMA, "")

    # -- access ----------------------------------------------------------------

    def __getattr__(self, key):
        if key in SCHEMA:
            if isinstance(SCHEMA[key], dict) or SCHEMA[key] in (ENV, TASKS):
                return self._doc.setdefault(key, {})
            return self._doc.get(key)
        raise AttributeError(key)

    def __setattr__(self, key, value):
        self._doc.update(_check_table({key: value}, SCHEMA, ""))

    def set(self, dotted, value):
        """Sets one key by its dotted path, as --set does: "policy.stop_grace"."""
        parts = dotted.split(".")
        table = {parts[-1]: value}
        for p in reversed(parts[:-1]):
            table = {p: table}
        self._merge(table)
        return self

    def _merge(self, overlay):
        checked = _check_table(overlay, SCHEMA, "")

        def merge(into, new):
            for k, v in new.items():
                if isinstance(v, dict) and isinstance(into.get(k), dict):
                    merge(into[k], v)
                else:
                    into[k] = v
        merge(self._doc, checked)

    def to_dict(self):
        """The job as plain dicts, as tomllib would read its job.toml."""
        out = {}
        for key, value in self._doc.items():
            if key == "tasks":
                out[key] = {n: t.to_dict() for n, t in value.items()}
            elif isinstance(value, dict):
                if value:  # sections read but never set stay out
                    out[key] = _deep_copy(value)
            else:
                out[key] = value
        return out

    def __eq__(self, other):
        return isinstance(other, Job) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return f"Job({self.to_dict()!r})"

    # -- job.toml ----------------------------------------------------------------

    def to_toml(self):
        """The job.toml text of this job (top-level keys first, then tables)."""
        d = self.to_dict()
        scalars = {k: v for k, v in d.items() if not isinstance(v, dict)}
        tables = {k: v for k, v in d.items() if isinstance(v, dict)}
        import tomli_w
        return tomli_w.dumps({**scalars, **tables})

    @classmethod
    def from_toml(cls, path, overrides=None):
        """Reads a job.toml; `overrides` ({"tasks.worker.instances": 4} or
        ["tasks.worker.instances=4"]) are applied as --set does. Relative
        paths are made absolute against the file's directory, and src_dir
        defaults to that directory, as tony-submit does."""
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as e:
            raise JobConfigError(f"{path}: cannot read the file: {e.strerror}") from None
        tomllib = _tomllib()
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise JobConfigError(f"{path}: TOML syntax error: {e}") from None
        try:
            job = cls(**doc)
        except JobConfigError as e:
            raise JobConfigError(f"{path}: {e}") from None
        base = path.resolve().parent
        code = job.code
        code.setdefault("src_dir", str(base))
        for section, key in _PATH_KEYS:
            table = job._doc.get(section, {})
            value = table.get(key)
            if value is not None:
                table[key] = str(base / os.path.expanduser(value))
        tables = [job._doc.get("code", {})] + [t._keys for t in job.tasks.values()]
        for table in tables:
            for key in ("files", "archives"):
                if key in table:
                    table[key] = [_absolute_entry(e, base) for e in table[key]]
        for k, v in _override_items(overrides):
            job.set(k, v)
        return job

    def write(self, path):
        """Writes the job.toml to `path`; returns the path."""
        Path(path).write_text(self.to_toml())
        return Path(path)

    def validate(self, tony_submit=None):
        """Checks the whole job with tony-submit --dry-run (every rule of
        job.toml); returns the resolved spec (a dict). Raises JobConfigError
        with tony-submit's messages."""
        from . import _cli
        with tempfile.TemporaryDirectory(prefix="tony-job-") as tmp:
            path = self.for_submission(tmp)
            return _cli.dry_run(path, tony_submit)

    def for_submission(self, directory):
        """Writes the job as <directory>/job.toml, ready for tony-submit: a
        job built in Python without [code] src_dir ships an empty directory
        (not the current one). Returns the path."""
        directory = Path(directory)
        job = Job(**self.to_dict())
        if "src_dir" not in job.code:
            (directory / "src").mkdir(exist_ok=True)
            job.code["src_dir"] = str(directory / "src")
        if "name" not in job._doc:
            job._doc["name"] = "tony-python"
        return job.write(directory / "job.toml")


def _deep_copy(d):
    return {k: _deep_copy(v) if isinstance(v, dict) else
            (list(v) if isinstance(v, list) else v) for k, v in d.items()}


def _override_items(overrides):
    """(key, value) pairs from a dict or from "key=value" strings (the value
    read as TOML when it is TOML, else as a plain string, like --set)."""
    if not overrides:
        return []
    if isinstance(overrides, dict):
        return list(overrides.items())
    tomllib = _tomllib()
    items = []
    for o in overrides:
        key, sep, raw = o.partition("=")
        if not sep:
            raise JobConfigError(f"--set {o}: expected KEY=VALUE, e.g. "
                                 "--set tasks.worker.instances=4")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        items.append((key.strip(), value))
    return items
