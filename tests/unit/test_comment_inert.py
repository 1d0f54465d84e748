"""Names a pull request wrote are inert in the trusted comment and the check run's summary (issue 35, item 4).

Names such as ``x:@octocat`` or ``www.evil-example.com`` match the trusted job's name patterns, so they
reach the comment. Both are rendered here with GitHub's own Markdown renderer (cmark-gfm, with its
autolink and table extensions, raw HTML kept as GitHub keeps the tags it allows), and the HTML must hold
no link but the run page, no tag dbperf does not write, and, in text outside code, nothing GitHub's
mention, issue-reference or autolink filters would pick up, while every hostile name is still shown.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from support.comments import RUN_URL, SHA, change_document, ci_check, verdicts_json

from harness.report.check_run import build_check_run
from harness.report.mdtable import code, inert
from harness.report.trusted_comment import build_comment

#: Names that pass the trusted job's patterns and that GitHub would turn into a mention, an email or a link.
HOSTILE = (
    "x:@octocat",
    "a:@org/team",
    "https://evil.example/login",
    "www.evil-example.com",
    "user@evil.example",
    "WWW.EVIL.EXAMPLE",
    "ftp://evil.example",
    "mariadb@10.11.5",
)
#: Tags dbperf's comment writes itself (GitHub keeps these); anything else came from a name.
TAGS = {"p", "h3", "strong", "em", "code", "ul", "li", "table", "thead", "tbody", "tr", "th", "td"}
TAGS |= {"details", "summary", "sub", "a", "br"}
#: What GitHub's filters turn into a mention, an issue reference or a link in text outside code.
LIVE = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]|(?<!\w)#\d|[\w.+-]@[\w-]+\.\w|(?i:www)\.|://")


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.tags: list[str] = []
        self.links: list[str] = []
        self.comments: list[str] = []
        self.text: list[str] = []  # outside code and links: where GitHub's filters look

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag not in ("br",):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag) :]

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        if "code" not in self.open and "a" not in self.open:
            self.text.append(data)


def rendered(markdown: str) -> _Html:
    """The HTML GitHub's renderer makes of ``markdown``, parsed."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    parser = _Html()
    parser.feed(html)
    return parser


def assert_inert(markdown: str, *, links: tuple[str, ...] = (RUN_URL,)) -> None:
    page = rendered(markdown)
    assert set(page.tags) <= TAGS, f"HTML from a name: {set(page.tags) - TAGS}"
    assert set(page.links) <= set(links), f"a link from a name: {set(page.links) - set(links)}"
    assert all(c.strip() == "dbperf-pr-check" for c in page.comments)
    live = [t for t in page.text if LIVE.search(t)]
    assert not live, f"GitHub would make a mention or a link of: {live}"


def test_the_checker_sees_what_github_would_make_live() -> None:
    """Without :func:`inert` each hostile name is live, so the checks below can fail."""
    for name in (*HOSTILE, "@octocat"):
        with pytest.raises(AssertionError):
            assert_inert(f"| a |\n| --- |\n| {name} |\n\n- {name}\n")
    with pytest.raises(AssertionError):
        assert_inert("<img src=x>")
    for name in (*HOSTILE, "@octocat"):
        assert_inert(f"| a |\n| --- |\n| {inert(name)} |\n\n- {inert(name)} and {code(name)}\n")


def test_inert_leaves_ordinary_names_as_they_are() -> None:
    for name in ("oltp_read_write", "mariadb-local@base", "mysql-9.7", "servers/conf/mariadb.cnf", "11.8.3"):
        assert inert(name) == name
    assert inert("x:@octocat").replace("\u200b", "") == "x:@octocat"


def test_code_spans_keep_backticks_by_a_longer_fence() -> None:
    for text in ("a`b", "``x", "y`", "plain"):
        page = rendered(f"- {code(text)}")
        assert page.tags == ["ul", "li", "code"]
    assert code("a`b") == "``a`b``" and code("`x") == "`` `x ``" and code("") == "`?`"
    html = cmarkgfm.github_flavored_markdown_to_html(code("a``b"))
    assert "<code>a``b</code>" in html


def hostile_document() -> dict[str, object]:
    """A pull request's verdicts.json with a hostile name in every place a name can go."""
    doc = change_document()
    plans = json.loads(verdicts_json([ci_check()]))["plans"]
    doc["plans"] = plans
    names = iter(HOSTILE * 4)
    verdicts = doc["verdicts"]
    assert isinstance(verdicts, list)
    for verdict in verdicts:
        verdict.update(scenario=next(names), base=next(names), head=next(names))
        verdict.update(base_version=next(names), head_version=next(names))
    for change in doc["changes"]:  # type: ignore[attr-defined]
        change.update(section="www.evil-example.com", name="www.evil-example.com", new="https://evil.example/login")
        change.update(file="servers/www.evil-example.com", base=verdicts[0]["base"], head=verdicts[0]["head"])
    for plan in plans:
        plan.update(scenario=next(names), base=next(names), head=next(names))
        for statement in plan["statements"]:
            for side in ("base", "head"):
                key = "user@evil.example" if side == "base" else "x#12"
                statement[side]["tables"][0].update(table="@octocat", key=key)
    doc["flame_graphs"] = ["flamegraph-www.evil-example.com-8t.svg"]
    return doc


def test_the_trusted_comment_makes_no_mention_link_or_html() -> None:
    text = build_comment(json.dumps(hostile_document()), sha=SHA, run_url=RUN_URL)
    assert_inert(text)
    shown = text.replace("\u200b", "")
    for name in HOSTILE:  # shown, not dropped
        assert name in shown, name
    assert "@octocat" in shown and "user@evil.example" in shown and "x#12" in shown  # the plan's names


def test_the_check_run_summary_makes_no_mention_link_or_html() -> None:
    doc = hostile_document()
    for change in doc["changes"]:  # type: ignore[attr-defined]
        change["line"] = None  # the regressions are listed in the summary, names and all
    requests = build_check_run(json.dumps(doc), sha=SHA, run_url=RUN_URL)
    summary = requests[0]["output"]["summary"]  # type: ignore[index]
    assert isinstance(summary, str) and "Regressions not tied to a changed line" in summary
    assert_inert(summary)
    assert "x:@octocat" in summary.replace("\u200b", "")
