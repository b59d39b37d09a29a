"""Built-in project-hint resolvers (placeholder until the ingest work lands)."""

from jezero.hookspecs import hookimpl


@hookimpl(trylast=True)
def resolve_project(hints):
    return hints.default_project
