"""Attack: the agent's text drives the user's terminal (issue breaks 9 and 10).

A hostile agent prints escape sequences (OSC 0 sets the window title, OSC 8 makes a hyperlink, OSC 52 writes
the clipboard, ``ESC [2J`` clears the screen, U+009B is a one-character CSI, U+202E reverses the text) and
rich markup (``[link=...]``, ``[/x]``) on stdout and stderr, in its file names, its actions and the column
names of its submission. Every command that shows them (run, show, play, grade, info, export) must print
them visibly and harmlessly, and must not crash.

Rich is made to believe it writes to a colour terminal (``TTY_COMPATIBLE``, ``FORCE_COLOR``, ``TERM``), so
it emits its own styles and would emit hyperlinks: those of its own (SGR styles, cursor moves) are removed
before checking that no other escape sequence is left. Unlike the rest of the attack suite, only the
episode of the first test needs a sandbox (the isolated local one): what is attacked is the display of
what was recorded, which is the same whichever sandbox recorded it.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import raw_dir

from mle_env.display_text import markup_safe, terminal_safe
from mle_env.jsonl import dumps_line

TITLE = "\x1b]0;evil-title\x07"
HYPERLINK = "\x1b]8;;https://evil.invalid/osc8\x1b\\click-me\x1b]8;;\x1b\\"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZAo=\x07"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b31m"
BIDI = "\u202eevil\u202c"
CLOSE_TAG = "[/x]"
LINK_TAG = "[link=https://evil.invalid/x]x[/link]"
HOSTILE = " ".join([TITLE, HYPERLINK, CLIPBOARD, CLEAR, C1_CSI, BIDI, CLOSE_TAG, LINK_TAG, "\u2028", "\x7f"])
#: the submission's extra columns: markup, and an OSC 52 clipboard write
COLUMNS = (CLOSE_TAG, LINK_TAG, CLIPBOARD)

# what rich writes itself to a colour terminal: SGR styles, erasing the line, moving the cursor up, hiding it
RICH_OWN = re.compile(r"\x1b\[\??[0-9;]*[AKhlm]")
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def assert_harmless(output: str) -> None:
    """``output`` holds no hyperlink, no escape sequence but rich's own styles and cursor moves, no BEL, no
    C0 or C1 control (newline, tab and rich's own carriage returns aside) and no bidi control."""
    assert "\x1b]" not in output, "an OSC sequence (title, hyperlink or clipboard) reached the terminal"
    left = RICH_OWN.sub("", output)
    assert "\x1b" not in left, repr(left[max(0, left.index("\x1b") - 60):left.index("\x1b") + 60])
    found = RAW.search(left)
    assert found is None, f"raw {found.group()!r} in {left[max(0, found.start() - 60):found.end() + 60]!r}"


def terminal_env(**extra: str) -> dict[str, str]:
    """The environment of a command that believes it writes to a wide colour terminal."""
    return {**os.environ, "TTY_COMPATIBLE": "1", "FORCE_COLOR": "1", "TERM": "xterm-256color",
            "COLUMNS": "400", "LINES": "50", **extra}


def mle_env_cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mle_env", *argv], capture_output=True, text=True,
                          env=env or terminal_env(), timeout=timeout, encoding="utf-8", errors="backslashreplace")


# --- the module that neutralises the text ------------------------------------------------------------------
def test_terminal_safe_makes_every_control_visible_and_keeps_the_text() -> None:
    safe = terminal_safe(HOSTILE + "\tend\r\nnext\rline")
    assert RAW.search(safe) is None and "\x1b" not in safe and "\x07" not in safe
    assert "\\x1b]0;evil-title\\x07" in safe and "\\x1b]52;c;ZWNobyBwd25lZAo=\\x07" in safe
    assert "\\x9b31m" in safe and "\\u202eevil\\u202c" in safe and "\\u2028" in safe and "\\x7f" in safe
    assert "\tend\nnext\\x0dline" in safe  # tab and newline kept, CRLF is a newline, a lone CR is shown
    assert CLOSE_TAG in safe and LINK_TAG in safe  # terminal_safe leaves markup to markup_safe
    assert terminal_safe("plain text, ünïcode, 中文\n") == "plain text, ünïcode, 中文\n"
    assert terminal_safe("\ud800") == "\\ud800"  # a lone surrogate cannot even be encoded


