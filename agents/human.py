"""The human agent: you, at a terminal (``mle-env play ID``).

Type a shell command and press Enter to run it. Other commands:

  :py                 start a multi-line Python cell; end it with a line holding only :end
  :py CODE            run one line of Python
  :validate           check ./submission/submission.csv (answers "valid" or what is wrong)
  :submit             end the episode and have the submission graded
  :timeout SECONDS    the timeout of the following actions
  :task  :files       show the task text / the data files again
  :help               this help
  Ctrl-C              cancel the action that is running and come back to the prompt (python keeps
                      its variables); a second Ctrl-C ends the episode, graded
  Ctrl-D              submit and end, like :submit

Python runs in one persistent interpreter, so variables carry over between cells.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from mle_env.agents.policy import BasePolicy
from mle_env.display_text import terminal_safe

HELP = __doc__.split("\n\n", 1)[1] if __doc__ else ""
END_CELL = ":end"


class HumanPolicy(BasePolicy):
    """Reads actions from ``stdin`` and prints results to ``stdout`` (both replaceable for tests).

    Everything it prints is made :func:`~mle_env.display_text.terminal_safe`: the task, file names and the
    agent's outputs may hold escape sequences (a window title, a hyperlink, a clipboard write).

    Ctrl-C: whoever runs the episode routes SIGINT to :meth:`handle_interrupt` (``mle-env play`` does). While
    an action runs, the first Ctrl-C cancels it and the second asks for the episode to end, graded, once
    the action stops; at the prompt, a Ctrl-C that follows another ends the episode, graded, and a lone one
    only clears the line. A third Ctrl-C during one action, or one before the first prompt or during
    grading, interrupts the program as usual (KeyboardInterrupt).
    """

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, prompt: str = "mle-env> ") -> None:
        super().__init__()
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.prompt = prompt
        self.timeout: float | None = None
        self._obs: dict[str, Any] | None = None
        self._history_enabled = False
        self._phase = "setup"  # then "prompt" (reading a line), "acting" (an action runs), "done" (submitted)
        self._interrupts = 0  # Ctrl-Cs since the last line typed
        self._end_requested = False

    def _print(self, text: str = "") -> None:
        text = terminal_safe(text)
        self.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
        self.stdout.flush()

    def _read(self, prompt: str) -> str:
        if self.stdin is sys.stdin and sys.stdin.isatty():
            if not self._history_enabled:
                try:
                    import readline  # noqa: F401 - line editing and history for input()
                except ImportError:
                    pass
                self._history_enabled = True
            return input(prompt)
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        super().reset(obs, info)
        self._obs = obs
        self._print(obs["task"])
        self._print("# Files\n" + obs["files"])
        self._print(f"\nSandbox: {info.get('sandbox')} ({info.get('sandbox_reason', '')}). Type :help for commands.")

    def _show(self, obs: dict[str, Any]) -> None:
        for key in ("stdout", "stderr"):
            if obs[key]:
                self._print(obs[key])
        if obs["message"]:
            self._print(f"[{obs['message']}]")
        steps = int(obs["steps_left"])
        self._print(f"[exit {int(obs['exit_code'])}; {float(obs['time_left']):.0f} s"
                    + (f", {steps} steps" if steps >= 0 else "") + " left]")

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | str:
        if obs["action"] != "reset":
            self._show(obs)
        self._obs = obs
        action = self._next_action()
        self._phase = "done" if action.get("type") == "submit" else "acting"
        return action

    def _next_action(self) -> dict[str, Any]:
        if self._end_requested:
            self._print("(ending the episode as asked: submitting)")
            return {"type": "submit"}
        while True:
            self._phase = "prompt"
            try:
                line = self._read(self.prompt)
            except EOFError:
                self._print("\n(end of input: submitting)")
                return {"type": "submit"}
            except KeyboardInterrupt:
                self._interrupts += 1
                if self._interrupts >= 2:
                    self._print("\n(second Ctrl-C: submitting)")
                    return {"type": "submit"}
                self._print("\n(Ctrl-C again, or Ctrl-D, ends the episode and grades it)")
                continue
            self._interrupts = 0
            action = self._command(line.strip())
            if action is not None:
                return action

    def handle_interrupt(self, cancel_action: Callable[[], bool]) -> None:
        """What a Ctrl-C (SIGINT) does now (see the class docstring); ``cancel_action`` stops the action that
        is running and says whether there was one (``MLEEnv.cancel_action``).

        Raises:
            KeyboardInterrupt: at the prompt (``act`` decides what it means), or to stop the program.
        """
        if self._phase == "prompt":
            raise KeyboardInterrupt
        if self._phase != "acting":
            raise KeyboardInterrupt  # starting the sandbox or grading: nothing to cancel
        self._interrupts += 1
        if self._interrupts == 1:
            what = "cancelling the action" if cancel_action() else "this action cannot be cancelled"
            self._say(f"^C ({what}; Ctrl-C again ends the episode, graded)")
            return
        if self._interrupts == 2:
            self._end_requested = True
            cancel_action()
            self._say("^C (the episode ends, graded, as soon as the action stops; Ctrl-C again to quit now)")
            return
        raise KeyboardInterrupt

    def _say(self, text: str) -> None:
        """Print from a signal handler, which may have interrupted a print of the main program's."""
        try:
            self._print("\n" + text)
        except RuntimeError:  # a reentrant write into the same buffered stream: the message is dropped
            pass

    def _command(self, line: str) -> dict[str, Any] | None:
        if not line:
            return None
        if not line.startswith(":"):
            return self._with_timeout({"type": "shell", "code": line})
        name, _, rest = line.partition(" ")
        handlers: dict[str, Callable[[str], dict[str, Any] | None]] = {
            ":py": self._python, ":validate": lambda _: {"type": "validate"}, ":submit": lambda _: {"type": "submit"},
            ":timeout": self._set_timeout, ":task": self._show_task, ":files": self._show_files, ":help": self._help,
        }
        handler = handlers.get(name)
        if handler is None:
            self._print(f"unknown command {name}; type :help")
            return None
        return handler(rest.strip())

    def _with_timeout(self, action: dict[str, Any]) -> dict[str, Any]:
        if self.timeout is not None:
            action["timeout"] = self.timeout
        return action

    def _python(self, rest: str) -> dict[str, Any] | None:
        if rest:
            return self._with_timeout({"type": "python", "code": rest})
        lines = []
        while True:
            try:
                line = self._read("... ")
            except EOFError:
                break
            if line.strip() == END_CELL:
                break
            lines.append(line)
        code = "\n".join(lines)
        return self._with_timeout({"type": "python", "code": code}) if code.strip() else None

    def _set_timeout(self, rest: str) -> None:
        try:
            self.timeout = float(rest)
            self._print(f"actions now time out after {self.timeout:g} s")
        except ValueError:
            self._print("usage: :timeout SECONDS")

    def _show_task(self, _: str) -> None:
        self._print(self._obs["task"] if self._obs else "")

    def _show_files(self, _: str) -> None:
        self._print(self._obs["files"] if self._obs else "")

    def _help(self, _: str) -> None:
        self._print(HELP)
