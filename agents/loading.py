"""Resolving an agent spec (a bundled name, ``package.module:Class`` or ``path/to/file.py:Class``) to its
policy class, and building the policy with its options (see :mod:`mle_env.agents`)."""


from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from mle_env.agents.policy import Policy
from mle_env.errors import MleEnvError

AGENTS: dict[str, str] = {
    "baseline": "mle_env.agents.baseline:BaselinePolicy",
    "react": "mle_env.agents.react:ReactPolicy",
    "aide": "mle_env.scaffolds.aide.policy:AidePolicy",
    "human": "mle_env.agents.human:HumanPolicy",
}
SPEC_FORMS = "baseline, react, aide, human, package.module:Class or path/to/file.py:Class"


class AgentError(MleEnvError, ValueError):
    """Raised for an unknown agent, a spec that names no policy class, or an option the agent does not take."""


def is_file_spec(spec: str) -> bool:
    """True for ``path/to/file.py:Class`` (as opposed to a bundled name or ``module:Class``)."""
    target = spec.rpartition(":")[0]
    return target.endswith(".py") or "/" in target or os.sep in target


def absolute_spec(spec: str) -> str:
    """``spec`` with a file path made absolute (so that it means the same in any working directory)."""
    if ":" not in spec or not is_file_spec(spec):
        return spec
    target, _, cls_name = spec.rpartition(":")
    return f"{Path(target).expanduser().resolve()}:{cls_name}"


def _import_file(path_text: str, spec: str) -> Any:
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise AgentError(f"agent {spec!r}: no such file {path}")
    # one module per file path, named so that pickle (spawned workers, Ray) finds it again in sys.modules
    name = f"mle_env_user_agent_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise AgentError(f"agent {spec!r}: {path} cannot be imported as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # so the file can import its neighbours
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise AgentError(f"agent {spec!r}: importing {path} failed: {type(e).__name__}: {e}") from e
    return module


def _import_module(name: str, spec: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name.split(".")[0] and e.name != name:
            raise AgentError(f"agent {spec!r}: importing module {name!r} failed: {e}") from e
        cwd = os.getcwd()
        if cwd in sys.path:
            raise AgentError(f"agent {spec!r}: no module named {name!r} (pass a file as path/to/file.py:Class)") from e
        sys.path.append(cwd)  # `mle-env` is a console script: unlike `python -m`, it does not see the cwd
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            sys.path.remove(cwd)
            raise AgentError(f"agent {spec!r}: no module named {name!r} (pass a file as path/to/file.py:Class)") \
                from e
    except Exception as e:
        raise AgentError(f"agent {spec!r}: importing module {name!r} failed: {type(e).__name__}: {e}") from e


def policy_class(spec: str) -> Any:
    """The class (or factory) a spec names, imported but not built.

    Raises:
        AgentError: an unknown name, a missing file, module or class, or a class without ``reset`` and ``act``.
    """
    if ":" not in spec:
        if spec.endswith(".py"):
            raise AgentError(f"agent {spec!r}: name the policy class too, as {spec}:ClassName")
        if spec not in AGENTS:
            raise AgentError(f"unknown agent {spec!r}; choose one of {SPEC_FORMS}")
        spec = AGENTS[spec]
    target, _, cls_name = spec.rpartition(":")
    if not target or not cls_name:
        raise AgentError(f"agent {spec!r}: expected {SPEC_FORMS}")
    module = _import_file(target, spec) if is_file_spec(spec) else _import_module(target, spec)
    cls = getattr(module, cls_name, None)
    if cls is None:
        classes = sorted(n for n, v in vars(module).items()
                         if inspect.isclass(v) and v.__module__ == module.__name__)
        raise AgentError(f"agent {spec!r}: {target} has no {cls_name!r}"
                         + (f"; it defines {', '.join(classes)}" if classes else ""))
    missing = [m for m in ("reset", "act") if not callable(getattr(cls, m, None))]
    if inspect.isclass(cls) and missing:
        raise AgentError(f"agent {spec!r}: {cls_name} is not a policy: it has no {' and no '.join(missing)} "
                         "method (a policy needs reset(obs, info) and act(obs, info); see mle_env.agents.BasePolicy)")
    if not callable(cls):
        raise AgentError(f"agent {spec!r}: {cls_name} is not a class or factory")
    return cls


def takes_option(spec: str, name: str) -> bool:
    """True when the policy ``spec`` names declares the option ``name`` in its constructor."""
    try:
        return name in inspect.signature(policy_class(spec)).parameters
    except (TypeError, ValueError):
        return False


def with_episode_seed(spec: str, options: dict[str, Any], seed: int | None) -> dict[str, Any]:
    """``options`` plus ``seed=seed`` when the policy declares a ``seed`` option and ``options`` set none, so
    that an episode's seed (``--seed``, an evaluation's seeds 0..k-1) also varies the agent's own randomness
    (the baseline's folds and model seeds)."""
    if seed is None or "seed" in options or not takes_option(spec, "seed"):
        return options
    return {**options, "seed": seed}


def make_policy(spec: str, **options: Any) -> Policy:
    """The agent ``spec`` names (see the module docstring), built with ``options``.

    Raises:
        AgentError: no agent has that name, the file, module or class is missing, the class is not a policy,
            or it takes no such option (the message lists what it takes).
    """
    cls = policy_class(spec)
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        parameters = None
    if parameters is not None and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        unknown = sorted(set(options) - set(parameters))
        if unknown:
            raise AgentError(f"agent {spec!r} takes no option {', '.join(map(repr, unknown))}; "
                             f"its options: {', '.join(parameters) or 'none'}")
    try:
        policy = cls(**options)
    except TypeError as e:  # a required argument not given, a factory's wrong signature
        raise AgentError(f"agent {spec!r} could not be built with options {options or '{}'}: {e}") from e
    missing = [m for m in ("reset", "act") if not callable(getattr(policy, m, None))]
    if missing:
        raise AgentError(f"agent {spec!r} built {type(policy).__name__}, which is not a policy: it has no "
                         f"{' and no '.join(missing)} method (a policy needs reset(obs, info) and act(obs, info))")
    return policy