def test_markup_safe_prints_exactly_the_text_through_rich() -> None:
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor", width=400)
    console.print(f"[red]{markup_safe(HOSTILE)}[/red]")  # no MarkupError, no hyperlink
    output = buffer.getvalue()
    assert_harmless(output)
    plain = RICH_OWN.sub("", output)
    assert CLOSE_TAG in plain and LINK_TAG in plain and "\\x1b]8;;https://evil.invalid/osc8" in plain


def test_jsonl_lines_escape_controls_and_read_back_the_same() -> None:
    value = {"stdout": HOSTILE, "name": "ünïcode \ud800", HOSTILE: [HOSTILE]}
    line = dumps_line(value)
    assert RAW.search(line) is None and "\x1b" not in line and "\\u009b31m" in line and "ünïcode" in line
    assert "\n" not in line and json.loads(line) == value
    line.encode("utf-8")  # the lone surrogate is escaped too, so the line can be written


# --- a real episode: mle-env run (live display, final grade), then show and export of what it recorded -----
HOSTILE_POLICY = '''
import json

HOSTILE = json.loads({hostile!r})
COLUMNS = json.loads({columns!r})
PRINT = f"# {{HOSTILE}}\\nimport sys\\nprint({{HOSTILE!r}})\\nprint({{HOSTILE!r}}, file=sys.stderr)"
NAME_A_FILE = f"open('code/' + {{HOSTILE.replace('/', '|')!r}}, 'w').close()"
SUBMIT_COLUMNS = f"""import csv
rows = list(csv.reader(open('data/sample_submission.csv')))
rows = [rows[0] + {{list(COLUMNS)!r}}] + [row + ['1'] * {{len(COLUMNS)}} for row in rows[1:]]
csv.writer(open('submission/submission.csv', 'w', newline='')).writerows(rows)
"""


class Hostile:
    """Prints escape sequences and markup everywhere, names a file with them, submits hostile columns."""

    def __init__(self, **options):
        self.actions = [{{"type": "python", "code": PRINT}}, {{"type": "python", "code": NAME_A_FILE}},
                        {{"type": "shell", "code": "ls code"}}, {{"type": "python", "code": SUBMIT_COLUMNS}},
                        {{"type": HOSTILE}},  # malformed: the env's message quotes it
                        {{"type": "submit"}}]

    def reset(self, obs, info):
        pass

    def act(self, obs, info):
        return self.actions.pop(0)
'''


@pytest.fixture
def competitions(make_competition: Callable[..., Path], home: Path) -> Path:
    """The folder of a registered tiny competition, prepared in ``home``; subprocesses find it through
    MLE_ENV_COMPETITIONS."""
    folder = make_competition()
    done = mle_env_cli("prepare", "tiny-comp", "--raw-dir", str(raw_dir(folder)),
                       env=terminal_env(MLE_ENV_COMPETITIONS=str(folder.parent)))
    assert done.returncode == 0, done.stdout + done.stderr
    return folder.parent


