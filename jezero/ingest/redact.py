"""The built-in redactor: takes secrets out of every transcript text before it is hashed,
summarised by an LLM provider, or stored (registered as "builtin").

What it does
------------
Each secret is replaced by a marker naming its kind, never its value, e.g.
`GITHUB_TOKEN=[REDACTED:github-token]` or `postgres://app:[REDACTED:password]@db:5432/app`. The text
around it (variable name, user, host, the rest of the line) stays, so a transcript remains readable
and searchable. A marker is never matched again, and redacting twice gives the same text as
redacting once (by construction: see `redact`).

Two kinds of rules:

1. `TOKEN_RULES`, one table of (kind, shape): secrets recognisable by their own shape (a documented
   prefix and length), found anywhere. Each row cites where its shape comes from. Cloud keys (AWS
   key ids, GCP API keys and OAuth secrets, Azure storage/Service Bus keys and SAS signatures),
   GitHub, GitLab, Slack tokens and webhooks, Stripe, OpenAI, Anthropic and other `sk-` keys, npm,
   PyPI, Hugging Face, Jezero's own `jz_` keys, JWTs, and private-key blocks (PEM, OpenSSH, PGP;
   multi-line, or inside a JSON string such as a GCP service-account file).
2. Context rules, for secrets that look like any other string and are known by what surrounds
   them: Azure client secrets (`...Q~...`), `scheme://user:password@host` (user and host stay),
   `Authorization: Bearer ...` / `Basic ...`, `curl -u user:password`, and `NAME=value`,
   `NAME: value`, `"name": "value"`, `name = "value"`, `name => 'value'`, `--name value` where NAME
   ends in a secret word: password, passwd, pwd, pass, passphrase, secret, token, auth,
   authorization, credential(s), creds, or api/access/private/secret/signing/encryption/master/
   account/subscription/auth key, in any case and with any separator (`DB_PASSWORD`,
   `clientSecret`, `x-api-key`, `export AWS_SECRET_ACCESS_KEY=...`, `.env` lines). `TOKEN_COUNT`
   and `max_tokens` are not secret names: the secret word must end the name. The kind is
   `password` for password-like names, `aws-secret-access-key` for that name, else `secret`.

   A value after a secret name is left alone when it is plainly not a secret (a documented choice;
   each costs a little recall for a readable transcript):
   - shorter than 6 characters (`true`, `false`, `none`, `1234`): a 5-character password leaks;
   - a reference or placeholder: empty, `${VAR}`, `$VAR`, `$(cmd)`, `%VAR%`, `{{ var }}`,
     `<placeholder>`, `your-api-key-here`, `test-key`, `xxxxxxxx`, `********`, values containing
     `example`, `placeholder`, `changeme` or `redacted`, and words such as `string`, `required`,
     `bearer`, `include`;
   - code rather than a literal, when unquoted: a call or subscript (`getpass()`, `os.environ["X"]`),
     a dotted name (`settings.SECRET_KEY`, `process.env.TOKEN`), a variable named like a secret
     without digits (`api_key`, `hashedPassword`), a type or camelCase name without digits
     (`SecretStr`, `Optional`, `isEnabled`);
   - a path (`/run/secrets/db`, `~/.ssh/id_rsa`) or a URL (URL passwords have their own rule);
   - a quoted value of three or more words (a message, not a secret), except after `passphrase`.
   Not covered: `.netrc` lines, XML elements, unlabelled high-entropy strings (entropy rules flag
   every git sha and base64 blob in a transcript).

Why a hand-written table and not a library
------------------------------------------
The issue asked to prefer a well-kept library of secret patterns if one fits. None does. Measured
with benchmarks/redact/bench.py (CPU time, 300 KB of transcript-like text without secrets):

- detect-secrets 1.5.0 (Yelp; last release May 2024): 0.06-0.1 MB/s with its default plugins,
  whose entropy rules made 21,000 findings in that clean text (every git sha, UUID, base64 blob),
  and 0.6-0.7 MB/s with the regex plugins only: 30 to 300 times under the 20 MB/s target. It scans
  line by line and reports a value and a line number, not a position, so replacing means searching
  for the value again, and the value is not always the secret: for GitHub and GitLab tokens it
  reports "ghp" and "glpat" (the prefix only), for a JWT it drops the signature, for a private key
  the BEGIN line alone. No Anthropic, Google API key or OpenAI `sk-proj-` pattern; it depends on
  `requests` for verification calls. bc-detect-secrets 1.5.52 (Bridgecrew's maintained fork): same
  API, speed and gaps.
- microsoft-security-utilities-secret-masker 1.0.0b4 (beta, March 2025): positions and masking,
  but 0.9 MB/s, and its rules are Azure-centred: no AWS, GitHub, Slack, Stripe, OpenAI, Anthropic
  or private-key rules.
- trufflehog3 3.0.10 (May 2024) is a file and git scanner (GitPython, Jinja2) with 30 rules and no
  string API; gitleaks-py 0.3.1 (2022) is unmaintained; ggshield sends the text to GitGuardian's
  API, the very thing redaction must prevent.

So the shapes are written here, each from the provider's documented token format and cross-checked
against the gitleaks rule set (MIT; the most complete public catalogue; rule ids cited). No
dependency is added.

How it stays fast (35-55 MB/s of CPU time on text without secrets, 5 MB, on the 2-core machine
this was written on; the target is 20 MB/s)
--------------------------------------------------------------------------------------------
- Python's `re` searches fast (0.6-3 GB/s) only for a regex that starts with a literal; a leading
  `\b`, look-behind, character class or case-insensitive alternation drops that to 6-100 MB/s. So
  every regex here starts with a literal: word boundaries are look-behinds placed after the prefix
  (`Shape`), and table rows that start alike are searched as one regex per leading literal.
- Matching runs on an ASCII projection of the text, one byte per character (non-ASCII becomes
  "?"), so positions agree with the text, and its `.lower()` makes the NAME=value search
  case-insensitive with one literal regex per secret word.
- All rules report spans on the same text in one round; overlapping spans merge. Only the lines
  around new markers are redacted again to check that nothing more appears.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jezero.hookspecs import hookimpl

MARKER_PREFIX = "[REDACTED:"


def marker(kind: str) -> str:
    return f"{MARKER_PREFIX}{kind}]"


# All matching runs on an ASCII projection of the text: `text.encode("ascii", "replace")` turns
# each non-ASCII character into one "?", so positions in the projection are positions in the text,
# and `.lower()` of it (bytes: ASCII only, same length) allows a case-insensitive search with
# literal regexes. Every pattern is ASCII: no secret format uses other characters.
def _rx(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode("ascii"))


_WORD = "A-Za-z0-9_"
_END = f"(?![{_WORD}-])"  # the token does not go on


@dataclass(frozen=True)
class Shape:
    """A regex written as literal prefixes and a body: `prefix body`, for any of the prefixes.
    With `boundary`, a prefix must not follow a letter, digit or underscore (a look-behind placed
    after the prefix, so the regex still starts with a literal and `re` searches for it fast)."""

    prefixes: tuple[str, ...]
    body: str
    boundary: bool = True

    def regex(self, strip: int = 0, name: str = "") -> str:
        """The regex text, less the first `strip` characters of every prefix, with the body's
        group names prefixed by `name`."""
        alternatives = "|".join(
            re.escape(p[strip:]) + (f"(?<![{_WORD}]{re.escape(p)})" if self.boundary else "")
            for p in self.prefixes)
        body = self.body.replace("(?P<", f"(?P<{name}").replace("(?P=", f"(?P={name}")
        return f"(?:{alternatives}){body}"


def _after(prefixes: list[str], body: str) -> Shape:
    return Shape(tuple(prefixes), body, True)


def _at(prefix: str, body: str) -> Shape:
    return Shape((prefix,), body, False)


# (kind, shape), matched on the case-preserving projection. Where a shape has a group named
# `secret`, only that group is replaced. Rows whose prefixes start alike are searched together, in
# one regex per leading literal (_compile_token_rules). Order is priority: where two rules find
# overlapping text, the marker takes the kind of the one listed first (sk-ant- before the other
# sk- keys, and every row here before the context rules below; see _Spans).
TOKEN_RULES: tuple[tuple[str, Shape], ...] = (
    # PEM / OpenSSH / PGP private keys (RFC 7468 "-----BEGIN <label>-----"; RSA, EC, DSA, OPENSSH,
    # ENCRYPTED, PKCS#8 "PRIVATE KEY", RFC 4880 "PGP PRIVATE KEY BLOCK"), multi-line or with escaped
    # newlines inside a JSON string (GCP service-account files: "private_key": "-----BEGIN...").
    # Without an END line (output cut short), the header and the base64 lines after it go. The
    # body cannot hold "-----", so each BEGIN looks no further than the next dashes (linear time).
    ("private-key", _at(
        "-----BEGIN ",
        r"(?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:[^-]|-(?!----)){0,65536}+-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\s|\\[rn])+[A-Za-z-]+: [^\n\\]*)*(?:(?:\s|\\[rn])+[A-Za-z0-9+/=]{16,})*)")),
    # JWT (RFC 7519): base64url header and payload, both JSON objects, so both start "ey"
    # ('{"' encodes as eyJ); the signature may be empty (alg "none"). gitleaks: jwt.
    ("jwt", _after(["eyJ"], r"[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*")),
    # AWS access key ids: 20 upper-case characters with a 4-letter type prefix (AKIA long-term,
    # ASIA temporary STS, ABIA, ACCA); AWS IAM User Guide, "Unique identifiers". gitleaks:
    # aws-access-token. (Secret access keys have no shape of their own: see the NAME=value rule.)
    ("aws-access-key-id", _after(["AKIA", "ASIA", "ABIA", "ACCA"], r"[A-Z0-9]{16}" + _END)),
    # Google API keys: "AIza" + 35 characters, 39 in all (Google Cloud "Manage API keys"; gitleaks:
    # gcp-api-key). OAuth client secrets "GOCSPX-" + 28 (Google Identity, 2021 format) and OAuth
    # access tokens "ya29." (Google OAuth 2.0 docs). Service-account private keys: private-key above.
    ("gcp-api-key", _after(["AIza"], r"[0-9A-Za-z_-]{35}" + _END)),
    ("gcp-oauth-client-secret", _after(["GOCSPX-"], r"[A-Za-z0-9_-]{28}" + _END)),
    ("google-oauth-token", _after(["ya29."], r"[A-Za-z0-9_-]{20,}")),
    # Azure storage account keys in connection strings (88 base64 characters after "AccountKey=",
    # Azure Storage "Configure a connection string"), Service Bus / Event Hubs "SharedAccessKey=",
    # and SAS signatures "?sig=" / "&sig=" in URLs (Azure Storage "Grant limited access with SAS").
    # The names and the rest of the connection string stay.
    ("azure-storage-key", _at("AccountKey=", r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})")),
    ("azure-shared-access-key", _at("SharedAccessKey=", r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})")),
    ("azure-sas-signature", _at("sig=", r"(?<=[?&]sig=)(?P<secret>[A-Za-z0-9%+/]{20,}(?:=|%3[Dd]){0,2})")),
    # GitHub: ghp_ (personal), gho_ (OAuth), ghu_ (user-to-server), ghs_ (server-to-server),
    # ghr_ (refresh) + 36 base62 characters; fine-grained PATs "github_pat_" + 82 characters
    # (GitHub docs "About authentication to GitHub"; GitHub blog "Behind GitHub's new
    # authentication token formats", 2021). gitleaks: github-pat, github-fine-grained-pat, ...
    ("github-token", _after(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], r"[A-Za-z0-9]{30,251}" + _END)),
    ("github-token", _after(["github_pat_"], r"[A-Za-z0-9_]{22,244}" + _END)),
    # GitLab token prefixes (GitLab docs "GitLab token overview: token prefixes"): glpat- personal,
    # gldt- deploy, glft- feed, glrt- runner, glptt- pipeline trigger, glcbt- CI job, glimt- incoming
    # mail, glagent- agent, gloas- OAuth app secret, glsoat- SCIM, glffct- feature flags; routable
    # tokens end in ".<9 characters>". "GR1348941" starts runner registration tokens. gitleaks: gitlab-*.
    ("gitlab-token", _after(
        ["glpat-", "gldt-", "glft-", "glrt-", "glptt-", "glcbt-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-"],
        r"[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{9})?" + _END)),
    ("gitlab-token", _after(["GR1348941"], r"[A-Za-z0-9_-]{20,}" + _END)),
    # Slack tokens (Slack API docs "Token types"): xoxb- bot, xoxp- user, xoxa-/xoxr- app and
    # refresh, xoxs-/xoxo- legacy, xoxe- rotating, xapp- app-level. gitleaks: slack-*-token.
    ("slack-token", _after(
        ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xoxe.xoxb-", "xoxe.xoxp-", "xapp-"],
        r"[A-Za-z0-9-]{10,}")),
    # Slack incoming webhooks https://hooks.slack.com/services/T.../B.../<secret> (Slack docs
    # "Sending messages using incoming webhooks"); workflow and trigger URLs alike. The host stays.
    ("slack-webhook", _at("hooks.slack.com/", r"(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,})")),
    # Stripe secret and restricted keys, live and test (Stripe docs "API keys": sk_live_, rk_live_,
    # sk_test_, rk_test_), and webhook signing secrets whsec_. Publishable pk_ keys are public.
    ("stripe-key", _after(["sk_"], r"(?:live|test)_[A-Za-z0-9]{10,247}" + _END)),
    ("stripe-key", _after(["rk_"], r"(?:live|test)_[A-Za-z0-9]{10,247}" + _END)),
    ("stripe-webhook-secret", _after(["whsec_"], r"[A-Za-z0-9+/=]{24,}")),
    # Anthropic: sk-ant-api03- (API), sk-ant-admin01- (admin), sk-ant-oat01-/sk-ant-ort01- (OAuth).
    # gitleaks: anthropic-api-key, anthropic-admin-api-key.
    ("anthropic-key", _after(["sk-ant-"], r"[A-Za-z0-9_-]{20,}")),
    # OpenAI: project, service-account and admin keys (sk-proj-, sk-svcacct-, sk-admin-), keys that
    # contain "T3BlbkFJ" (base64 of "OpenAI"), and the legacy sk- + 48 characters. gitleaks:
    # openai-api-key.
    ("openai-key", _after(
        ["sk-"],
        r"(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9_-]{8,}T3BlbkFJ[A-Za-z0-9_-]{8,}"
        r"|[A-Za-z0-9]{48}" + _END + ")")),
    # Other "sk-" keys (OpenAI-compatible providers: OpenRouter sk-or-v1-, DeepSeek, Moonshot...):
    # at least 24 characters with a digit, so words such as "sk-learn-..." stay.
    ("api-key", _after(["sk-"], r"(?=[A-Za-z_-]{0,80}[0-9])[A-Za-z0-9_-]{24,}")),
    # Registry and platform tokens with a documented prefix: npm "npm_" + 36 (npm docs "About access
    # tokens"), PyPI "pypi-AgEIcHlwaS5vcmc" macaroons (PyPI help "API tokens"), Hugging Face "hf_"
    # (Hub docs "User access tokens"), and Jezero's own client keys, "jz_" + token_urlsafe(32)
    # (jezero/server/auth.py).
    ("npm-token", _after(["npm_"], r"[A-Za-z0-9]{36}" + _END)),
    ("pypi-token", _after(["pypi-AgEIcHlwaS5vcmc"], r"[A-Za-z0-9_-]{50,}")),
    ("huggingface-token", _after(["hf_"], r"[A-Za-z0-9]{34,40}" + _END)),
    ("jezero-key", _after(["jz_"], r"[A-Za-z0-9_-]{43}" + _END)),
)

# ---- context rules: secrets known by what surrounds them -----------------------------------------

# Azure AD / Entra client secrets: 3 characters, a digit, "Q~", then 31-34 characters (the format
# of secrets made since 2022; Microsoft Purview "Azure AD client secret" definition; gitleaks:
# azure-ad-client-secret). The regex starts at the literal "Q~" (for speed) and checks the 4
# characters before it with look-behinds; the replaced span starts 4 characters before the match.
_AZURE_CLIENT_SECRET = _rx(
    r"Q~(?<=[A-Za-z0-9_~.]{3}[0-9]Q~)(?<![A-Za-z0-9_~.-][A-Za-z0-9_~.]{3}[0-9]Q~)"
    r"[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])")
# scheme://user:password@host (RFC 3986 userinfo): user and host stay.
_URL_PASSWORD = _rx(r"""://(?P<user>[^\s:@/?#\[\]"'<>\\]*):(?P<secret>[^\s@/?#"'<>\\]+)@""")
# curl/wget/httpie -u user:password, --user user:password: the user stays.
_USER_FLAG = _rx(
    r"""-(?:u(?<!\S-u)|-user(?<!\S--user))(?:[ \t]+|=)\\?["']?(?P<user>[^\s:"'@/\\\[\]]+):(?P<secret>[^\s"'\\]+)""")
