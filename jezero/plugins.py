"""The plugin host: one lazily built plugin manager, the built-in plugins, and the registries the
hooks fill (connector types, redactors, summarizers, search index engines, embedders).

Environment switches, for people writing plugins:
- JEZERO_PLUGINS: comma-separated entry-point names to load; set but empty loads none. Built-in
  plugins always load.
- JEZERO_TRACE_HOOKS=1: print every hook call and its result to stderr.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import os
import sys
import threading
from dataclasses import dataclass

import pluggy

from jezero import hookspecs
from jezero.models import ConnectorType, EmbedderType, IndexEngineType, Redactor, SummarizerType

ENTRY_POINT_GROUP = "jezero.connectors"

# Ordinary plugin modules that ship inside the core distribution.
BUILTIN_PLUGINS = (
    "jezero.ingest.redact",
    "jezero.ingest.projects",
    "jezero.ingest.projects:Fallbacks",
    "jezero.ingest.planned",
    "jezero.store.fts5_engine",
)


@dataclass
class LoadError:
    name: str  # entry-point name
    value: str  # what it points at
    distribution: str | None
    error: str


_lock = threading.Lock()
_pm: pluggy.PluginManager | None = None
_load_errors: list[LoadError] = []


def get_plugin_manager() -> pluggy.PluginManager:
    """The plugin manager, built on first use with every plugin loaded."""
    global _pm
    with _lock:
        if _pm is None:
            _pm = _build()
        return _pm


def load_errors() -> list[LoadError]:
    get_plugin_manager()
    return list(_load_errors)


def reset() -> None:
    """Forget the plugin manager (tests, and after installing a plugin in-process)."""
    global _pm
    with _lock:
        _pm = None
        _load_errors.clear()


def _build() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("jezero")
    pm.add_hookspecs(hookspecs)
    for spec in BUILTIN_PLUGINS:
        module, _, attr = spec.partition(":")
        plugin = importlib.import_module(module)
        pm.register(getattr(plugin, attr)() if attr else plugin, name=spec)

    wanted = os.environ.get("JEZERO_PLUGINS")
    allowed = None if wanted is None else {n.strip() for n in wanted.split(",") if n.strip()}
    # pluggy's load_setuptools_entrypoints stops at the first plugin that fails to import; load
    # each entry point on its own so one broken plugin is reported by name and the rest work.
    for ep in md.entry_points(group=ENTRY_POINT_GROUP):
        if allowed is not None and ep.name not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        dist = ep.dist.name if ep.dist else None
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
            pm.check_pending()
        except Exception as e:  # anything raised at import or registration
            if pm.get_plugin(ep.name) is not None:
                pm.unregister(name=ep.name)
            _load_errors.append(LoadError(ep.name, ep.value, dist, f"{type(e).__name__}: {e}"))
            continue
        if ep.dist is not None:
            pm._plugin_distinfo.append((plugin, ep.dist))  # keeps list_plugin_distinfo() true

    if _tracing():
        def before(hook_name, impls, kwargs):
            _trace(f"{hook_name}({', '.join(kwargs)}) -> {[i.plugin_name for i in impls]}")

        def after(outcome, hook_name, impls, kwargs):
            _trace(f"{hook_name} returned {outcome.get_result()!r}")

        pm.add_hookcall_monitoring(before, after)
    return pm


def _tracing() -> bool:
    return bool(os.environ.get("JEZERO_TRACE_HOOKS"))


def _trace(message: str) -> None:
    print(f"jezero hook: {message}", file=sys.stderr)


class DuplicateName(Exception):
    pass


def _collect(hook_name: str, make) -> dict:
    """Call a register-style hook, with a register callback that records the calling plugin and
    refuses a duplicate name."""
    pm = get_plugin_manager()
    found: dict = {}
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():  # registration order (trylast first, tryfirst last)
        def register(name, *args, _plugin=impl.plugin_name, **kwargs):
            # A planned connector type (build None) gives way to the plugin that builds it.
            builds = args[0] if args else kwargs.get("build")
            if name in found and getattr(found[name], "build", True) is None and builds is not None:
                del found[name]
            if name in found:
                raise DuplicateName(
                    f"{hook_name}: {name!r} registered by {found[name].plugin} and again by {_plugin}"
                )
            found[name] = make(name, *args, plugin=_plugin, **kwargs)
            if _tracing():
                _trace(f"{hook_name}: {impl.plugin_name} registered {name!r}")

        if _tracing():
            _trace(f"{hook_name}(register) -> {impl.plugin_name}")
        impl.function(*[register for _ in impl.argnames])
    return found


def connector_types() -> dict[str, ConnectorType]:
    return _collect("register_connector_types", ConnectorType)


def redactors() -> list[Redactor]:
    return list(_collect("register_redactors", lambda name, redact, plugin=None: Redactor(name, redact, plugin)).values())


def summarizer_types() -> dict[str, SummarizerType]:
    return _collect("register_summarizers", lambda name, build, description="", plugin=None: SummarizerType(name, build, description, plugin))


def index_engines() -> dict[str, IndexEngineType]:
    return _collect("register_index_engines", lambda name, open, description="", plugin=None: IndexEngineType(name, open, description, plugin))


def embedder_types() -> dict[str, EmbedderType]:
    return _collect("register_embedders", EmbedderType)


def plugin_info(all_plugins: bool = False) -> list[dict]:
    """What `jezero plugins` prints: every plugin with its distribution, version and hooks."""
    pm = get_plugin_manager()
    dists = {id(p): d for p, d in pm.list_plugin_distinfo()}
    out = []
    for name, plugin in pm.list_name_plugin():
        builtin = name in BUILTIN_PLUGINS
        if builtin and not all_plugins:
            continue
        dist = dists.get(id(plugin))
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        out.append({
            "name": name,
            "distribution": dist.project_name if dist else ("jezero" if builtin else None),
            "version": dist.version if dist else (_core_version() if builtin else None),
            "hooks": hooks,
            "builtin": builtin,
        })
    for err in _load_errors:
        out.append({"name": err.name, "distribution": err.distribution, "version": _dist_version(err.distribution),
                    "hooks": [], "error": err.error})
    return sorted(out, key=lambda p: p["name"])


def _core_version() -> str:
    from jezero import __version__
    return __version__


def _dist_version(dist: str | None) -> str | None:
    if not dist:
        return None
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None
