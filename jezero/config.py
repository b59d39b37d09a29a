"""The configuration: one TOML file, validated all at once.

Where it is: `--config FILE`, else `$JEZERO_CONFIG`, else `config.toml` in the platform config
folder. Secrets never appear in it: fields ending in `_env` name an environment variable, read
from the environment or from a `.env` file next to the config (the environment wins).
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import platformdirs
from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

APP = "jezero"
DEFAULT_TOKENIZER = "trigram remove_diacritics 1"

# Option names that must never hold a secret inline: use `<name>_env` with a variable name instead.
_SECRET_NAME = re.compile(r"(pass(word|wd)?|secret|token|api[_-]?key|credential|private[_-]?key|auth)", re.I)


def default_config_path() -> Path:
    return platformdirs.user_config_path(APP) / "config.toml"


def default_data_dir() -> Path:
    return platformdirs.user_data_path(APP)


def resolve_config_path(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("JEZERO_CONFIG"):
        return Path(os.environ["JEZERO_CONFIG"]).expanduser()
    return default_config_path()


# `$NAME` and `${NAME}`, as os.path.expandvars reads them.
_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})", re.ASCII)


def unset_variables_message(path: str) -> str | None:
    """What is wrong with a path naming environment variables that are not set, or None.
    os.path.expandvars (and so jezero.ingest.files.expand) leaves such a `$NAME` as it is, so the
    path is another one: a library made in a folder literally named `$NAME` (a second library that
    cron's runs fill while the server reads the first), or a store never found. A path that names
    one is refused."""
    names = dict.fromkeys(m[1].strip("{}") for m in _VARIABLE.finditer(path))
    missing = [n for n in names if n not in os.environ]
    if not missing:
        return None
    names = ", ".join(f"${n}" for n in missing)
    return f"names {names}, which {'is' if len(missing) == 1 else 'are'} not set in the environment"


def _variables_set(path: str | None) -> str | None:
    """A path option's `$NAME`s must be set (unset_variables_message says why); a NUL, which no
    file system takes, is refused here rather than as a ValueError traceback at the first open."""
    if path and "\x00" in path:
        raise ValueError("a path cannot hold a NUL character")
    unset = path and unset_variables_message(path)
    if unset:
        raise ValueError(f"the path {unset}")
    return path


_MAX_MINUTES = timedelta.max.total_seconds() / 60


def config_minutes(value: float) -> timedelta:
    """A config's length in minutes as a timedelta; one too long for it (`inf`, `1e308`, an
    interval times a large --stale-after) is the longest there is, "never", where timedelta's
    OverflowError failed every run (`[ingest] settle_minutes = inf`) or every health check
    (`interval_minutes = 1e308`) of a config check-config had passed."""
    return timedelta(minutes=value) if value < _MAX_MINUTES else timedelta.max


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


# A switch is a TOML boolean: pydantic would read the strings "yes", "no", "on", "off", "1" as one,
# so `enabled = "no"` quietly turned a thing on or off by a reading the user did not write.
Switch = StrictBool


class StorageConfig(_Section):
    # "sqlite" (one file, built in) or a backend a distribution adds (jezero.store.backends):
    # "postgres" from jezero-store-postgres.
    backend: str = Field("sqlite", pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    path: str | None = None  # default: <platform data dir>/library.sqlite3
    tokenizer: str = DEFAULT_TOKENIZER
    # A database server's connection string is a secret: the config names the environment
    # variable (or .env entry) that holds it, never the string itself.
    url_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    replica_url_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")  # readers, when set

    @field_validator("path")
    @classmethod
    def _path_variables_set(cls, path: str | None) -> str | None:
        return _variables_set(path)


class SearchConfig(_Section):
    candidate_pool: int = Field(200, ge=10, le=5000)
    recency_half_life_days: float = Field(90.0, gt=0)
    recency_weight: float = Field(0.3, ge=0, le=1)
    default_limit: int = Field(10, ge=1)
    max_limit: int = Field(50, ge=1, le=500)
    # Upper bound on the work one query may do inside SQLite before it is cut short.
    time_budget_ms: int = Field(250, ge=10, le=60000)
    # What finds the candidate pool: "fts5" (the library's own index) or an engine a plugin
    # registers (register_index_engines), e.g. "tantivy" from jezero-index-tantivy.
    engine: str = Field("fts5", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class SummarizerConfig(_Section):
    name: str = "offline"
    model: str | None = None  # e.g. "anthropic/claude-haiku-4-5" or "openai/gpt-4o-mini"
    base_url: str | None = None
    api_key_env: str | None = None
    output_language: str | None = None  # ISO 639-1, e.g. "en": every item written in it
    max_in_flight: int = Field(4, ge=1, le=64)
    timeout_seconds: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    budget_usd: float | None = Field(None, ge=0)  # stop a run cleanly once spent
    budget_tokens: int | None = Field(None, ge=0)

    def api_key(self) -> str | None:
        """The key, read from the named variable (environment, then the .env beside the config)."""
        return lookup_env(self.api_key_env) if self.api_key_env else None


class IngestConfig(_Section):
    settle_minutes: float = Field(30.0, ge=0)
    max_input_chars: int = Field(60_000, ge=2_000, le=2_000_000)


class ProjectRule(_Section):
    path: str  # a glob over the working folder, e.g. "~/work/shop*"
    project: str


class ProjectsConfig(_Section):
    rules: list[ProjectRule] = []
    # Folders whose direct children are projects: a session in ~/src/shop/api is project "shop".
    # A bare name matches a folder of that name anywhere (paths from other computers too); a
    # path ("~/clients") matches only there.
    roots: list[str] = ["src", "code", "projects", "workspace", "work", "dev", "repos", "git", "github"]


class ConnectorConfig(_Section):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # the source name
    type: str
    enabled: Switch = True
    interval_minutes: float = Field(15.0, gt=0)
    default_project: str | None = None
    options: dict[str, Any] = {}

    @field_validator("options")
    @classmethod
    def _no_inline_secrets(cls, options: dict[str, Any]) -> dict[str, Any]:
        for key in options:
            if _SECRET_NAME.search(key) and not key.endswith("_env"):
                raise ValueError(
                    f"option {key!r} looks like a secret: put the value in an environment variable "
                    f"and name it with {key}_env = \"VARIABLE\""
                )
        return options


class ClientConfig(_Section):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    key_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    sources: list[str] = ["*"]  # glob patterns over source names
    upload: Switch = False


class InboxConfig(_Section):
    path: str | None = None  # default: an `inbox` folder beside the library
    # Far above any real session file (the longest Claude Code sessions reach tens of MB), low
    # enough that a runaway device cannot fill the server's disk in one request.
    max_upload_mb: float = Field(128.0, gt=0, le=16384)
    # How long an upload may go without a single byte arriving: then 408, closed, and the partial
    # file removed (jezero.server.inbox). Not a deadline on the whole upload: a big file on a slow
    # link keeps going as long as bytes keep coming. A link that moves at all delivers a packet
    # every second or two; 30 s of none is a stalled or vanished device, and it is under the
    # client core's own 60 s socket timeout, so a device that is still there reads the 408.
    upload_idle_seconds: float = Field(30.0, gt=0, le=3600)

    @field_validator("path")
    @classmethod
    def _path_variables_set(cls, path: str | None) -> str | None:
        return _variables_set(path)

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


class ServerConfig(_Section):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=1, le=65535)
    # How long a request's head (request line and headers) may take, from the connection's start
    # or the request's first byte: then 408 and closed (jezero.server.parser: slowloris). A head
    # is at most 16 KB and a real client sends it at once; 10 s leaves a slow, distant link room.
    head_timeout_seconds: float = Field(10.0, gt=0, le=3600)
    # How long an MCP request's body may take once its head is in: then 408 and closed. The body
    # is at most 256 KiB (jezero.server.http.MAX_REQUEST_BYTES): 30 s is 9 KB/s.
    body_timeout_seconds: float = Field(30.0, gt=0, le=3600)


class SemanticConfig(_Section):
    """The semantic lane (docs/semantic.md): vectors of items and message windows, searched by
    nearest neighbours and fused with the keyword lanes. Off until turned on."""

    enabled: Switch = False
    embedder: str = Field("minilm-static", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    options: dict[str, Any] = {}  # handed to the embedder's build() and prepare()
    # The lane's say in the fusion next to the items lane's (1.0 times its separation). Chosen
    # with minilm-static on half A of benchmarks/retrieval's queries, half B held out
    # (benchmarks/semantic/README.md): of 0.2 to 1.0, 0.5 had the best R@5 on half A over the
    # current fusion (0.2 had been best before the items lane was gated); one language query of
    # half B still drops out of the top ten.
    weight: float = Field(0.5, ge=0, le=10)
    # Nearest neighbours kept from each of the two vector tables (items, message windows) before
    # they are grouped into sessions; the bit scan reads twice as many candidates and the exact
    # distances rank them. 50 found what 100 did (the lane hands the fusion 50 sessions) at half
    # the scan's cost.
    k: int = Field(50, ge=10, le=1000)
    # The vector lane's reciprocal-rank constant for a query no session holds a literal term of
    # (query/vectors.py flat_curve(): the vectors decide where the keyword lanes cannot tell
    # sessions apart); None: the fusion's own (60) for every query. Off by default: with
    # minilm-static it put long_fact below keyword alone; with minilm, 2 took the chats' R@10 from
    # 0.570 to 0.836 (benchmarks/retrieval/README.md, 2026-12-02, branch hybridflat).
    flat_k: int | None = Field(None, ge=1, le=1000)
    # The message windows' length in characters (jezero/store/vectors.py; None: WINDOW_CHARS,
    # 1,200). A library records the length it was embedded with; another is refused until
    # `jezero embed` embeds it again. With minilm, 400 lifted the vectors alone (chats R@10 0.672
    # -> 0.773) and, with flat_k 2, the search (0.742 -> 0.836); with minilm-static it changed
    # nothing on the chats for three times the vectors, so the default stays.
    window_chars: int | None = Field(None, ge=100, le=10000)

    @field_validator("options")
    @classmethod
    def _no_inline_secrets(cls, options: dict[str, Any]) -> dict[str, Any]:
        return ConnectorConfig._no_inline_secrets(options)


class Config(_Section):
    storage: StorageConfig = StorageConfig()
    search: SearchConfig = SearchConfig()
    summarizer: SummarizerConfig = SummarizerConfig()
    ingest: IngestConfig = IngestConfig()
    projects: ProjectsConfig = ProjectsConfig()
    server: ServerConfig = ServerConfig()
    inbox: InboxConfig = InboxConfig()
    semantic: SemanticConfig = SemanticConfig()
    connectors: list[ConnectorConfig] = []
    clients: list[ClientConfig] = []

    # Not from the file: where it was read from, and the .env values beside it.
    _path: Path | None = None

    @property
    def path(self) -> Path | None:
        return self._path

    def library_path(self) -> Path:
        if self.storage.path:
            p = Path(os.path.expandvars(self.storage.path)).expanduser()
            if not p.is_absolute() and self._path is not None:
                p = self._path.parent / p
            return p
        return default_data_dir() / "library.sqlite3"

    def inbox_path(self) -> Path:
        """Where devices' uploads are kept: `[inbox] path`, else `inbox/` beside the library."""
        if self.inbox.path:
            p = Path(os.path.expandvars(self.inbox.path)).expanduser()
            if not p.is_absolute() and self._path is not None:
                p = self._path.parent / p
            return p
        return self.library_path().parent / "inbox"

    def connector(self, name: str) -> ConnectorConfig:
        for c in self.connectors:
            if c.name == name:
                return c
        raise KeyError(name)