# Over the lower-cased projection: Bearer <token> (RFC 6750) anywhere, and Authorization: Basic
# <base64 of user:password> (RFC 7617) or Token <token> (Django REST framework, GitHub's classic form).
_BEARER = _rx(r"bearer[ \t]+(?P<secret>[a-z0-9._~+/-]{16,}=*)")
_AUTHORIZATION = _rx(r"""authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<scheme>basic|token)[ \t]+"""
                     r"(?P<secret>[a-z0-9._~+/-]{8,}={0,2})(?![a-z0-9._~+/=-])")

# NAME <sep> value, where NAME ends in a secret word. One regex per secret word (each starts with
# its literal, so each is one fast search of the lower-cased projection) finds the word followed by a
# separator, or after a "-" (--password value) by a space; _KV is then matched there, and the rest
# of the name is read backwards (_kv_name) and judged (_kv_kind).
_KV_WORDS = {"pass": ("word", "wd", "phrase", ""), "pwd": ("",), "secret": ("",), "token": ("",), "key": ("",),
             "cred": ("s", "entials", "ential", ""), "auth": ("orization", "")}
_KV_SEP = r"""(?=\\*["']?[ \t]*(?::=|=>|[:=]))"""


def _kv_candidate(lead: str, rests: tuple[str, ...]) -> re.Pattern[bytes]:
    word = lead + "(?:" + "|".join(rests) + ")"
    after_dash = "|".join(f"(?<=-{lead}{rest})" for rest in rests)
    return _rx(f"{word}(?:{_KV_SEP}|(?:{after_dash})[ \t])")


