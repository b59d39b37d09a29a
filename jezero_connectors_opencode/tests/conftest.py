"""Made-up sessions for the opencode connector tests, in the plugin kit's words."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jezero.plugin import DemoSession, Turn


@pytest.fixture
def sessions():
    """Two made-up sessions in a newsletter project (prompts, commands, answers)."""
    now = datetime.now(timezone.utc)
    cwd = "/home/demo/src/newsletter"
    return [
        DemoSession("opencode", cwd, (now - timedelta(days=6)).replace(hour=9, minute=0, second=0, microsecond=0), [
            Turn("user", "Emails to Outlook users land in spam. Can you check our DNS records?"),
            Turn("command", "dig +short TXT demo-news.example", '"v=spf1 include:_spf.mailhost.example ~all"'),
            Turn("command", "dig +short TXT _dmarc.demo-news.example | grep DMARC1", "", failed=True),
            Turn("assistant", "SPF is present but there is no DMARC record. Add TXT _dmarc with "
                              "'v=DMARC1; p=quarantine; rua=mailto:dmarc@demo-news.example'."),
        ]),
        DemoSession("opencode", cwd, (now - timedelta(days=1)).replace(hour=14, minute=0, second=0, microsecond=0), [
            Turn("user", "Add an unsubscribe link to the footer template."),
            Turn("command", "grep -n footer templates/footer.html", "1:<footer>© Demo News</footer>"),
            Turn("assistant", "Added an Unsubscribe link ({{unsubscribe_url}}) to templates/footer.html."),
        ]),
    ]
