"""verdicts.json is one typed, versioned document: one writer, one reader that validates it once."""

from __future__ import annotations

import json

import pytest
from support.comments import config_change, example_check

from harness.model.outcome import DOCUMENT_FORMAT
from harness.model.verdict_document import DocumentError, VerdictDocument, dump_document, read_document


def _document() -> VerdictDocument:
    verdicts, changes = config_change()
    flames = ("flamegraph-oltp_insert-1t.svg",)
    return VerdictDocument(tuple(verdicts), tuple(changes), (example_check(),), flames)


def test_a_document_round_trips_whole() -> None:
    document = _document()
    assert document.format == DOCUMENT_FORMAT == 1
    assert read_document(dump_document(document)) == document


def _forged(path: tuple[object, ...], value: object) -> str:
    doc = json.loads(dump_document(_document()))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("format",), 2, "v.json: format 2 is not this dbperf's (1); upgrade dbperf to read it"),
        (("format",), 0, "v.json: format 0 is not this dbperf's (1); give the verdicts.json of a dbperf run"),
        (("format",), KeyError, "v.json: format None is not this dbperf's (1)"),
        (("verdicts", 0, "scenario"), KeyError, "v.json: verdicts[0].scenario: field required"),
        (("verdicts", 0, "threads"), "8", "v.json: verdicts[0].threads: input should be a valid integer, got '8'"),
        (("verdicts", 0, "metrics", 0, "gating"), 1, "v.json: verdicts[0].metrics[0].gating: input should be a valid"),
        (("changes", 0, "line"), 8.5, "v.json: changes[0].line: input should be a valid integer"),
        (("plans", 0, "statements"), {}, "v.json: plans[0].statements: input should be a valid array"),
        (("verdicts", 0, "metrics", 0, "estimate_pct"), float("inf"), "should be a finite number"),
    ],
)
def test_a_wrong_version_a_missing_field_or_a_wrong_type_is_one_line(path, value, message) -> None:
    with pytest.raises(DocumentError) as raised:
        read_document(_forged(path, value), "v.json")
    text = str(raised.value)
    assert message in text and text.startswith("v.json: ") and "\n" not in text, text
    assert "give the verdicts.json" in text or "upgrade dbperf" in text


@pytest.mark.parametrize("text", ["{", "[]", '"x"', "{" * 100 + "}" * 100])
def test_what_is_not_a_document_is_one_line(text: str) -> None:
    with pytest.raises(DocumentError) as raised:
        read_document(text, "v.json")
    assert "\n" not in str(raised.value) and "give the verdicts.json" in str(raised.value)