_KV_CANDIDATES = tuple(_kv_candidate(lead, rests) for lead, rests in _KV_WORDS.items()) + (
    _rx(r"key(?:(?<=access_key)|(?<=access-key)|(?<=accesskey))[ \t]"),  # aws configure set ... KEY VALUE
)
_KV = _rx(
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|key|cred(?:s|entials?)?|auth(?:orization)?)"
    r"""(?P<q>\\*["']?)(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)"""
    r"""(?:(?P<dq>\\*")(?P<dquoted>[^\n"]{0,4096}?)(?P=dq)|(?P<sq>\\*')(?P<squoted>[^\n']{0,4096}?)(?P=sq)"""
    r"""|(?P<bare>[^\s"'`\\&;,]+))""")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_PASSWORD_SUFFIXES = ("password", "passwd", "passphrase", "pass", "pwd")
_SECRET_SUFFIXES = _PASSWORD_SUFFIXES + (
    "secret", "token", "auth", "authorization", "credential", "credentials", "creds",
    "apikey", "accesskey", "privatekey", "secretkey", "signingkey", "encryptionkey", "masterkey",
    "accountkey", "subscriptionkey", "authkey", "secretkeybase",
)
# "pass" ends a secret name only as a word of its own (DB_PASS, dbPass, pass), not in "bypass".
_PASS_WORD = re.compile(r"(?:^|[-_.])(?:pass|Pass|PASS)$|[a-z0-9]Pass$|[A-Z0-9]PASS$", re.ASCII)
_NOT_SECRETS = frozenset((
    "str", "string", "bytes", "int", "integer", "number", "bool", "boolean", "any", "unknown",
    "object", "optional", "none", "null", "nil", "true", "false", "yes", "no", "on", "off",
    "undefined", "required", "secret", "secrets", "password", "token", "redacted", "hidden",
    "masked", "bearer", "basic", "digest", "empty", "default", "inherit", "include", "omit",
    "same-origin", "invalid", "missing", "unset", "not set", "notset", "stdin",
))
_PLACEHOLDER = re.compile(
    r"^(?:[$%<{\[(*]|(?:your|my|enter|insert|test|dummy|fake|mock|sample|demo)(?:[-_ ]|$))|[-_ ]here$"
    r"|example|placeholder|changeme|redacted|^(.)\1*$", re.ASCII | re.IGNORECASE)