@dataclass
class Problem:
    key: str  # dotted path, e.g. "connectors[1].type"
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


class ConfigError(Exception):
    def __init__(self, path: Path | None, problems: list[Problem]):
        self.path = path
        self.problems = problems
        where = str(path) if path else "config"
        super().__init__("\n".join(f"{where}: {p}" for p in problems))


_dotenv: dict[str, str] = {}


def lookup_env(name: str) -> str | None:
    """A variable from the environment, else from the .env beside the loaded config."""
    return os.environ.get(name) or _dotenv.get(name) or None


def load(path: str | os.PathLike | None = None, *, must_exist: bool = False, check_plugins: bool = True) -> Config:
    """Read and validate the config; raises ConfigError listing every problem found.
    `check_plugins=False`: leave out the checks that load plugins (connector types and options,
    the summarizer's name), for commands that only read the library."""
    cfg_path = resolve_config_path(path)
    data: dict[str, Any] = {}
    if cfg_path.exists():
        try:
            data = tomllib.loads(cfg_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(cfg_path, [Problem("", f"not valid TOML: {e}")]) from None
    elif must_exist or path is not None:
        raise ConfigError(cfg_path, [Problem("", "file not found (run `jezero init` to create one)")])
    _dotenv.clear()
    env_file = cfg_path.parent / ".env"
    if env_file.exists():
        _dotenv.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    problems: list[Problem] = []
    config = None
    try:
        config = Config.model_validate(data)
    except ValidationError as e:
        problems += [_problem(err) for err in e.errors()]
    # Checked on the raw data too, so one run reports every problem, not the first layer's.
    problems += _semantic_problems(data, check_plugins)
    if problems:
        raise ConfigError(cfg_path, problems)
    config._path = cfg_path if cfg_path.exists() else None
    library = config.library_path()
    if config.storage.backend == "sqlite" and library.is_dir():
        # Said as what it is: SQLite's "unable to open database file" read as a permissions problem.
        raise ConfigError(cfg_path, [Problem("storage.path", f"{library} is a folder: name the library file "
                                                             f"in it (e.g. {library / 'library.sqlite3'})")])
    return config


def _problem(err: dict) -> Problem:
    key = ""
    for part in err["loc"]:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    if err["type"] == "extra_forbidden":
        return Problem(key, "unknown key")
    msg = err["msg"].removeprefix("Value error, ")
    # Echo the bad value only when it is a plain scalar outside connector options, which may
    # hold a secret by mistake: check-config must never print one.
    value = err.get("input")
    if isinstance(value, (int, float, str, bool)) and ".options" not in key and not _SECRET_NAME.search(key):
        msg += f" (got {value!r})"
    return Problem(key, msg)


def _semantic_problems(data: dict, check_plugins: bool = True) -> list[Problem]:
    """What the schema alone cannot see: duplicates, connector types and options, variables. Works
    on the raw TOML so it runs even when the schema found problems. Plugins are consulted only when
    the config names a connector or a summarizer other than the default, and not at all with
    `check_plugins=False` (a command that only reads the library)."""
    problems: list[Problem] = []

    def entries(key):
        value = data.get(key, [])
        return [(i, e) for i, e in enumerate(value) if isinstance(e, dict)] if isinstance(value, list) else []

    def duplicates(key, field, what):
        seen = set()
        for i, e in entries(key):
            v = e.get(field)
            if not isinstance(v, str):  # (a list or a table: the schema says it is not a text)
                continue
            if v in seen:
                problems.append(Problem(f"{key}[{i}].{field}", f"duplicate {what} {v!r}"))
            seen.add(v)

    duplicates("connectors", "name", "source name")
    duplicates("clients", "name", "client name")
    duplicates("clients", "key_sha256", "key digest (two clients share one key)")

    search = data.get("search") if isinstance(data.get("search"), dict) else {}
    d, m = search.get("default_limit", 10), search.get("max_limit", 50)
    if isinstance(d, int) and isinstance(m, int) and d > m:
        problems.append(Problem("search.default_limit", f"is larger than search.max_limit ({m})"))

    for key, var in _env_fields(data, entries):
        if lookup_env(var) is None:
            problems.append(Problem(key, f"environment variable {var} is not set (nor in the .env beside the config)"))

    connectors = entries("connectors")
    if connectors and check_plugins:
        problems += connector_problems(connectors)

    summ = data.get("summarizer") if isinstance(data.get("summarizer"), dict) else {}
    name = summ.get("name", "offline")
    if isinstance(name, str) and name != "offline" and check_plugins:
        from jezero import plugins

        types = plugins.summarizer_types()
        if name not in types:
            known = ", ".join(sorted(types)) or "none installed (pip install jezero-summarizers)"
            problems.append(Problem("summarizer.name", f"unknown summarizer {name!r}; known: {known}"))

    semantic = data.get("semantic") if isinstance(data.get("semantic"), dict) else {}
    embedder = semantic.get("embedder", SemanticConfig.model_fields["embedder"].default)
    if semantic.get("enabled") is True and isinstance(embedder, str) and check_plugins:
        from jezero import plugins

        types = plugins.embedder_types()
        if embedder not in types:
            known = ", ".join(sorted(types)) or "none installed (pip install jezero-embedders)"
            problems.append(Problem("semantic.embedder", f"unknown embedder {embedder!r}; known: {known}"))
    return problems


def connector_problems(connectors: list[tuple[int, dict]]) -> list[Problem]:
    """Each connector's type is installed and built, and its options are the ones its type
    declares, with the declared types: a misspelt or mistyped option is reported with its key
    before anything runs. A type that declares no options model is not checked here."""
    from pydantic import ValidationError as OptionsError

    from jezero import plugins

    problems: list[Problem] = []
    types = plugins.connector_types()
    for i, c in connectors:
        name = c.get("type")
        if not isinstance(name, str):
            continue
        t = types.get(name)
        if t is None:
            close = _closest(name, list(types))
            hint = f"; did you mean {close!r}?" if close else f"; known types: {', '.join(sorted(types))}"
            problems.append(Problem(f"connectors[{i}].type", f"unknown connector type {name!r}{hint}"))
            continue
        if t.build is None:
            problems.append(Problem(
                f"connectors[{i}].type",
                f"connector type {name!r} is planned but not built yet ({t.description}); "
                "install a plugin that provides it or remove this connector",
            ))
        options = c.get("options", {})
        if t.options is None or not isinstance(options, dict):
            continue  # the schema reports options that are not a table
        try:
            t.options.model_validate(options)
        except OptionsError as e:
            known = sorted(t.options.model_fields)
            for err in e.errors():
                key = f"connectors[{i}].options" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
                if err["type"] == "extra_forbidden":
                    close = _closest(str(err["loc"][0]), known)
                    hint = f"; did you mean {close!r}?" if close else f"; known options of {name!r}: {', '.join(known) or 'none'}"
                    problems.append(Problem(key, f"unknown option{hint}"))
                else:  # never echo the value: an option may hold a secret by mistake
                    problems.append(Problem(key, err["msg"].removeprefix("Value error, ")))
    return problems


def _env_fields(data: dict, entries):
    summ = data.get("summarizer")
    if isinstance(summ, dict) and isinstance(summ.get("api_key_env"), str):
        yield "summarizer.api_key_env", summ["api_key_env"]
    for i, c in entries("connectors"):
        options = c.get("options")
        if isinstance(options, dict):
            for k, v in options.items():
                if k.endswith("_env") and isinstance(v, str):
                    yield f"connectors[{i}].options.{k}", v


def _closest(word: str, choices: list[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


def blind_clients(cfg: Config) -> list[str]:
    """What check-config warns about the client keys: a key whose `sources` match none of the
    config's connectors answers every search with nothing, and nothing says why (a glob mistyped,
    a connector renamed). A warning, not a problem: a library may hold sources no connector of
    this config writes any more (a removed connector, another server's inbox)."""
    names = [c.name for c in cfg.connectors]
    return [f"clients.{c.name}: its sources {c.sources} match none of the config's connectors "
            f"({', '.join(names) or 'none'}): its searches find nothing unless the library holds such a source"
            for c in cfg.clients if not any(source_allowed(n, c.sources) for n in names)]


def overreaching_clients(cfg: Config) -> list[str]:
    """What check-config (and `jezero device approve`) warn about a key's `sources` glob written
    for one device's inbox (`inbox-anna-*`) that also matches another device's, one whose name
    starts with it (`inbox-anna-laptop-claude`): device names may hold '-', so the key meant for
    anna's sessions reads anna-laptop's too, from the day that device is approved, and nothing said
    so. A warning: the admin may mean it."""
    from jezero.devices import INBOX_TYPES, source_name

    devices = [c.name for c in cfg.clients if c.upload]
    out = []
    for c in cfg.clients:
        for glob in c.sources:
            named = [d for d in devices if glob.startswith(f"inbox-{d}-")]
            if not named:
                continue
            others = [d for d in devices if d not in named
                      and any(fnmatch.fnmatchcase(source_name(d, agent), glob) for agent in INBOX_TYPES)]
            if others:
                mine = ", ".join(repr(source_name(named[-1], agent)) for agent in INBOX_TYPES)
                out.append(f"clients.{c.name}: its sources glob {glob!r} names device {named[-1]}'s inbox but also matches "
                           f"device {', '.join(others)}'s ({source_name(others[0], 'claude')}, ...): to read "
                           f"{named[-1]}'s alone, list its sources ({mine})")
    return out


def unknown_engine(cfg: Config) -> list[str]:
    """What check-config warns about `[search] engine`: a name no installed plugin registers (a
    typo, or jezero-index-tantivy not installed here). A warning, not a problem: every command then
    searches with FTS5 and says so once (jezero.store.engines.engine_for), as status does."""
    from jezero import plugins

    name = cfg.search.engine
    engines = plugins.index_engines()
    if name in engines:
        return []
    known = ", ".join(sorted(engines))
    hint = _closest(name, sorted(engines))
    return [f"search.engine: no installed plugin gives the engine {name!r} (known: {known})"
            + (f"; did you mean {hint!r}?" if hint else "") + ": every search uses fts5 until one does"]


def source_allowed(source: str, patterns: list[str]) -> bool:
    """Case-sensitive glob match of a source name against a client's patterns."""
    return any(fnmatch.fnmatchcase(source, p) for p in patterns)

