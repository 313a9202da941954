"""Reading user files with bounds: size, encoding, nesting and aliases
(flarekit.client._input_files)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from flarekit.client import _input_files
from flarekit.client._input_files import MAX_DEPTH, InputError, decode, load_text, read_file

WHAT = "config file f.yaml"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs" document: each level lists the previous one nine times."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def load(text: str) -> Any:
    return load_text(text, WHAT)


def test_json_and_yaml_are_read() -> None:
    assert load('{"name": "x", "num_workers": 2}') == {"name": "x", "num_workers": 2}
    assert load("name: x\nnum_workers: 2\n") == {"name": "x", "num_workers": 2}
    assert load("{name: x}") == {"name": "x"}  # YAML flow syntax, not JSON
    assert load("") is None


def test_the_alias_bomb_is_refused_before_any_value_is_built() -> None:
    text = alias_bomb()
    assert len(text.encode()) < 600
    with pytest.raises(InputError, match=r"aliases that expand it from \d+ to [\d,]+ values"):
        load(text)


def test_an_alias_that_contains_itself_is_refused() -> None:
    with pytest.raises(InputError, match="refers to itself"):
        load("a: &a [1, *a]\n")


def test_ordinary_anchors_and_merge_keys_work() -> None:
    text = "base: &base {cpu: 1, memory: 2Gi}\nhead: {<<: *base, cpu: 2}\nworker: *base\n"
    assert load(text) == {
        "base": {"cpu": 1, "memory": "2Gi"},
        "head": {"cpu": 2, "memory": "2Gi"},
        "worker": {"cpu": 1, "memory": "2Gi"},
    }
    assert load(alias_bomb(6))["a5"][0][0][0][0][0][0] == "lol"  # 9**6 values: allowed


@pytest.mark.parametrize("style", ["json", "yaml-flow", "yaml-block"])
def test_nesting_deeper_than_the_limit_is_refused(style: str) -> None:
    deep = 10_000
    if style == "json":
        text = '{"a": ' * deep + "1" + "}" * deep
    elif style == "yaml-flow":
        text = "a: " + "[" * deep + "]" * deep
    else:
        text = "".join(" " * i + "a:\n" for i in range(MAX_DEPTH + 5)) + " " * 2000 + "b: 1\n"
    with pytest.raises(InputError, match="nests deeper than"):
        load(text)


def test_json_up_to_the_limit_is_read() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    value: Any = load(text)
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []
    with pytest.raises(InputError, match=f"nests deeper than {MAX_DEPTH} levels"):
        load("[" + text + "]")


def test_the_pure_python_parser_has_the_same_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    with pytest.raises(InputError, match="nests deeper than"):
        load("a: " + "[" * 5000 + "]" * 5000)
    with pytest.raises(InputError, match="aliases that expand"):
        load(alias_bomb())
    assert load("a: [1, {b: c}]") == {"a": [1, {"b": "c"}]}


def test_size_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: " + b"x" * 2000)
    assert len(read_file(path, WHAT, limit=4096)) == 2003
    with pytest.raises(InputError, match="larger than"):
        read_file(path, WHAT, limit=1024)
    with pytest.raises(InputError, match=r"cannot read config file f\.yaml"):
        read_file(tmp_path / "missing.yaml", WHAT)


@pytest.mark.parametrize(
    "encoded",
    [
        pytest.param(codecs.BOM_UTF8 + "name: café\n".encode(), id="utf-8-bom"),
        pytest.param("name: café\n".encode("utf-16"), id="utf-16-bom"),
        pytest.param("name: café\n".encode("utf-16-le"), id="utf-16-le"),
        pytest.param("name: café\n".encode("utf-16-be"), id="utf-16-be"),
        pytest.param("name: café\n".encode("utf-32"), id="utf-32-bom"),
        pytest.param("name: café\n".encode("utf-32-be"), id="utf-32-be"),
    ],
)
def test_unicode_encodings_yaml_allows_are_read(encoded: bytes) -> None:
    assert load(decode(encoded, WHAT)) == {"name": "café"}


def test_other_encodings_are_refused_naming_the_line() -> None:
    latin1 = "name: x\nlabel: caf\xe9\n".encode("latin-1")
    with pytest.raises(InputError, match=r"not valid UTF-8 \(byte 0xe9 at line 2\); save it"):
        decode(latin1, WHAT)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("n: " + "9" * 5000 + "\n", id="int-of-5000-digits"),
        pytest.param("d: 2024-02-30\n", id="impossible-date"),
        pytest.param("? [a]\n: 1\n", id="list-as-key"),
        pytest.param("a: 1\n---\nb: 2\n", id="two-documents"),
        pytest.param("a: [unclosed\n", id="syntax"),
    ],
)
def test_unreadable_values_are_one_line_input_errors(text: str) -> None:
    with pytest.raises(InputError) as error:
        load(text)
    assert "\n" not in str(error.value) and str(error.value).startswith(WHAT)


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python"])
@pytest.mark.parametrize("anchor", ["", "x: &x 1\n"], ids=["plain", "with-anchor"])
def test_characters_yaml_does_not_allow_are_named_with_their_line(
    monkeypatch: pytest.MonkeyPatch, libyaml: bool, anchor: str
) -> None:
    monkeypatch.setattr(yaml, "__with_libyaml__", yaml.__with_libyaml__ and libyaml)
    with pytest.raises(InputError) as error:
        load(anchor + "name: café\nkind: Conf\x14g\n")
    line = 3 if anchor else 2
    assert str(error.value) == (
        f"{WHAT} has a character YAML does not allow (U+0014 at line {line})"
    )


def test_messages_never_show_the_content() -> None:
    secret = "s3cr3t-token-value"
    for text in (f"token: {secret}\nbad: [\n", f"token: {secret}\n" + alias_bomb()):
        with pytest.raises(InputError) as error:
            load(text)
        assert secret not in str(error.value)


def test_json_constants_are_not_numbers() -> None:
    # Python's json reads NaN; JSON has none, so the text is read as YAML, where it is a string.
    assert load('{"a": NaN}') == {"a": "NaN"}
    assert json.loads('{"a": 1}') == load('{"a": 1}')


def test_the_module_documents_its_bounds() -> None:
    for name in ("MAX_BYTES", "MAX_DEPTH", "MAX_ALIAS_NODES"):
        assert name in (_input_files.__doc__ or "")


SCALARS = """\
plain: text
quoted: "yes"
single: 'on'
bools: [yes, No, on, OFF, true, False, y, n]
ints: [0, -7, +3, 0x1F, 0o17, 017, 0b101, 1_000, "12"]
sexagesimal: [1:30, 190:20:30.15]
floats: [1.5, -.5, 1e3, 6.8523015e+5, .inf, -.Inf, 685_230.15]
nulls: [~, null, Null, ]
empty:
dates: [2024-01-02, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10 -5]
unicode: "caf\u00e9 \U0001f600"
block: |
  line one
  line two
folded: >
  one
  two
nested: {a: [1, {b: c}], "k y": {}}
? explicit key
: value
"""


@pytest.mark.parametrize(
    "text",
    [pytest.param(SCALARS, id="scalars")]
    + [
        pytest.param(path.read_text(encoding="utf-8"), id=path.name)
        for path in sorted(SAMPLES.glob("*/*/*/*.yaml"))[::7]
    ],
)
def test_values_built_from_events_are_what_pyyaml_builds(text: str) -> None:
    assert load(text) == yaml.load(text, Loader=yaml.CSafeLoader)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: !!binary aGVsbG8=\n",
        "? [a, b]\n: 1\n",
        "base: {x: 1}\nm: {<<: {y: 2}, z: 3}\n",
        "!!set {a, b}\n",
    ],
)
def test_anchors_tags_and_merges_go_through_pyyaml(text: str) -> None:
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        with pytest.raises(InputError):
            load(text)
        return
    assert load(text) == expected