_CODE = re.compile(
    r"[()\[\]{}]"  # a call, subscript or literal: getpass(), os.environ["X"], Field(...)
    r"|^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$"  # a dotted name: settings.SECRET_KEY, process.env.X
    r"|^[A-Z][a-z]+$|^[A-Za-z_]*[a-z][A-Z][A-Za-z_]*$",  # no digits: Optional, SecretStr, isLiteLLM
    re.ASCII)
_IDENT = re.compile(r"^[A-Za-z_]+$", re.ASCII)
_SECRET_WORD_ANY = re.compile(r"pass|pwd|secret|token|key|cred|auth", re.ASCII | re.IGNORECASE)
_CAMEL = re.compile(r"[a-z][A-Z]", re.ASCII)
_BARE_TAIL = ".)]}>!"
_AUTH_SCHEME = re.compile(r"(?:Bearer|bearer|Basic|basic|Token|token|Digest)[ \t]+", re.ASCII)


def _is_placeholder(value: str) -> bool:
    return (len(value) < 6 or value.lower() in _NOT_SECRETS or _PLACEHOLDER.search(value) is not None
            or MARKER_PREFIX in value)


def _is_code(value: str) -> bool:
    """An unquoted value that is code: a call, subscript, dotted name, type name, or a variable
    named like a secret (`api_key`, `API_KEY`, `hashedPassword`; but `mysecretpassword`, one
    lower-case word, and `Str0ngPassw0rd`, with digits, are values)."""
    if _CODE.search(value):
        return True
    return bool(_IDENT.match(value) and _SECRET_WORD_ANY.search(value)
                and ("_" in value or _CAMEL.search(value)))


