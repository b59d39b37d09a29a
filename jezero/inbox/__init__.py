"""The inbox: where devices' uploaded transcripts wait for the connectors.

A device PUTs its agents' session files over HTTP (jezero/server/inbox.py); each file is kept as
sent in `<inbox>/<device>/<agent>/<path>`, mirroring the agent's own store, so the same connector
code that reads a local store reads a device's folder (jezero_connectors_inbox).

- layouts.py  which paths each agent's store has, and so which uploads are accepted
- folder.py   writing a file into a device folder: atomic, durable, never outside it

Raw uploads are kept unredacted on the server; redaction happens when a connector reads them,
like any other source.
"""
