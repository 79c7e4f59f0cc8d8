"""The action schema and parser: every malformed action gets a one-line reason."""

import pytest

from mle_env.actions import ACTION_SCHEMA, MAX_CODE_CHARS, MAX_REASON, Action, ActionError, describe, parse_action
from mle_env.spaces import ActionSpace


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("ls -la", Action("shell", "ls -la")),
        ({"type": "shell", "code": "ls", "timeout": 5}, Action("shell", "ls", 5.0)),
        ({"type": "python", "code": "x = 1"}, Action("python", "x = 1")),
        ({"type": "validate"}, Action("validate")),
        ({"type": "submit"}, Action("submit")),
    ],
)
def test_valid_actions(action: object, expected: Action) -> None:
    assert parse_action(action) == expected


@pytest.mark.parametrize(
    ("action", "phrase"),
    [
        ({"type": "run", "code": "ls"}, "'type' must be one of shell, python, validate, score_dev, submit"),
        ({"type": ["shell"], "code": "ls"}, "'type' must be one of"),
        ({"type": "validate", "path": "/etc/passwd"}, "relative to the working directory"),
        ({"type": "validate", "path": "code/../../x"}, "without '..'"),
        ({"type": "validate", "path": "a\x00b"}, "relative to the working directory"),
        ({"code": "ls"}, "'type' must be one of"),
        ({"type": "shell"}, "'code' is a required property"),
        ({"type": "shell", "code": ""}, "should be non-empty"),
        ({"type": "python", "code": 42}, "42 is not of type 'string'"),
        ({"type": "shell", "code": "ls", "timeout": -1}, "'timeout' -1 is less than or equal to the minimum of 0"),
        ({"type": "shell", "code": "ls", "timeout": "5"}, "'5' is not of type 'number'"),
        ({"type": "shell", "code": "ls", "cwd": "/"}, "a shell action takes only: type, code, timeout"),
        ({"type": "submit", "code": "ls"}, "a submit action takes only: type"),
        ({"type": "shell", "code": "x" * (MAX_CODE_CHARS + 1)}, "over the 1,000,000 limit"),
        ({"type": "shell", "code": "ls\x00rm"}, "NUL bytes"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary data"),
        (3.5, "not float"),
        (None, "not NoneType"),
        (["ls"], "not list"),
    ],
)
def test_malformed_actions(action: object, phrase: str) -> None:
    with pytest.raises(ActionError) as info:
        parse_action(action)
    assert phrase in info.value.reason
    assert "\n" not in info.value.reason


def test_action_space_contains_and_samples_valid_actions() -> None:
    space = ActionSpace(seed=0)
    samples = [space.sample() for _ in range(30)]
    assert all(space.contains(s) for s in samples)
    assert {s["type"] for s in samples} == {"shell", "python", "validate"}  # sampling never submits
    assert space.contains({"type": "submit"}) and space.contains("echo hi")
    assert not space.contains({"type": "shell"})


def test_schema_is_published() -> None:
    assert {s["properties"]["type"]["const"] for s in ACTION_SCHEMA["oneOf"]} == {"shell", "python", "validate",
                                                                                  "score_dev", "submit"}


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("repr refused")


@pytest.mark.parametrize(
    ("action", "phrase"),
    [
        ({"type": "shell", "code": "echo \ud800"}, "not valid Unicode text (a lone surrogate at character 5)"),
        ("\udfff", "'code' is not valid Unicode text"),
        ({"type": "validate", "path": "\ud800"}, "'path' is not valid Unicode text"),
        ({"type": "shell", "code": "ls", "timeout": float("nan")}, "'timeout' must be a finite number of seconds"),
        ({"type": "shell", "code": "ls", "timeout": float("inf")}, "got inf"),
        ({"type": "shell", "code": "ls", "timeout": 10**400}, "is greater than the maximum of 1000000000"),
        ({"type": "shell", "code": "ls", "timeout": True}, "True is not of type 'number'"),
        (Unprintable(), "not Unprintable"),
        ({"type": Unprintable()}, "cannot be printed"),
        ({"type": "shell", "code": Unprintable()}, "the action could not be read (RuntimeError)"),
        ({"type": "shell", "code": 10**5000}, "the action could not be read (ValueError)"),
        ({"type": "t" * 10**6}, "'type' must be one of"),
    ],
)
def test_inputs_that_used_to_raise_are_malformed_actions(action: object, phrase: str) -> None:
    with pytest.raises(ActionError) as info:
        parse_action(action)
    assert phrase in info.value.reason
    assert "\n" not in info.value.reason and len(info.value.reason) <= MAX_REASON


def test_reasons_are_capped_and_describe_never_raises() -> None:
    assert len(ActionError("x" * 10_000).reason) == MAX_REASON
    assert describe(Unprintable()) == "<Unprintable object that cannot be printed>"
    assert describe("y" * 1000, 20) == "'yyyyyyyyyyyyyyyy..."
    assert parse_action({"type": "shell", "code": "ls", "timeout": 10**9}).timeout == 1e9


def test_str_subclasses_become_plain_text() -> None:
    class Shouty(str):
        def __str__(self) -> str:
            raise RuntimeError

    parsed = parse_action({"type": "shell", "code": Shouty("echo hi")})
    assert parsed.code == "echo hi" and type(parsed.code) is str