def _is_path_or_url(value: str) -> bool:
    return value.startswith(("/", "~/", "./", "../")) or "://" in value[:16]


def _kv_name(text: str, start: int, word_end: int) -> tuple[str, int]:
    """The whole name whose last word is text[start:word_end], read backwards, and where it starts."""
    i = start
    floor = max(0, start - 80)
    while i > floor and text[i - 1] in _NAME_CHARS:
        i -= 1
    return text[i:word_end], i


def _kv_value(m: re.Match[bytes], text: str) -> tuple[str, int, int, bool]:
    """(value, start, end, quoted) of a NAME <sep> value match, the value read from the text."""
    for group in ("dquoted", "squoted"):
        if m.group(group) is not None:
            start, end = m.span(group)
            scheme = _AUTH_SCHEME.match(text, start, end)  # "Bearer abc": the scheme stays
            if scheme:
                start = scheme.end()
            return text[start:end], start, end, True
    start, end = m.span("bare")
    value = text[start:end].rstrip(_BARE_TAIL)
    return value, start, start + len(value), False


def _kv_kind(m: re.Match[bytes], text: str, value: str, quoted: bool) -> str | None:
    """The marker kind for a NAME <sep> value match, or None to leave it."""
    name, name_start = _kv_name(text, m.start(), m.start("q"))
    normal = name.lower().replace("_", "").replace("-", "").replace(".", "")
    if not normal.endswith(_SECRET_SUFFIXES):
        return None
    if text.endswith("://", 0, name_start):
        return None  # https://x-access-token:...@host: the user of a URL (its password has a rule)
    if normal.endswith("pass") and not _PASS_WORD.search(name):
        return None  # bypass, compass
    aws = normal.endswith("secretaccesskey")
    if not m.group("sep").strip() and not (name.startswith("-") or aws):
        return None  # "password for ...": prose; only --flags take their value after a space
    if quoted:
        if len(value.split()) >= 3 and not normal.endswith("passphrase"):
            return None  # a message, not a secret
    elif _is_code(value):
        return None
    if _is_placeholder(value) or _is_path_or_url(value):
        return None
    if aws:
        return "aws-secret-access-key"
    return "password" if normal.endswith(_PASSWORD_SUFFIXES) else "secret"


