"""``--json`` and ``verdicts.json`` carry ``"format"``; a reader refuses a newer one in one line."""

from __future__ import annotations

import json

import pytest

from harness.errors import ConfigError
from harness.model import Outcome
from harness.model.outcome import DOCUMENT_FORMAT, read_outcome_json


def test_the_document_names_its_format_and_reads_back():
    doc = Outcome(runs=(), exit_code=0).document()
    assert doc["format"] == DOCUMENT_FORMAT == 1
    assert read_outcome_json(json.dumps(doc), "out.json") == doc


def test_a_document_from_before_the_format_field_is_format_0_and_read():
    assert read_outcome_json('{"verdicts": [], "exit_code": 0}')["verdicts"] == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": 2, "verdicts": []}', "x.json: verdicts document format 2 is newer than this dbperf reads (1)"),
        ('{"runs": []}', "x.json: not a dbperf verdicts document (no 'verdicts')"),
        ("{", "x.json: not a dbperf verdicts document (Expecting property name"),
    ],
)
def test_what_it_cannot_read_is_one_line(text, message):
    with pytest.raises(ConfigError) as raised:
        read_outcome_json(text, "x.json")
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)
