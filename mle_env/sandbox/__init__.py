"""Sandboxes: where actions run. One interface (:class:`Sandbox`), one module per backend.

- ``docker`` (:mod:`mle_env.sandbox.docker`): a container per episode.
- ``local`` (:mod:`mle_env.sandbox.local`): bubblewrap namespaces on this machine, isolated as well (Linux).
- ``unisolated`` (:mod:`mle_env.sandbox.unisolated`): plain subprocesses as this user; an explicit opt-in
  for trusted code, never chosen by ``auto``.

``choose_backend("auto")`` picks docker when an engine answers and the image is present, else the isolated
local sandbox when bubblewrap works here, and otherwise raises, saying what to install.
"""

from mle_env.sandbox.backends import BACKENDS, choose_backend, create_sandbox
from mle_env.sandbox.base import Sandbox, SandboxInfo, SandboxLimits
from mle_env.sandbox.exec_result import ExecResult

__all__ = ["BACKENDS", "ExecResult", "Sandbox", "SandboxInfo", "SandboxLimits", "choose_backend", "create_sandbox"]