Span = tuple[int, int, str]
Scan = Callable[[str, bytes, bytes], Iterator[Span]]


def _compile_token_rules() -> list[tuple[re.Pattern[bytes], list[tuple[int, str, bool]]]]:
    """TOKEN_RULES as a few regexes: rows whose prefixes share their leading literal (one
    character, or two when it is a lower-case letter, which is frequent in text) become the
    alternatives of one regex that starts with that literal, so each group costs one fast search.
    Returns (regex, [(rule index, kind, has a secret group)]) in the order of the table."""
    groups: dict[str, list[int]] = {}
    for i, (_, shape) in enumerate(TOKEN_RULES):
        lead = os.path.commonprefix(list(shape.prefixes))
        groups.setdefault(lead[:2] if lead[0].islower() else lead[:1], []).append(i)
    compiled = []
    for members in groups.values():
        common = os.path.commonprefix([p for i in members for p in TOKEN_RULES[i][1].prefixes])
        alternatives = "|".join(
            f"(?P<r{i}>{TOKEN_RULES[i][1].regex(len(common), f'r{i}_')})" for i in members)
        rx = _rx(re.escape(common) + f"(?:{alternatives})")
        compiled.append((rx, [(i, TOKEN_RULES[i][0], f"r{i}_secret" in rx.groupindex) for i in members]))
    return compiled


