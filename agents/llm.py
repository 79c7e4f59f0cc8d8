"""The one LLM client of mle-env's agents: chat completions against any OpenAI-compatible server.

It wraps the official ``openai`` package (the ``llm`` extra: ``pip install 'mle-env[llm]'``) and adds what
agents need around it: configuration from the environment, retries with backoff that the caller can see,
token counts, latency and cost per call, and one-line errors that say what to fix.

Configuration (:meth:`LLMConfig.from_env`), first match wins:

=================  ===============================  ==========================================
setting            environment variables            when none is set
=================  ===============================  ==========================================
base URL           MLE_ENV_LLM_BASE_URL,            OpenAI's own API
                   OPENAI_BASE_URL
model              MLE_ENV_LLM_MODEL                the server's model, if it serves exactly one
API key            MLE_ENV_LLM_API_KEY,             ``"none"`` for a server of your own (a base
                   OPENAI_API_KEY                   URL is set); an error for OpenAI's API
prices (USD per    MLE_ENV_LLM_PROMPT_PRICE,        no cost is computed
1M tokens)         MLE_ENV_LLM_COMPLETION_PRICE
=================  ===============================  ==========================================

Retries: rate limits (429), timeouts, connection failures and server errors (5xx) are retried up to
``max_retries`` times with exponential backoff and jitter, waiting what ``Retry-After`` asks when the
server says. Other 4xx answers are never retried: they raise :class:`LLMError` at once.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import os
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from mle_env.errors import MleEnvError, PrerequisiteError

OPENAI_URL = "https://api.openai.com/v1"
LOCAL_API_KEY = "none"
MAX_BACKOFF_S = 60.0
_ENV = {
    "base_url": ("MLE_ENV_LLM_BASE_URL", "OPENAI_BASE_URL"),
    "model": ("MLE_ENV_LLM_MODEL",),
    "api_key": ("MLE_ENV_LLM_API_KEY", "OPENAI_API_KEY"),
    "prompt_price_per_1m": ("MLE_ENV_LLM_PROMPT_PRICE",),
    "completion_price_per_1m": ("MLE_ENV_LLM_COMPLETION_PRICE",),
}


class LLMError(MleEnvError):
    """An LLM call failed for good; the message is one line saying what to fix.

    ``kind`` says why: ``auth`` (key refused), ``model`` (unknown model), ``context`` (the prompt is too long
    for the model), ``request`` (another 4xx), ``unavailable`` (no answer after the retries), ``response``
    (an answer that is not a chat completion), ``config`` (settings missing or malformed). Only
    ``unavailable`` may go away by itself.
    """

    def __init__(self, message: str, kind: str = "request") -> None:
        super().__init__(message)
        self.kind = kind


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise PrerequisiteError("the LLM agents need the openai package: pip install 'mle-env[llm]'") from None
    return openai


def _one_line(text: Any, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# --- configuration -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the LLM.

    Attributes:
        base_url: the server's OpenAI-compatible root (usually ending in ``/v1``); None for OpenAI's API.
        model: the model name sent with each request.
        api_key: the bearer key (any non-empty string for servers that ignore it).
        temperature, max_tokens: defaults for each call (a call may override them).
        timeout_s: seconds one HTTP request may take.
        max_retries: retries after the first attempt, for transient failures only.
        prompt_price_per_1m, completion_price_per_1m: USD per million tokens; with at least one set, each
            call's cost is computed (an unset price counts as 0).
        retry_base_s: the first backoff in seconds; it doubles with each retry (with jitter), up to 60 s.
    """

    base_url: str | None
    model: str
    api_key: str
    temperature: float = 0.2
    max_tokens: int = 1024
    timeout_s: float = 120.0
    max_retries: int = 5
    prompt_price_per_1m: float | None = None
    completion_price_per_1m: float | None = None
    retry_base_s: float = 0.5

    @property
    def url(self) -> str:
        """The base URL actually used (OpenAI's when none is set)."""
        return (self.base_url or OPENAI_URL).rstrip("/")

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """A config from the environment (see the module docstring); ``overrides`` that are None are ignored.

        Raises:
            LLMError: no API key for OpenAI's API, a price that is not a number, or no model given while
                the server does not serve exactly one.
            TypeError: an override that is not a field of LLMConfig.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(f"unknown LLMConfig field(s): {', '.join(unknown)}")
        values = _from_environment()
        values.update({k: v for k, v in overrides.items() if v is not None})
        values.setdefault("base_url", None)
        if not values.get("api_key"):
            if values["base_url"] is None:
                raise LLMError("no API key for OpenAI's API: set MLE_ENV_LLM_API_KEY (or OPENAI_API_KEY), or point "
                               "MLE_ENV_LLM_BASE_URL at an OpenAI-compatible server", kind="config")
            values["api_key"] = LOCAL_API_KEY
        if not values.get("model"):
            values["model"] = _only_model(values["base_url"], values["api_key"])
        return cls(**values)


def _from_environment() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field, variables in _ENV.items():
        found = next(((v, os.environ[v]) for v in variables if os.environ.get(v)), None)
        if found is None:
            continue
        variable, text = found
        if field.endswith("_per_1m"):
            try:
                values[field] = float(text)
            except ValueError:
                raise LLMError(f"{variable}={text!r} is not a number (USD per million tokens)", kind="config") from None
        else:
            values[field] = text
    return values


def list_models(base_url: str | None, api_key: str, timeout_s: float = 10.0) -> list[str] | None:
    """The model names the server lists at ``GET /models``, or None when it cannot say."""
    openai = _openai()
    try:
        client = openai.OpenAI(base_url=base_url or OPENAI_URL, api_key=api_key, max_retries=0, timeout=timeout_s)
        return [m.id for m in client.models.list()]
    except openai.OpenAIError:
        return None


def _only_model(base_url: str | None, api_key: str) -> str:
    models = list_models(base_url, api_key)
    if models is not None and len(models) == 1:
        return models[0]
    url = (base_url or OPENAI_URL).rstrip("/")
    served = "the server did not list its models" if models is None else f"it serves {', '.join(models) or 'none'}"
    raise LLMError(f"no model given for {url} and {served}: set MLE_ENV_LLM_MODEL (or pass model=...)", kind="config")


def _get_json(url: str, api_key: str, timeout_s: float) -> Any:
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - the configured server
            return json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError):
        return None


def server_context_window(base_url: str, model: str = "", api_key: str = LOCAL_API_KEY,
                          timeout_s: float = 5.0) -> int | None:
    """The context size (tokens) the server at ``base_url`` (its OpenAI-compatible root, e.g. ``.../v1``)
    reports: llama.cpp's ``GET /props`` at the server's root (``n_ctx``, or
    ``default_generation_settings.n_ctx``), else ``meta.n_ctx`` of ``model`` (or of the only model) in
    ``GET /models``; None when it reports neither or does not answer."""
    url = base_url.rstrip("/")
    root = url[: -len("/v1")] if url.endswith("/v1") else url
    props = _get_json(f"{root}/props", api_key, timeout_s)
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        for value in (props.get("n_ctx"), settings.get("n_ctx") if isinstance(settings, dict) else None):
            if isinstance(value, int) and value > 0:
                return value
    listing = _get_json(f"{url}/models", api_key, timeout_s)
    models = listing.get("data") if isinstance(listing, dict) else None
    if isinstance(models, list):
        chosen = [m for m in models if isinstance(m, dict) and (m.get("id") == model or len(models) == 1)]
        meta = chosen[0].get("meta") if chosen else None
        value = meta.get("n_ctx") if isinstance(meta, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


# --- results -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolCall:
    """A function call the model asked for: ``arguments`` is the parsed JSON object, or ``{"_raw": text}``
    when the model's arguments are not a JSON object. ``id`` is the server's call id (to answer it)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Completion:
    """One successful chat call.

    Attributes:
        content: the reply's text ("" when the model only called tools).
        tool_calls: the function calls it asked for.
        prompt_tokens, completion_tokens: as the server counted them (0 when it did not say).
        latency_s: wall time of the whole call, retries and waits included.
        cost: USD, when prices are configured; else None.
        model: the model that answered, as the server names it.
        finish_reason: ``stop``, ``length``, ``tool_calls``, ... ("" when not given).
        retries: failed attempts before this answer.
    """

    content: str
    tool_calls: tuple[ToolCall, ...]
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cost: float | None
    model: str
    finish_reason: str
    retries: int

    def record(self) -> dict[str, Any]:
        """Everything about the call, JSON-able, for trajectories and journals."""
        out = dataclasses.asdict(self)
        out["tool_calls"] = [dataclasses.asdict(call) for call in self.tool_calls]
        return out


