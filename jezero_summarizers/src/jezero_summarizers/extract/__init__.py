"""What can be lifted from a transcript without a model: the requests, the outcome, and candidate
atoms (errors, commands, files, decisions, fixes, settings, numbers, todos), each copied verbatim
from the blocks and scored. Pure functions over blocks; the offline summarizer composes them.

One module per thing extracted: `text` (clipping, words, sentences, scaffolding, language),
`errors`, `commands`, `files`, `statements` (decisions, fixes, settings, numbers, todos),
`candidates` (scoring and de-duplication) and `digest`, which walks a segment's blocks. Blocks
are read as connectors make them: by what a tool call did (`action`, `command`, `paths`), never
by a tool's name. Nothing depends on how the pipeline renders a segment's text."""

from .candidates import Candidate, Candidates
from .commands import command_atom, command_weight
from .digest import Digest, Request, digest
from .errors import ErrorLine, error_key, error_lines, exit_code, failure_line, request_prose, short_error
from .files import OUTPUT_PATH_SCORE, mentioned_paths, norm_path, output_paths
from .statements import todo_items
from .text import (
    ATOM_TEXT_LIMIT, FILLER, STOPWORDS_EN, STOPWORDS_ES, content_words, cut, cut_at_word, detect_language, is_ack,
    is_scaffolding, is_specific, one_line, sentences, squash, strip_markdown,
)

__all__ = [
    "ATOM_TEXT_LIMIT", "FILLER", "OUTPUT_PATH_SCORE", "STOPWORDS_EN", "STOPWORDS_ES", "Candidate", "Candidates",
    "Digest", "ErrorLine", "Request", "command_atom", "command_weight", "content_words", "cut", "cut_at_word",
    "detect_language", "digest", "error_key", "error_lines", "exit_code", "failure_line", "is_ack", "is_scaffolding",
    "is_specific", "mentioned_paths", "norm_path", "one_line", "output_paths", "request_prose", "sentences", "short_error",
    "squash", "strip_markdown", "todo_items",
]