_TOKEN_SCANS = _compile_token_rules()


def _scan_tokens(text: str, ab: bytes, low: bytes) -> Iterator[tuple[int, int, int, str]]:
    for rx, members in _TOKEN_SCANS:
        for m in rx.finditer(ab):
            for i, kind, has_secret in members:
                if m.start(f"r{i}") != -1:
                    start, end = m.span(f"r{i}_secret") if has_secret else m.span()
                    yield start, end, i, kind
                    break


def _scan_kv(text: str, ab: bytes, low: bytes) -> Iterator[Span]:
    starts = sorted({m.start() for rx in _KV_CANDIDATES for m in rx.finditer(low)})
    for i in starts:
        m = _KV.match(low, i)
        if m is None:
            continue
        value, start, end, quoted = _kv_value(m, text)
        kind = _kv_kind(m, text, value, quoted)
        if kind is not None:
            yield start, end, kind


def _scan(rx: re.Pattern[bytes], kind: Callable[[re.Match[bytes], str], str | None],
          lower: bool = False, back: int = 0) -> Scan:
    """A scan for one context regex: every match that `kind` names is replaced (its `secret` group
    if it has one, else all of it, extended `back` characters to the left)."""
    has_secret = "secret" in rx.groupindex

    def scan(text: str, ab: bytes, low: bytes) -> Iterator[Span]:
        buf = low if lower else ab
        m = rx.search(buf)
        while m is not None:
            name = kind(m, text)
            if name is None:
                m = rx.search(buf, m.start() + 1)  # retry just after: a refused match hides no other
                continue
            start, end = m.span("secret") if has_secret else (m.start() - back, m.end())
            yield start, end, name
            m = rx.search(buf, max(m.end(), m.start() + 1))

    return scan


def _fixed(kind: str) -> Callable[[re.Match[bytes], str], str]:
    return lambda m, text: kind


def _url_kind(m: re.Match[bytes], text: str) -> str | None:
    secret = text[m.start("secret"):m.end("secret")]
    if secret.isdigit() and len(secret) <= 5:
        return None  # host:port
    if secret.lower() in ("password", "pass", "pwd", "secret", "token") or _PLACEHOLDER.search(secret) \
            or MARKER_PREFIX in secret:
        return None
    return "password"


def _user_flag_kind(m: re.Match[bytes], text: str) -> str | None:
    secret = text[m.start("secret"):m.end("secret")]
    if secret.isdigit() or _PLACEHOLDER.search(secret) or MARKER_PREFIX in secret:
        return None  # -u 1000:1000 (uid:gid), -u user:$PASSWORD
    return "password"


def _bearer_kind(m: re.Match[bytes], text: str) -> str | None:
    secret = m.group("secret")
    return "bearer-token" if len(secret) >= 32 or any(48 <= c <= 57 for c in secret) else None


def _authorization_kind(m: re.Match[bytes], text: str) -> str:
    return "basic-auth" if m.group("scheme") == b"basic" else "secret"


# The context scans, after the token rules, in priority order.
_CONTEXT_SCANS: tuple[Scan, ...] = (
    _scan(_AZURE_CLIENT_SECRET, _fixed("azure-client-secret"), back=4),
    _scan(_URL_PASSWORD, _url_kind),
    _scan(_USER_FLAG, _user_flag_kind),
    _scan(_BEARER, _bearer_kind, lower=True),
    _scan(_AUTHORIZATION, _authorization_kind, lower=True),
    _scan_kv,
)