@pytest.mark.slow
def test_run_show_and_export_of_a_hostile_episode(competitions: Path, bwrap_ready: None, tmp_path: Path) -> None:
    policy = tmp_path / "hostile_policy.py"
    policy.write_text(HOSTILE_POLICY.format(hostile=json.dumps(HOSTILE), columns=json.dumps(COLUMNS)))
    env = terminal_env(MLE_ENV_COMPETITIONS=str(competitions))
    record = tmp_path / "runs"
    run = mle_env_cli("run", "tiny-comp", "--agent", f"{policy}:Hostile", "--sandbox", "local",
                      "--record-dir", str(record), env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]  # graded (invalid), no MarkupError
    assert_harmless(run.stdout)
    assert_harmless(run.stderr)
    shown = RICH_OWN.sub("", run.stdout)
    assert "\\x1b]0;evil-title\\x07" in shown  # the live panel showed the output's tail, visibly
    assert "invalid" in shown and "unexpected column(s)" in shown
    assert f"'{CLOSE_TAG}'" in shown and f"'{LINK_TAG}'" in shown and "\\x1b]52;c;" in shown

    trajectory = next(record.rglob("trajectory.jsonl"))
    show = mle_env_cli("show", str(trajectory.parent), "--full", "--task", env=env)
    assert show.returncode == 0, show.stderr[-3000:]
    assert_harmless(show.stdout)
    shown = RICH_OWN.sub("", show.stdout)
    assert shown.count("\\x1b]52;c;ZWNobyBwd25lZAo=\\x07") >= 4  # the code, stdout, stderr, the ls of the file name
    assert "\\u202eevil\\u202c" in shown and "\\x9b31m" in shown and f"'{LINK_TAG}'" in shown
    assert "malformed action" in shown and "unexpected column(s)" in shown

    out = tmp_path / "export.jsonl"
    export = mle_env_cli("export", str(record), "--out", str(out), env=env)
    assert export.returncode == 0, export.stderr
    text = out.read_text(encoding="utf-8")
    assert RAW.search(text) is None and "\x1b" not in text
    example = json.loads(text.splitlines()[0])
    assert any(TITLE + " " + HYPERLINK in str(m.get("content")) for m in example["messages"])  # the very text
    to_stdout = mle_env_cli("export", str(record), env=env)
    assert to_stdout.returncode == 0 and RAW.search(to_stdout.stdout) is None and "\x1b" not in to_stdout.stdout


# --- show: every field of a trajectory, written by hand ------------------------------------------------
def hostile_trajectory(folder: Path) -> Path:
    """An episode's folder whose trajectory holds hostile text in every field `mle-env show` prints, and a
    file named with it."""
    folder.mkdir(parents=True)
    (folder / f"{HOSTILE.replace('/', '|')}.txt").write_text("x")
    grade = {"competition_id": HOSTILE, "status": "invalid", "invalid_reason": HOSTILE, "grader_error": HOSTILE,
             "leaderboard_note": HOSTILE}
    records = [
        {"type": "header", "format": 1, "competition_id": HOSTILE, "competition_version": HOSTILE, "seed": 0,
         "sandbox": HOSTILE, "time_limit": 60, "task": HOSTILE, "started_at": HOSTILE},
        {"type": "step", "step": 1, "action": {"type": HOSTILE, "code": HOSTILE, "path": HOSTILE},
         "stdout": HOSTILE, "stderr": HOSTILE, "message": HOSTILE, "exit_code": 1, "timed_out": False,
         "started_at": 0.1, "duration_s": 0.2, "policy": {HOSTILE: HOSTILE}},
        {"type": "footer", "status": HOSTILE, "steps": 1, "elapsed_s": 1.0, "reward": 0.0, "grade": grade,
         "artifacts": {"errors": [HOSTILE]}},
    ]
    path = folder / "trajectory.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_show_neutralises_every_field(tmp_path: Path) -> None:
    hostile_trajectory(tmp_path / "episode")
    show = mle_env_cli("show", str(tmp_path / "episode"), "--task")
    assert show.returncode == 0, show.stderr[-3000:]  # the grade table's [/x] raised MarkupError before
    assert_harmless(show.stdout)
    shown = RICH_OWN.sub("", show.stdout)
    assert shown.count(CLOSE_TAG) >= 12 and shown.count(LINK_TAG) >= 12  # header to file name, all as text
    assert "not kept: " in shown and "grader error" in shown and "kept in " in shown


def test_show_in_process_with_a_forced_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from mle_env.cli import main

    for key, value in terminal_env().items():
        monkeypatch.setenv(key, value)
    hostile_trajectory(tmp_path / "episode")
    assert main(["show", str(tmp_path / "episode" / "trajectory.jsonl"), "--width", "300"]) == 0
    out, err = capsys.readouterr()
    assert_harmless(out + err)
    assert CLOSE_TAG in out and "\\x1b]8;;https://evil.invalid/osc8" in out


