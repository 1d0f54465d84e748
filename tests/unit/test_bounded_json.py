"""JSON from users' files: depth, size and digits are checked before ``json`` parses (harness.bounded_json)."""

from __future__ import annotations

import json

import pytest

from harness import bounded_json
from harness.bounded_json import MAX_DEPTH, JSONLimitError


def test_what_dbperf_writes_reads_as_json_does() -> None:
    text = json.dumps({"a": [1.5, 2e300, -12345678901234567890, None, {"b": '"[[{{\\\\'}], "c": "x" * 1000})
    assert bounded_json.loads(text) == json.loads(text)


def test_depth_is_counted_outside_strings_only() -> None:
    deep_in_a_string = json.dumps({"a": "[" * 10_000})
    assert bounded_json.loads(deep_in_a_string) == {"a": "[" * 10_000}
    just_deep_enough = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert bounded_json.loads(just_deep_enough) is not None
    with pytest.raises(JSONLimitError, match=f"nested deeper than {MAX_DEPTH} levels: line 1 column 65"):
        bounded_json.loads("[" + just_deep_enough + "]")


def test_100000_deep_is_refused_before_python_recurses() -> None:
    with pytest.raises(JSONLimitError, match="nested deeper"):
        bounded_json.loads('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")


def test_a_number_past_the_digit_limit_is_refused_with_its_place() -> None:
    with pytest.raises(JSONLimitError, match=r"a number of 5,000 digits \(at most 40\): line 2 column 7"):
        bounded_json.loads('{"a": 1,\n "b": ' + "9" * 5000 + "}")
    assert bounded_json.loads('{"a": "' + "9" * 5000 + '"}')["a"] == "9" * 5000  # in a string: text


def test_too_large_is_refused_unparsed() -> None:
    with pytest.raises(JSONLimitError, match="larger than 10 characters"):
        bounded_json.check_bounds("[" + "1," * 10 + "1]", max_chars=10)


def test_a_refusal_is_a_json_decode_error_so_every_caller_catches_it() -> None:
    assert issubclass(JSONLimitError, json.JSONDecodeError)


def test_an_unsaved_run_file_nested_deep_is_a_store_error() -> None:
    from harness.errors import StoreError
    from harness.measure.fallback import decode

    with pytest.raises(StoreError, match=r"not an unsaved-run file \(nested deeper"):
        decode("[" * 100_000 + "]" * 100_000, "x.json")