class _Spans:
    """Found secrets as sorted, disjoint (start, end, priority, kind); a lower priority number is a
    more specific rule, and -1 a marker already in the text. A new find that overlaps others is
    merged with them, keeping the kind of the most specific, so no part of an overlapping find is
    left showing; except that a less specific find that only wraps more specific ones is dropped
    (`Bearer [REDACTED:jwt]` keeps its "Bearer" and `session=[REDACTED:jwt]` its "session=" where
    a NAME=value rule saw the whole), and a find that would cut into a marker is dropped."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.items: list[tuple[int, int, int, str]] = []

    def add(self, start: int, end: int, priority: int, kind: str) -> None:
        if end <= start:
            return
        k = bisect.bisect_right(self.starts, start)
        if k > 0 and self.items[k - 1][1] > start:
            k -= 1
        j = k
        while j < len(self.items) and self.items[j][0] < end:
            j += 1
        overlapped = self.items[k:j]
        if any(p < 0 and not (start <= s and e <= end) for s, e, p, _ in overlapped):
            return  # would cut into a marker that was in the text
        found = [(s, e, p) for s, e, p, _ in overlapped if p >= 0]
        if found and all(p < priority and start <= s and e <= end for s, e, p in found):
            return  # only wraps more specific finds
        for s, e, p, kd in overlapped:
            start, end = min(start, s), max(end, e)
            if 0 <= p < priority:
                priority, kind = p, kd
        self.starts[k:j] = [start]
        self.items[k:j] = [(start, end, priority, kind)]


_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def _one_round(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Every rule over `text`: the redacted text, and where its new markers are."""
    ab = text.encode("ascii", "replace")  # one byte per character: positions agree with text
    low = ab.lower()
    spans = _Spans()
    if MARKER_PREFIX in text:  # a find must not cut into a marker already there
        for m in _MARKER.finditer(text):
            spans.add(m.start(), m.end(), -1, "")
    for start, end, priority, kind in _scan_tokens(text, ab, low):
        spans.add(start, end, priority, kind)
    for n, scan in enumerate(_CONTEXT_SCANS, start=len(TOKEN_RULES)):
        for start, end, kind in scan(text, ab, low):
            spans.add(start, end, n, kind)
    if all(priority < 0 for _, _, priority, _ in spans.items):
        return text, []
    out: list[str] = []
    markers: list[tuple[int, int]] = []
    last = 0
    size = 0
    for start, end, priority, kind in spans.items:
        if priority < 0:
            continue  # a marker that was there, untouched
        piece = text[last:start]
        out.append(piece)
        size += len(piece)
        mark = marker(kind)
        out.append(mark)
        markers.append((size, size + len(mark)))
        size += len(mark)
        last = end
    out.append(text[last:])
    return "".join(out), markers


def _lines_around(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The whole lines that hold the spans, merged where they touch."""
    regions: list[tuple[int, int]] = []
    for start, end in spans:  # sorted, so each search stops where the last region ends: linear
        floor = regions[-1][1] if regions else 0
        if regions and end <= floor:
            continue  # on a line already taken
        line_start = text.rfind("\n", floor, start) + 1 if start > floor else floor
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        if regions and line_start <= floor + 1:
            regions[-1] = (regions[-1][0], line_end)
        else:
            regions.append((line_start, line_end))
    return regions


def redact(text: str) -> str:
    """`text` with every secret the rules recognise replaced by `[REDACTED:<kind>]`.

    Idempotent by construction: after the first round, the lines around each new marker are
    redacted again until nothing changes (every rule looks no further than the line it matches on,
    except private-key blocks, which become a single marker). The first round almost always finds
    everything, so the check costs a few lines, not a second pass over the text."""
    if not text:
        return text
    text, markers = _one_round(text)
    for _ in range(8):
        if not markers:
            break
        out: list[str] = []
        changed: list[tuple[int, int]] = []
        last = 0
        size = 0
        for start, end in _lines_around(text, markers):
            out.append(text[last:start])
            size += start - last
            region, found = _one_round(text[start:end])
            if found:
                changed.append((size, size + len(region)))
            out.append(region)
            size += len(region)
            last = end
        if not changed:
            break
        out.append(text[last:])
        text = "".join(out)
        markers = changed
    return text


@hookimpl
def register_redactors(register):
    register("builtin", redact)
