"""The host's side of the validation endpoint that agents reach inside the sandbox.

MLE-bench's containers answer ``POST http://localhost:5000/validate`` (and ``/home/validate_submission.sh
FILE``) with whether a submission is valid and why not, never with a score. Here the sandbox's worker
runs that HTTP server and relays each posted file in chunks over its channel (see worker.py); this module
puts the chunks back together, checks the file with the episode's validator and builds the answer.

The files in :data:`CONVENTION_FILES` are what an MLE-bench agent expects beside ``/home/data``: the task
text as ``/home/instructions.txt`` and the validation script.
"""

from __future__ import annotations

import base64
import binascii
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: where the endpoint listens inside the sandbox (MLE-bench's port)
VALIDATION_PORT = 5000
VALIDATION_URL = f"http://localhost:{VALIDATION_PORT}/validate"
INSTRUCTIONS_NAME = "instructions.txt"
SCRIPT_NAME = "validate_submission.sh"
#: MLE-bench's answers
VALID_MESSAGE = "Submission is valid."
INVALID_PREFIX = "Submission invalid! "



def validate_script(workdir: str) -> str:
    """``validate_submission.sh``: posts a file to the endpoint with curl where the image has it (as
    MLE-bench's script does), else with Python's standard library, and prints the JSON answer."""
    return f"""#!/bin/bash
# Check a submission with the validation endpoint: it answers whether the file is valid and why not,
# never its score. Usage: {SCRIPT_NAME} [FILE]   (default: {workdir}/submission/submission.csv)
FILE="${{1:-{workdir}/submission/submission.csv}}"
URL="{VALIDATION_URL}"
if [ ! -f "$FILE" ]; then
    echo "File $FILE does not exist."
    exit 1
fi
if command -v curl >/dev/null 2>&1; then
    exec curl -s -X POST -F "file=@$FILE" "$URL"
fi
exec python3 - "$FILE" "$URL" <<'EOF'
import sys, urllib.request
data = open(sys.argv[1], "rb").read()
request = urllib.request.Request(sys.argv[2], data=data, headers={{"Content-Type": "text/csv"}})
with urllib.request.urlopen(request) as response:
    print(response.read().decode())
EOF
"""


class ValidationEndpoint:
    """Turns the worker's ``validate`` events into verdicts (``WorkerClient``'s ``on_event``).

    Args:
        validate: checks a file and returns "valid" or the reason it is not (``Grader.validate``).
        max_bytes: largest file accepted; a larger one is answered invalid without being kept.
    """

    #: uploads assembled at once; an agent that starts more only loses its oldest
    MAX_PENDING = 4
    #: seconds a connection to the in-sandbox endpoint may sit idle before the relay drops it
    idle_s = 30.0

    def __init__(self, validate: Callable[[Path], str], max_bytes: int) -> None:
        self.validate = validate
        self.max_bytes = max_bytes
        self._folder: Path | None = None  # made with the first upload
        self._pending: dict[int, tuple[Path, int, str]] = {}  # vid -> (file, bytes so far, problem)
        self.answered = 0  #: requests answered with a verdict (an episode's disclosure counts them)

    def __call__(self, event: dict[str, Any]) -> dict[str, Any] | None:
        vid = event.get("vid")
        if event.get("event") != "validate" or type(vid) is not int:
            return None
        if "chunk" in event:
            self._add(vid, event["chunk"])
            return None
        if event.get("end") is not True:
            return None
        path, _, problem = self._pending.pop(vid, (None, 0, "nothing was received"))
        try:
            verdict = problem if problem or path is None else self.validate(path)
        except Exception as e:  # noqa: BLE001 - a verdict is owed whatever the file holds
            verdict = f"the file could not be checked ({type(e).__name__}: {e})"
        finally:
            if path is not None:
                path.unlink(missing_ok=True)
        result = VALID_MESSAGE if verdict == "valid" else INVALID_PREFIX + verdict
        self.answered += 1
        return {"op": "validated", "vid": vid, "result": result}

    def _add(self, vid: int, chunk: Any) -> None:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="mle-env-endpoint-"))
        if vid not in self._pending:
            while len(self._pending) >= self.MAX_PENDING:
                oldest = next(iter(self._pending))
                self._pending.pop(oldest)[0].unlink(missing_ok=True)
            self._pending[vid] = (self._folder / f"{vid}.csv", 0, "")
        path, size, problem = self._pending[vid]
        if problem:
            return
        try:
            data = base64.b64decode(chunk, validate=True) if isinstance(chunk, str) else None
        except (binascii.Error, ValueError):
            data = None
        if data is None:
            problem = "the upload was garbled; post the file again"
        elif size + len(data) > self.max_bytes:
            problem = f"the submission is over the {self.max_bytes / 2**20:.0f} MiB limit"
        if problem:
            path.unlink(missing_ok=True)
            self._pending[vid] = (path, size, problem)
            return
        with path.open("ab") as f:
            f.write(data)
        self._pending[vid] = (path, size + len(data), "")

    def close(self) -> None:
        """Remove what uploads left behind (safe to call again)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        self._pending.clear()


def instructions_text(task: str, workdir: str) -> str:
    """``instructions.txt``: how the MLE-bench conventions map onto this sandbox, then the task itself."""
    return f"""Instructions (also in {workdir}/{INSTRUCTIONS_NAME})

- The competition's files are in {workdir}/data/ (read-only).
- Write your predictions to {workdir}/submission/submission.csv: only that file is graded.
- {workdir}/code/ and {workdir}/logs/ are yours to use.
- To check a file without seeing a score: {workdir}/{SCRIPT_NAME} FILE, or
  curl -X POST -F "file=@FILE" {VALIDATION_URL}
  It answers "{VALID_MESSAGE}" or "{INVALID_PREFIX}" followed by the reason.

{task}"""