# --- grade: a submission whose header is markup and an OSC 52 sequence --------------------------------------
def hostile_submission(home: Path, path: Path) -> Path:
    sample = (home / "tiny-comp" / "prepared" / "public" / "sample_submission.csv").read_text().splitlines()
    rows = [sample[0] + "," + ",".join(f'"{c}"' for c in COLUMNS)] + [r + ",1,1,1" for r in sample[1:]]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_grade_prints_hostile_column_names_as_text(competitions: Path, home: Path, tmp_path: Path) -> None:
    submission = hostile_submission(home, tmp_path / "submission.csv")
    env = terminal_env(MLE_ENV_COMPETITIONS=str(competitions))
    grade = mle_env_cli("grade", "tiny-comp", str(submission), env=env)
    assert grade.returncode == 1, grade.stdout + grade.stderr  # invalid; no MarkupError (exit 1 with a traceback)
    assert "Traceback" not in grade.stderr
    assert_harmless(grade.stdout)
    shown = RICH_OWN.sub("", grade.stdout)
    assert f"'{CLOSE_TAG}'" in shown and f"'{LINK_TAG}'" in shown and "'\\x1b]52;c;ZWNobyBwd25lZAo=\\x07'" in shown

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"competition_id": "tiny-comp", "submission_path": str(submission)}) + "\n"
                     + json.dumps({"competition_id": HOSTILE, "submission_path": HOSTILE}) + "\n")
    batch = mle_env_cli("grade", str(pairs), env=env)
    assert batch.returncode == 2 and "Traceback" not in batch.stderr, batch.stderr[-3000:]
    assert_harmless(batch.stdout + batch.stderr)
    assert f"'{CLOSE_TAG}'" in RICH_OWN.sub("", batch.stdout)


# --- info: a competition's own texts keep their brackets, lose their controls --------------------------------
def test_info_prints_the_competition_texts_as_written(make_competition: Callable[..., Path], home: Path) -> None:
    folder = make_competition(register=False)
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text().replace('title = "Tiny"', f"title = {json.dumps(HOSTILE)}")
                    + f'\n[[known_issues]]\nkind = "other"\nsummary = {json.dumps(HOSTILE)}\n')
    (folder / "description.md").write_text(f"# Tiny\n\nAdd a [prepare.dev] table. {HOSTILE}\n\n"
                                           "[a link](https://evil.invalid/md)\n", encoding="utf-8")
    info = mle_env_cli("info", "tiny-comp", env=terminal_env(MLE_ENV_COMPETITIONS=str(folder.parent)))
    assert info.returncode == 0, info.stderr[-3000:]
    assert_harmless(info.stdout)
    shown = RICH_OWN.sub("", info.stdout)
    assert "[prepare.dev]" in shown and shown.count(CLOSE_TAG) >= 3 and shown.count(LINK_TAG) >= 3
    assert "https://evil.invalid/md" in shown  # a Markdown link shows where it goes

    shipped = mle_env_cli("info", "insults")
    assert shipped.returncode == 0 and "[prepare.dev]" in RICH_OWN.sub("", shipped.stdout)


# --- play: the human agent's display -----------------------------------------------------------------------
def test_play_shows_the_agent_output_harmlessly() -> None:
    from mle_env.agents.human import HumanPolicy

    out = io.StringIO()
    policy = HumanPolicy(stdin=io.StringIO(":files\n:submit\n"), stdout=out)
    obs = {"task": HOSTILE, "files": HOSTILE, "action": "reset", "stdout": "", "stderr": "", "message": "",
           "exit_code": 0, "time_left": 60.0, "steps_left": -1}
    policy.reset(obs, {"sandbox": HOSTILE})
    assert policy.act(obs, {}) == {"type": "submit"}
    step = {**obs, "action": "shell", "stdout": HOSTILE, "stderr": HOSTILE, "message": HOSTILE}
    policy.stdin = io.StringIO(":submit\n")
    policy.act(step, {})
    assert_harmless(out.getvalue())
    assert out.getvalue().count("\\x1b]52;c;ZWNobyBwd25lZAo=\\x07") == 7 and CLOSE_TAG in out.getvalue()
