"""The built-in redactor (jezero/ingest/redact.py): every kind of secret it covers, what it must
leave alone, idempotence, and the plugin host.

Every secret below is made up. Token-shaped values are assembled from a prefix and a body at run
time, so this file holds no string that a secret scanner would take for a real token."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jezero import plugins
from jezero.ingest.redact import redact


def fake(prefix: str, body: str) -> str:
    return prefix + body


B62 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"  # 40 made-up base62 characters
AWS_ID = fake("AKIA", "Q3EGTQ7ZKDWXR4HN")
AWS_SECRET = "Hf8kL2mN9pQr4sT7uVw1xYz3AbCdEfGhIjKlMnOp"
GITHUB = fake("ghp_", B62[:36])
OPENAI = fake("sk-proj-", "4fQ9x2LmN8pRt6VwYz1AbC3dEfGh5IjK7lMnO9pQrStUv")
ANTHROPIC = fake("sk-ant-", "api03-Xy7_fAkEkEyFoRtEsTiNgOnLy-0123456789abcdefABCDEFghijklmnopqrstuvwxyz")
JWT = fake("eyJ", "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9") + "." + fake("eyJ", "zdWIiOiJqZXplcm8tdGVzdCIsImlhdCI6MTcwMDAwMDAwMH0") \
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
AZURE_ACCOUNT_KEY = "Zm9vYmFyYmF6cXV4" * 5 + "Zm9vYmFyYmF6cXV4Zm9vYmE=="  # 88 characters
AZURE_CLIENT_SECRET = fake("abc8Q", "~Zx1Yw2Vu3Ts4Rq5Po6Nm7Lk8Ji9Hg0FeDc")
PEM_BODY = (
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
)


def pem(label: str, body: str = PEM_BODY) -> str:
    return f"-----BEGIN {label}-----\n{body}-----END {label}-----"


# (kind, text, the secret, context that must stay)
POSITIVES = [
    # cloud keys
    ("aws-access-key-id", f"AWS_ACCESS_KEY_ID={AWS_ID}", AWS_ID, ["AWS_ACCESS_KEY_ID="]),
    ("aws-access-key-id", f'{{"AccessKeyId": "{fake("ASIA", "Y34FZKBOKMUTVV7A")}", "Expiration": "2025-09-01"}}',
     fake("ASIA", "Y34FZKBOKMUTVV7A"), ['"AccessKeyId": "', '"Expiration"']),
    ("aws-secret-access-key", f"aws_secret_access_key = {AWS_SECRET}\nregion = eu-west-1", AWS_SECRET,
     ["aws_secret_access_key = ", "region = eu-west-1"]),
    ("aws-secret-access-key", f'{{"SecretAccessKey": "{AWS_SECRET}"}}', AWS_SECRET, ['"SecretAccessKey": "']),
    ("aws-secret-access-key", f"$ aws configure set aws_secret_access_key {AWS_SECRET} --profile dev", AWS_SECRET,
     ["aws configure set aws_secret_access_key ", "--profile dev"]),
    ("gcp-api-key", f"GET https://maps.googleapis.com/maps/api/geocode/json?address=Oslo&key={fake('AIza', 'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY')} 200",
     fake("AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"), ["https://maps.googleapis.com/maps/api/geocode/json?address=Oslo&key=", " 200"]),
    ("gcp-oauth-client-secret", f"client_secret: {fake('GOCSPX-', 'Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9S')}",
     fake("GOCSPX-", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9S"), ["client_secret: "]),
    ("google-oauth-token", f"access_token={fake('ya29.', 'a0AfH6SMBx1y2z3-Qw4Er5Ty6Ui7Op8')}&expires_in=3599",
     fake("ya29.", "a0AfH6SMBx1y2z3-Qw4Er5Ty6Ui7Op8"), ["access_token=", "&expires_in=3599"]),
    ("azure-storage-key",
     f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
     AZURE_ACCOUNT_KEY, ["AccountName=acmelogs;AccountKey=", ";EndpointSuffix=core.windows.net"]),
    ("azure-shared-access-key",
     f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={AZURE_ACCOUNT_KEY[:44]}",
     AZURE_ACCOUNT_KEY[:44], ["SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="]),
    ("azure-sas-signature",
     "https://acme.blob.core.windows.net/logs/a.txt?sv=2022-11-02&se=2025-01-01&sp=r&sig=Xk3vNq9Lm2Pr7Ts1Wy5Zb8Cd4Fg6Hj0Kl%3D",
     "Xk3vNq9Lm2Pr7Ts1Wy5Zb8Cd4Fg6Hj0Kl%3D", ["https://acme.blob.core.windows.net/logs/a.txt?sv=2022-11-02", "&sig="]),
    ("azure-client-secret", f"AZURE_CLIENT_SECRET={AZURE_CLIENT_SECRET}", AZURE_CLIENT_SECRET, ["AZURE_CLIENT_SECRET="]),
    ("secret", '{"tenantId": "acme", "clientSecret": "legacy-Secret-4f9a2b7c1d"}', "legacy-Secret-4f9a2b7c1d",
     ['"tenantId": "acme"', '"clientSecret": "']),
    # code hosts and chat
    ("github-token", f"export GITHUB_TOKEN={GITHUB}", GITHUB, ["export GITHUB_TOKEN="]),
    ("github-token", f"git remote add origin https://x-access-token:{fake('ghs_', B62[2:38])}@github.com/acme/app.git",
     fake("ghs_", B62[2:38]), ["https://x-access-token:", "@github.com/acme/app.git"]),
    ("github-token", f"token {fake('gho_', B62[1:37])} expires", fake("gho_", B62[1:37]), ["token ", " expires"]),
    ("github-token", f"GH={fake('ghu_', B62[3:39])}", fake("ghu_", B62[3:39]), ["GH="]),
    ("github-token", f"refresh: {fake('ghr_', B62[4:40])}", fake("ghr_", B62[4:40]), ["refresh: "]),
    ("github-token", f"gh auth login with {fake('github_pat_', '11ABCDEFG0' + B62[:12] + '_' + B62 + B62[:19])} now",
     fake("github_pat_", "11ABCDEFG0" + B62[:12] + "_" + B62 + B62[:19]), ["gh auth login with ", " now"]),
    ("gitlab-token", f"GITLAB_TOKEN={fake('glpat-', 'Ab3dE5gH7jK9mN1pQ3sT')}", fake("glpat-", "Ab3dE5gH7jK9mN1pQ3sT"),
     ["GITLAB_TOKEN="]),
    ("gitlab-token", f"deploy with {fake('gldt-', 'zX9yW8vU7tS6rQ5pO4nM')}", fake("gldt-", "zX9yW8vU7tS6rQ5pO4nM"), ["deploy with "]),
    ("gitlab-token", f"runner: {fake('glrt-', 't1_Ab3dE5gH7jK9mN1pQ3sTuV')}", fake("glrt-", "t1_Ab3dE5gH7jK9mN1pQ3sTuV"), ["runner: "]),
    ("gitlab-token", f"--registration-token {fake('GR1348941', 'aB3cD5eF7gH9iJ1kL3mN')}", fake("GR1348941", "aB3cD5eF7gH9iJ1kL3mN"),
     ["--registration-token "]),
    ("slack-token", f"SLACK_BOT_TOKEN={fake('xoxb-', '1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx')}",
     fake("xoxb-", "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"), ["SLACK_BOT_TOKEN="]),
    ("slack-token", f"user token {fake('xoxp-', '1234567890-1234567890-1234567890123-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d')}.",
     fake("xoxp-", "1234567890-1234567890-1234567890123-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"), ["user token "]),
    ("slack-token", f"{fake('xoxa-', '2-1234567890-abcdef1234')} {fake('xoxr-', '1234567890-abcdef1234')} {fake('xoxs-', '1234567890-abcdef1234')}",
     fake("xoxs-", "1234567890-abcdef1234"), []),
    ("slack-webhook", f"curl -X POST {fake('https://hooks.slack.com/services/', 'T01ABCDEF/B02GHIJKL/Xy7fAkEwEbHoOkS3cReT1234')} -d @msg.json",
     "T01ABCDEF/B02GHIJKL/Xy7fAkEwEbHoOkS3cReT1234", ["curl -X POST https://hooks.slack.com/services/", " -d @msg.json"]),
    # payment and model providers
    ("stripe-key", f"STRIPE_SECRET_KEY={fake('sk_live_', '51Hx2AbCdEfGhIjKlMnOpQrSt')}", fake("sk_live_", "51Hx2AbCdEfGhIjKlMnOpQrSt"),
     ["STRIPE_SECRET_KEY="]),
    ("stripe-key", f"stripe.api_key = '{fake('rk_live_', '51Hx2AbCdEfGhIjKlMnOpQrSt')}'", fake("rk_live_", "51Hx2AbCdEfGhIjKlMnOpQrSt"),
     ["stripe.api_key = '"]),
    ("stripe-key", f"test key {fake('sk_test_', '4eC39HqLyjWDarjtT1zdp7dc')} used", fake("sk_test_", "4eC39HqLyjWDarjtT1zdp7dc"),
     ["test key ", " used"]),
    ("stripe-webhook-secret", f"endpoint_secret = {fake('whsec_', 'AbCdEfGh1234IjKlMnOp5678QrStUv')}",
     fake("whsec_", "AbCdEfGh1234IjKlMnOp5678QrStUv"), ["endpoint_secret = "]),
    ("openai-key", f"OPENAI_API_KEY={OPENAI}", OPENAI, ["OPENAI_API_KEY="]),
    ("openai-key", f"key: {fake('sk-', 'AbCdEfGhIjKlMnOpQrSt' + 'T3BlbkFJ' + 'uVwXyZ0123456789AbCd')}",
     fake("sk-", "AbCdEfGhIjKlMnOpQrSt" + "T3BlbkFJ" + "uVwXyZ0123456789AbCd"), ["key: "]),
    ("openai-key", f"openai.api_key = {fake('sk-', B62 + B62[:8])}", fake("sk-", B62 + B62[:8]), ["openai.api_key = "]),
    ("api-key", f"OPENROUTER_API_KEY={fake('sk-or-v1-', '0123456789abcdef' * 4)}", fake("sk-or-v1-", "0123456789abcdef" * 4),
     ["OPENROUTER_API_KEY="]),
    ("anthropic-key", f'client = Anthropic(api_key="{ANTHROPIC}")', ANTHROPIC, ['client = Anthropic(api_key="', '")']),
    # registries and Jezero's own keys
    ("npm-token", f"//registry.npmjs.org/:_authToken={fake('npm_', B62[:36])}", fake("npm_", B62[:36]), ["//registry.npmjs.org/:_authToken="]),
    ("pypi-token", f"password = {fake('pypi-AgEIcHlwaS5vcmc', 'CJDk5ZjQ0YzYtMWE4Ny00ZjQ2LTg3YjQtMmU2ZDM3ZTZlNTAwAAIqWzMsImY0')}",
     fake("pypi-AgEIcHlwaS5vcmc", "CJDk5ZjQ0YzYtMWE4Ny00ZjQ2LTg3YjQtMmU2ZDM3ZTZlNTAwAAIqWzMsImY0"), ["password = "]),
    ("huggingface-token", f"HF_TOKEN={fake('hf_', 'AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh')}", fake("hf_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"), ["HF_TOKEN="]),
    ("jezero-key", f"JEZERO_KEY={fake('jz_', 'q1W2e3R4t5Y6u7I8o9P0a1S2d3F4g5H6j7K8l9Z0x1C')}",
     fake("jz_", "q1W2e3R4t5Y6u7I8o9P0a1S2d3F4g5H6j7K8l9Z0x1C"), ["JEZERO_KEY="]),
    # JWTs and private keys
    ("jwt", f"Cookie: session={JWT}; Path=/", JWT, ["Cookie: session=", "; Path=/"]),
    ("jwt", f'curl -H "Authorization: Bearer {JWT}" https://api.example.com/v1/me', JWT,
     ['curl -H "Authorization: Bearer ', '" https://api.example.com/v1/me']),
    ("private-key", f"$ cat ~/.ssh/id_rsa\n{pem('RSA PRIVATE KEY')}\n$ ls", PEM_BODY.splitlines()[1], ["$ cat ~/.ssh/id_rsa\n", "\n$ ls"]),
    ("private-key", f"key:\n{pem('OPENSSH PRIVATE KEY')}\ndone", PEM_BODY.splitlines()[0], ["key:\n", "\ndone"]),
    ("private-key", f"{pem('EC PRIVATE KEY')}", PEM_BODY.splitlines()[2], []),
    ("private-key", f"{pem('PRIVATE KEY')}", PEM_BODY.splitlines()[2], []),
    ("private-key", f"{pem('ENCRYPTED PRIVATE KEY')}", PEM_BODY.splitlines()[2], []),
    ("private-key", f"gpg --export-secret-keys -a\n{pem('PGP PRIVATE KEY BLOCK', 'Version: GnuPG v2' + chr(10) + chr(10) + PEM_BODY)}",
     PEM_BODY.splitlines()[1], ["gpg --export-secret-keys -a\n"]),
    ("private-key",
     '{"type": "service_account", "project_id": "acme-prod", "private_key_id": "0f1e2d3c", '
     '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\\n'
     'MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\\n-----END PRIVATE KEY-----\\n", '
     '"client_email": "ingest@acme-prod.iam.gserviceaccount.com"}',
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
     ['"private_key": "', '"client_email": "ingest@acme-prod.iam.gserviceaccount.com"']),
    ("private-key", f"head -3 key.pem\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}(output cut)",
     PEM_BODY.splitlines()[2], ["head -3 key.pem\n", "(output cut)"]),
    # passwords in URLs and headers
    ("password", "DATABASE_URL=postgres://app:S3cr3t-Passw0rd@db.internal:5432/app", "S3cr3t-Passw0rd",
     ["postgres://app:", "@db.internal:5432/app"]),
    ("password", "redis://:hunter2hunter2@cache:6379/0", "hunter2hunter2", ["redis://:", "@cache:6379/0"]),
    ("password", "git clone https://alice:pa55w0rd@git.example.com/team/repo.git", "pa55w0rd",
     ["https://alice:", "@git.example.com/team/repo.git"]),
    ("password", "curl -u admin:Tr0ub4dor3x https://ci.example.com/api/json", "Tr0ub4dor3x",
     ["curl -u admin:", " https://ci.example.com/api/json"]),
    ("bearer-token", 'fetch(url, {headers: {"Authorization": "Bearer 7f3c9a1e5b2d8f4a6c0e9b3d7a1f5c2e"}})',
     "7f3c9a1e5b2d8f4a6c0e9b3d7a1f5c2e", ['"Authorization": "Bearer ', '"}})']),
    ("basic-auth", "Authorization: Basic YWxpY2U6czNjcjN0LXBhc3N3b3Jk", "YWxpY2U6czNjcjN0LXBhc3N3b3Jk", ["Authorization: Basic "]),
    ("secret", "-H 'Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b'", "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
     ["-H 'Authorization: Token ", "'"]),
    # NAME=value lines where the name looks secret
    ("password", "DB_PASSWORD=correcthorse", "correcthorse", ["DB_PASSWORD="]),
    ("password", "export PGPASSWORD='s3cr3t!pw'", "s3cr3t!pw", ["export PGPASSWORD='", "'"]),
    ("password", "mysql:\n  user: app\n  password: Winter2024x\n  host: db", "Winter2024x", ["  user: app\n  password: ", "\n  host: db"]),
    ("password", '{"username": "alice", "password": "hunter2"}', "hunter2", ['"username": "alice"', '"password": "']),
    ("password", "docker login -u alice --password dckr_pat_0a1b2c3d4e5f registry.example.com", "dckr_pat_0a1b2c3d4e5f",
     ["docker login -u alice --password ", " registry.example.com"]),
    ("password", "db = connect(host='db', password='Zq8#mK2$vL9p')", "Zq8#mK2$vL9p", ["db = connect(host='db', password='", "')"]),
    ("password", "Server=db;Database=app;User Id=sa;Password=Str0ngPassw0rd;Encrypt=true", "Str0ngPassw0rd",
     ["User Id=sa;Password=", ";Encrypt=true"]),
    ("secret", "API_KEY=9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", ["API_KEY="]),
    ("secret", "X-Api-Key: 5e8f1c3a9b7d2e4f", "5e8f1c3a9b7d2e4f", ["X-Api-Key: "]),
    ("secret", 'JWT_SECRET = "a-long-random-signing-secret-0042"', "a-long-random-signing-secret-0042", ["JWT_SECRET = \""]),
    ("secret", "webhook_token: 0c3f9a7e2b", "0c3f9a7e2b", ["webhook_token: "]),
    ("secret", "SESSION_SECRET := mc8d7s6a5q4", "mc8d7s6a5q4", ["SESSION_SECRET := "]),
    ("secret", "'private_key' => 'f0e1d2c3b4a59687'", "f0e1d2c3b4a59687", ["'private_key' => '"]),
    ("secret", "GOOGLE_CREDENTIALS=eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0", "eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0",
     ["GOOGLE_CREDENTIALS="]),
    ("secret", "NEXTAUTH_SECRET=Qm9vdHN0cmFwIHNlY3JldA", "Qm9vdHN0cmFwIHNlY3JldA", ["NEXTAUTH_SECRET="]),
    ("secret", "basic_auth=YWRtaW46YWRtaW4xMjM", "YWRtaW46YWRtaW4xMjM", ["basic_auth="]),
    ("secret", 'headers={"Authorization": "Bearer jz_short1"}', "jz_short1", ['headers={"Authorization": "Bearer ', '"}']),
]


@pytest.mark.parametrize("kind, text, secret, context", POSITIVES, ids=[f"{i}-{p[0]}" for i, p in enumerate(POSITIVES)])
def test_secret_is_replaced_by_a_marker(kind, text, secret, context):
    out = redact(text)
    assert secret not in out, out
    assert f"[REDACTED:{kind}]" in out, out
    for piece in context:
        assert piece in out, (piece, out)
    assert redact(out) == out


def test_dotenv_file_contents():
    env = (
        "# .env\n"
        "APP_ENV=production\n"
        "DEBUG=false\n"
        "DATABASE_PASSWORD=pr0d-db-Passw0rd\n"
        "export STRIPE_API_KEY=rk9f8e7d6c5b4a3\n"
        "REDIS_URL=redis://cache:6379\n"
        "SECRET_KEY='django-insecure-9x#k2m$v8q'\n"
        "EMPTY_TOKEN=\n"
        "PUBLIC_URL=https://app.example.com\n"
    )
    out = redact(env)
    for secret in ("pr0d-db-Passw0rd", "rk9f8e7d6c5b4a3", "django-insecure-9x#k2m$v8q"):
        assert secret not in out
    assert "DATABASE_PASSWORD=[REDACTED:password]\n" in out
    assert "export STRIPE_API_KEY=[REDACTED:secret]\n" in out
    assert "SECRET_KEY='[REDACTED:secret]'\n" in out
    for kept in ("APP_ENV=production\n", "DEBUG=false\n", "REDIS_URL=redis://cache:6379\n", "EMPTY_TOKEN=\n",
                 "PUBLIC_URL=https://app.example.com\n"):
        assert kept in out


def test_multi_line_private_key_block_goes_whole():
    text = f"Here is the deploy key:\n\n{pem('OPENSSH PRIVATE KEY')}\n\nAdd it to the runner."
    out = redact(text)
    assert out == "Here is the deploy key:\n\n[REDACTED:private-key]\n\nAdd it to the runner."


def test_two_keys_are_two_markers():
    text = f"{pem('RSA PRIVATE KEY')}\nand\n{pem('EC PRIVATE KEY')}"
    assert redact(text) == "[REDACTED:private-key]\nand\n[REDACTED:private-key]"


def test_public_material_stays():
    cert = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----"
    pub = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"
    publishable = "pk_live_51Hx2AbCdEfGhIjKlMnOpQrSt"
    for text in (cert, pub, publishable, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop"):
        assert redact(text) == text


NEGATIVES = [
    "commit 3f9a1e5b2d8f4a6c0e9b3d7a1f5c2e8b4d6a0c9e",
    "merged 3f9a1e5 into main",
    "request_id=9b2f6c1e-4a7d-4e8b-9c3f-1a2b3c4d5e6f",
    "GET https://api.example.com/v1/files/aGVsbG8td29ybGQtdGhpcy1pcy1ub3Qta2V5/download 200",
    "https://youtu.be/dQw4w9WgXcQ and https://example.com/x/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "password=",
    "password: ",
    'password = ""',
    "TOKEN=${TOKEN}",
    "GITHUB_TOKEN=$GITHUB_TOKEN",
    "API_KEY=${{ secrets.API_KEY }}",
    'DB_PASSWORD: "{{ vault_db_password }}"',
    "password: <your-password>",
    "OPENAI_API_KEY=your-api-key-here",
    "API_KEY=sk-...",
    "secret: true",
    "auth: false",
    "token: null",
    'credentials: "include"',
    "Please enter your password to continue.",
    "The secret key is stored in the vault, and the password for the database is rotated monthly.",
    "sudo: a password is required",
    "remote: Invalid username or password.",
    "Enter passphrase for key '/home/alice/.ssh/id_ed25519':",
    "max_tokens: 4096",
    '"usage": {"input_tokens": 123456, "output_tokens": 654321, "cache_read_input_tokens": 9876543}',
    "token_count=1234567",
    "password = getpass.getpass()",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "token: str",
    "def login(user: str, password: str, token: Optional[str] = None) -> Session:",
    "api_key: SecretStr",
    "const token = req.headers.authorization;",
    "self.api_key = api_key",
    "password: hashedPassword,",
    "PWD=/home/alice/src/project",
    "GIT_ASKPASS=/usr/bin/ksshaskpass",
    "SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.1234",
    "bypass=enabled-for-tests",
    "docker run -u 1000:1000 -v $PWD:/src image",
    "ssh://git@github.com:22/acme/app.git",
    "http://localhost:8080/api/v1/health",
    "mail alice@example.com about https://example.com",
    "pip install scikit-learn; import sklearn; sk-learn-tutorial-for-beginners",
    "the task-runner-configuration-file-for-tests was updated",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "token_type: bearer",
    "[REDACTED:github-token] was already removed",
    "TOKEN=[REDACTED:secret]",
    "",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_not_a_secret_stays(text):
    assert redact(text) == text


def test_marker_is_never_matched_again():
    once = redact(f"GITHUB_TOKEN={GITHUB} AWS={AWS_ID} password: Winter2024x url=https://u:p4ssw0rd@h/x {JWT}")
    assert once.count("[REDACTED:") == 5
    assert redact(once) == once
    assert redact(redact(once)) == once


def test_unicode_text_keeps_positions():
    text = f"Ünïcödé → ✓ 日本語 GITHUB_TOKEN={GITHUB} café password: pässwörter1 done 🎉"
    out = redact(text)
    assert out == "Ünïcödé → ✓ 日本語 GITHUB_TOKEN=[REDACTED:github-token] café password: [REDACTED:password] done 🎉"


def test_secrets_inside_json_escaped_text():
    # a transcript line: the tool output is a JSON string with escaped newlines and quotes
    line = ('{"type": "tool_result", "content": "$ cat .env\\nDB_PASSWORD=pr0d-Passw0rd\\nexport OPENAI_API_KEY='
            + OPENAI + '\\n{\\"api_key\\": \\"9f8e7d6c5b4a3928\\"}\\n"}')
    out = redact(line)
    for secret in ("pr0d-Passw0rd", OPENAI, "9f8e7d6c5b4a3928"):
        assert secret not in out
    assert "DB_PASSWORD=[REDACTED:password]\\nexport OPENAI_API_KEY=[REDACTED:openai-key]\\n" in out
    assert '{\\"api_key\\": \\"[REDACTED:secret]\\"}' in out


def test_builtin_is_registered_with_the_plugin_host():
    found = {r.name: r for r in plugins.redactors()}
    assert "builtin" in found
    assert found["builtin"].plugin == "jezero.ingest.redact"
    assert found["builtin"].redact(f"export GITHUB_TOKEN={GITHUB}") == "export GITHUB_TOKEN=[REDACTED:github-token]"


def test_fast_on_text_without_secrets():
    # a guard against a pathological regex, not a benchmark (benchmarks/redact/bench.py is)
    import time

    line = ("2025-09-01T10:00:00Z INFO commit 3f9a1e5b2d8f4a6c0e9b3d7a1f5c2e8b4d6a0c9e token refreshed for "
            "user alice, password policy ok, key=value pairs: a=1 b=2 https://example.com/a/b?c=d\n")
    text = line * (2_000_000 // len(line))
    t = time.process_time()
    assert redact(text) == text
    assert time.process_time() - t < 2.0


def test_many_finds_stay_linear():
    # each BEGIN without an END looks only as far as the next dashes; re-checks read each line once
    import time

    t = time.process_time()
    assert redact("-----BEGIN RSA PRIVATE KEY-----\nabc def\n" * 4000).count("[REDACTED:private-key]") == 4000
    assert redact("password=abcdefgh1 " * 20000).count("[REDACTED:password]") == 20000
    assert time.process_time() - t < 5.0


# ---- properties -------------------------------------------------------------------------------

SECRETS = [GITHUB, AWS_ID, OPENAI, ANTHROPIC, JWT, fake("xoxb-", "1234567890-AbCdEfGhIjKl"), fake("glpat-", "Ab3dE5gH7jK9mN1pQ3sT"),
           fake("AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"), fake("sk_live_", "51Hx2AbCdEfGhIjKlMnOpQrSt")]
FRAGMENTS = [
    *SECRETS, "password", "PASSWORD", "Token", "api_key", "secret", "auth", "key", "=", ":", ": ", " = ", '"', "'", "\\",
    "\\n", "\\\"", "\n", " ", "-", "--", "_", ".", "@", "://", "https://", "user:pw@host", "Bearer ", "Basic ",
    "Authorization: ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMx",
    "eyJ", "sk-", "sk-ant-", "ghp_", "AKIA", "Q~", "AccountKey=", "sig=", "?", "&", "$", "${X}", "<x>", "[REDACTED:secret]",
    "[REDACTED:", "]", "hunter22", "é", "日本", "🎉", "xoxb-", "hooks.slack.com/services/", "-u ", "export ",
]
texts = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40).map("".join),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_redact_never_raises_and_is_idempotent(text):
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once
    if "[REDACTED:" not in text:  # every marker it writes is whole
        assert once.count("[REDACTED:") == len(re.findall(r"\[REDACTED:[a-z0-9-]+\]", once))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20), min_size=1, max_size=6),
       st.sampled_from(SECRETS))
def test_a_token_between_spaces_is_always_removed(words, secret):
    text = " ".join(words[:1] + [secret] + words[1:])
    out = redact(text)
    assert secret not in out
    assert re.search(r"\[REDACTED:[a-z-]+\]", out)
