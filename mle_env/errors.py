"""Every exception mle-env raises on purpose, in one tree rooted at :class:`MleEnvError`.

Exceptions are for the caller's mistakes and for broken infrastructure, and each message says what to
do next. What an agent does wrong (a bad action, a malformed submission, a crashing program) is never an
exception: it comes back as an observation or as ``valid_submission=False`` in a grade report.
"""

from __future__ import annotations


class MleEnvError(Exception):
    """Base class of every error mle-env raises on purpose."""


# --- competitions and the registry -------------------------------------------------------------------
class CompetitionError(MleEnvError):
    """Raised when a competition cannot be found or its folder is malformed."""


class UnknownCompetition(CompetitionError):
    """Raised when an id or alias names no registered competition (the message suggests close ids)."""


class CompetitionSpecError(CompetitionError):
    """Raised when a competition folder is malformed; the message names the file and the field at fault."""

    def __init__(self, path: object, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        where = f"{self.path}: field '{field}'" if field else self.path
        super().__init__(f"{where}: {problem}")


class RegistrationError(CompetitionError):
    """Raised when two competitions claim the same id or alias."""


# --- data preparation --------------------------------------------------------------------------------
class PrepareError(MleEnvError):
    """Raised when raw data cannot be fetched or prepared."""


class SourceUnavailable(PrepareError):
    """Raised when a data source cannot be used here (no credentials, rules not accepted, no network)."""


class ChecksumMismatch(PrepareError):
    """Raised when a fetched or prepared file does not have the sha256 the competition spec expects."""


class NotPrepared(MleEnvError):
    """Raised when a competition's data is needed but has not been prepared; says which command to run."""


# --- grading -----------------------------------------------------------------------------------------
class GradingError(MleEnvError):
    """Raised for grading problems that are not the submission's fault."""


class GraderError(GradingError):
    """Raised (and reported as such) when a metric crashes on a submission that passed validation."""


class LeaderboardError(GradingError):
    """Raised when a leaderboard file cannot be read or has no scores."""


# --- environment and sandboxes -----------------------------------------------------------------------
class SandboxError(MleEnvError):
    """Base class of sandbox failures that are the infrastructure's fault, never the agent's."""


class SandboxUnavailable(SandboxError):
    """Raised when the sandbox is gone or cannot be reached (engine down, container vanished).

    The episode cannot go on; evaluations count it as an infrastructure error, not as the agent's failure.
    """


class SandboxBroken(MleEnvError):
    """Raised by a sandbox when the agent's own actions broke it (its processes or its interpreter gone, the
    process table or memory exhausted from inside) so that it cannot run more actions.

    Not an infrastructure failure: the episode ends as the agent's result (truncated, status
    ``sandbox_broken``) and the submission present is still graded: ``copy_out`` keeps working.
    """


class ConfigError(MleEnvError, ValueError):
    """Raised when an option of ``make``, the CLI or an evaluation is malformed or out of range; the message
    names the option and what is allowed."""


class PrerequisiteError(MleEnvError):
    """Raised when something the caller asked for is missing here (Docker engine, GPU runtime, an extra)."""