def _parse_arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return {"_raw": str(text)}
    return value if isinstance(value, dict) else {"_raw": str(text)}


def _tool_calls(message: Any) -> tuple[ToolCall, ...]:
    calls = []
    for call in getattr(message, "tool_calls", None) or ():
        function = getattr(call, "function", None)
        if function is None or not getattr(function, "name", None):
            continue
        calls.append(ToolCall(function.name, _parse_arguments(function.arguments), getattr(call, "id", "") or ""))
    return tuple(calls)


# --- the client --------------------------------------------------------------------------------------
class LLMClient:
    """Chat completions with retries and accounting; ``calls`` holds every successful call's Completion."""

    def __init__(self, config: LLMConfig | None = None, **overrides: Any) -> None:
        """Use ``config``, or :meth:`LLMConfig.from_env`; ``overrides`` (LLMConfig fields) that are not None
        replace its values."""
        given = {k: v for k, v in overrides.items() if v is not None}
        self.config = LLMConfig.from_env(**given) if config is None else dataclasses.replace(config, **given)
        openai = _openai()
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.config.url, api_key=self.config.api_key, max_retries=0,
                                     timeout=self.config.timeout_s)
        self.calls: list[Completion] = []

    def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None, temperature: float | None = None, stop: list[str] | None = None,
    ) -> Completion:
        """Send ``messages`` (OpenAI chat format) and return the reply; ``stop``: strings that end the reply
        where the model writes one (not included in it; finish reason ``stop``).

        Raises:
            LLMError: the key was refused, the model is unknown, the request was rejected, or the server did
                not answer after ``max_retries`` retries.
        """
        request: dict[str, Any] = {
            "model": self.config.model, "messages": messages,
            "max_tokens": max_tokens if max_tokens is not None else self.config.max_tokens,
            "temperature": temperature if temperature is not None else self.config.temperature,
        }
        if tools:
            request["tools"] = tools
        if stop:
            request["stop"] = stop
        started = time.monotonic()
        response, retries = self._send(request)
        completion = self._completion(response, retries, time.monotonic() - started)
        self.calls.append(completion)
        return completion

    def usage(self) -> dict[str, Any]:
        """Totals over ``calls``: calls, prompt_tokens, completion_tokens, cost (None if never priced),
        retries and latency_s."""
        costs = [c.cost for c in self.calls if c.cost is not None]
        return {
            "calls": len(self.calls),
            "prompt_tokens": sum(c.prompt_tokens for c in self.calls),
            "completion_tokens": sum(c.completion_tokens for c in self.calls),
            "cost": sum(costs) if costs else None,
            "retries": sum(c.retries for c in self.calls),
            "latency_s": sum(c.latency_s for c in self.calls),
        }

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def context_window(self, default: int | None = None) -> int | None:
        """The server's context size in tokens, asked once and remembered: llama.cpp's ``GET /props``
        (``n_ctx``) on the server's root, else the model's ``meta.n_ctx`` in ``GET /models``; ``default``
        when the server says neither (OpenAI's API does not)."""
        if not hasattr(self, "_n_ctx"):
            self._n_ctx = server_context_window(self.config.url, self.config.model, self.config.api_key)
        return self._n_ctx if self._n_ctx is not None else default

    # -- internals --------------------------------------------------------------------------------------
    def _send(self, request: dict[str, Any]) -> tuple[Any, int]:
        """The raw response and the number of retries it took."""
        openai = self._openai
        for attempt in range(self.config.max_retries + 1):
            try:
                return self._client.chat.completions.create(**request), attempt
            except openai.APIStatusError as e:
                if not _transient(e.status_code):
                    raise self._status_error(e) from None
                last: Exception = e
                wait = _retry_after(e.response)
            except openai.APIConnectionError as e:  # includes timeouts
                last, wait = e, None
            if attempt < self.config.max_retries:
                time.sleep(wait if wait is not None else self._backoff(attempt))
        attempts = self.config.max_retries + 1
        raise LLMError(
            f"the LLM server at {self.config.url} did not answer after {attempts} attempt{'s' * (attempts > 1)} "
            f"({_describe(last)}); check that it runs and MLE_ENV_LLM_BASE_URL points at it", kind="unavailable",
        )

    def _backoff(self, attempt: int) -> float:
        ceiling = min(MAX_BACKOFF_S, self.config.retry_base_s * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)

    def _status_error(self, error: Any) -> LLMError:
        status, url, detail = error.status_code, self.config.url, _one_line(_server_message(error))
        if status in (401, 403):
            return LLMError(f"the LLM server at {url} refused the API key ({status}: {detail}); set "
                            "MLE_ENV_LLM_API_KEY (or OPENAI_API_KEY) to a valid key", kind="auth")
        if status == 404 or "model_not_found" in str(getattr(error, "body", "")):
            models = list_models(self.config.base_url, self.config.api_key)
            served = f"it serves: {', '.join(models)}" if models else "it did not list its models"
            return LLMError(f"the LLM server at {url} has no model {self.config.model!r} ({status}: {detail}); "
                            f"{served}; set MLE_ENV_LLM_MODEL (and check that MLE_ENV_LLM_BASE_URL ends in /v1)",
                            kind="model")
        kind = "context" if re.search(r"context|too long|maximum.*tokens", detail, re.I) else "request"
        return LLMError(f"the LLM server at {url} rejected the request ({status}: {detail})", kind=kind)

    def _completion(self, response: Any, retries: int, latency: float) -> Completion:
        choices = getattr(response, "choices", None)
        if not choices:
            raise LLMError(f"the LLM server at {self.config.url} answered without a completion: "
                           f"{_one_line(response)}", kind="response")
        choice, usage = choices[0], getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        return Completion(
            content=choice.message.content or "", tool_calls=_tool_calls(choice.message), prompt_tokens=prompt,
            completion_tokens=completion, latency_s=latency, cost=self._cost(prompt, completion),
            model=getattr(response, "model", None) or self.config.model, finish_reason=choice.finish_reason or "",
            retries=retries,
        )

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        prompt_price, completion_price = self.config.prompt_price_per_1m, self.config.completion_price_per_1m
        if prompt_price is None and completion_price is None:
            return None
        return (prompt_tokens * (prompt_price or 0.0) + completion_tokens * (completion_price or 0.0)) / 1e6


def _transient(status: int) -> bool:
    return status == 429 or status == 408 or status >= 500


def _retry_after(response: Any) -> float | None:
    """Seconds the server asks to wait (``Retry-After``: seconds or an HTTP date; ``retry-after-ms``)."""
    headers = getattr(response, "headers", None) or {}
    try:
        if headers.get("retry-after-ms") is not None:
            return min(MAX_BACKOFF_S, max(0.0, float(headers["retry-after-ms"]) / 1000))
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            seconds = float(value)
        except ValueError:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        return min(MAX_BACKOFF_S, max(0.0, seconds))
    except (TypeError, ValueError, OverflowError):
        return None


def _server_message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(getattr(error, "message", "") or error)


def _describe(error: Exception) -> str:
    status = getattr(error, "status_code", None)
    if status is not None:
        return f"last answer {status}: {_one_line(_server_message(error), 120)}"
    cause = error.__cause__ or error.__context__
    return _one_line(f"{type(error).__name__}: {cause or error}", 160)
