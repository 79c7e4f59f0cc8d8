"""The LLM client against a real local model server and a scripted OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import socket
import sys
import time

import pytest
from llm_fixture import FakeOpenAI, chat_body, error_body, fake_llm, llm_base_url  # noqa: F401 - fixtures

from mle_env.agents.llm import Completion, LLMClient, LLMConfig, LLMError
from mle_env.errors import PrerequisiteError

LLM_VARIABLES = ("MLE_ENV_LLM_BASE_URL", "MLE_ENV_LLM_MODEL", "MLE_ENV_LLM_API_KEY", "MLE_ENV_LLM_PROMPT_PRICE",
                 "MLE_ENV_LLM_COMPLETION_PRICE", "OPENAI_BASE_URL", "OPENAI_API_KEY")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def fast_client(url: str, **fields: object) -> LLMClient:
    """A client whose retries wait milliseconds, not seconds."""
    config = LLMConfig(base_url=url, model="fake-model", api_key="key", retry_base_s=0.01, timeout_s=10)
    return LLMClient(config, **fields)


# --- the real server -----------------------------------------------------------------------------------
@pytest.mark.llm
@pytest.mark.slow
def test_real_completion_counts_tokens_and_time(llm_base_url: str, clean_env: pytest.MonkeyPatch) -> None:  # noqa: F811
    clean_env.setenv("MLE_ENV_LLM_BASE_URL", llm_base_url)
    client = LLMClient(prompt_price_per_1m=1.0, completion_price_per_1m=2.0)  # the model: the one it serves
    done = client.chat([{"role": "user", "content": "Write a Python function that adds two numbers."}],
                       max_tokens=48, temperature=0.0)
    assert isinstance(done, Completion) and done.content.strip()
    assert done.prompt_tokens > 0 and done.completion_tokens > 0 and done.latency_s > 0
    assert done.retries == 0 and done.finish_reason in ("stop", "length") and done.model
    assert done.cost == pytest.approx((done.prompt_tokens * 1.0 + done.completion_tokens * 2.0) / 1e6)
    record = json.loads(json.dumps(done.record()))
    assert record["content"] == done.content and record["tool_calls"] == []
    assert client.usage() | {"latency_s": 0} == {"calls": 1, "prompt_tokens": done.prompt_tokens,
                                                  "completion_tokens": done.completion_tokens, "cost": done.cost,
                                                  "retries": 0, "latency_s": 0}
    print(f"\n{done.completion_tokens} tokens in {done.latency_s:.2f} s "
          f"({done.completion_tokens / done.latency_s:.1f} tok/s incl. the prompt)")


@pytest.mark.llm
def test_real_server_answers_tool_requests(llm_base_url: str) -> None:  # noqa: F811
    from mle_env.text_interface import TOOLS, parse_text_action, tool_to_action

    client = LLMClient(base_url=llm_base_url, api_key="none", model="whatever")
    done = client.chat([{"role": "system", "content": "You operate a Linux machine through tools."},
                        {"role": "user", "content": "List the files in the folder ./data."}],
                       tools=TOOLS, max_tokens=64, temperature=0.0)
    actions = [tool_to_action(c.name, c.arguments) for c in done.tool_calls] or [parse_text_action(done.content)]
    assert actions[0] is not None and actions[0]["type"] in ("shell", "python"), done


@pytest.mark.llm
def test_llama_cpp_ignores_the_model_name(llm_base_url: str) -> None:  # noqa: F811
    """llama.cpp serves its one model whatever name is asked for; the Completion names the real one.
    (The error for an unknown model is tested against the scripted server below.)"""
    client = LLMClient(base_url=llm_base_url, api_key="none", model="no-such-model")
    done = client.chat([{"role": "user", "content": "Say OK."}], max_tokens=4)
    assert done.model != "no-such-model" and done.completion_tokens > 0


# --- configuration -------------------------------------------------------------------------------------
def test_config_from_env_precedence(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_BASE_URL", "http://openai-fallback/v1")
    clean_env.setenv("OPENAI_API_KEY", "openai-key")
    config = LLMConfig.from_env(model="m")
    assert (config.base_url, config.api_key, config.model) == ("http://openai-fallback/v1", "openai-key", "m")
    clean_env.setenv("MLE_ENV_LLM_BASE_URL", "http://mine/v1")
    clean_env.setenv("MLE_ENV_LLM_API_KEY", "my-key")
    clean_env.setenv("MLE_ENV_LLM_MODEL", "env-model")
    clean_env.setenv("MLE_ENV_LLM_PROMPT_PRICE", "0.5")
    clean_env.setenv("MLE_ENV_LLM_COMPLETION_PRICE", "1.5")
    config = LLMConfig.from_env(model=None, api_key=None, temperature=0.7)
    assert (config.base_url, config.api_key, config.model) == ("http://mine/v1", "my-key", "env-model")
    assert (config.prompt_price_per_1m, config.completion_price_per_1m, config.temperature) == (0.5, 1.5, 0.7)
    assert LLMConfig.from_env(base_url="http://override/v1", model="x").base_url == "http://override/v1"
    with pytest.raises(TypeError, match="colour"):
        LLMConfig.from_env(colour="red")


def test_config_errors_say_what_to_set(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(LLMError, match="MLE_ENV_LLM_API_KEY"):
        LLMConfig.from_env(model="gpt-x")
    clean_env.setenv("MLE_ENV_LLM_PROMPT_PRICE", "cheap")
    with pytest.raises(LLMError, match="MLE_ENV_LLM_PROMPT_PRICE='cheap' is not a number"):
        LLMConfig.from_env(model="m", base_url="http://x/v1")


def test_model_defaults_to_the_only_one_served(fake_llm: FakeOpenAI, clean_env: pytest.MonkeyPatch) -> None:  # noqa: F811
    clean_env.setenv("MLE_ENV_LLM_BASE_URL", fake_llm.url)
    config = LLMConfig.from_env()
    assert (config.model, config.api_key) == ("fake-model", "none")
    fake_llm.models = ["big", "small"]
    with pytest.raises(LLMError, match="it serves big, small: set MLE_ENV_LLM_MODEL"):
        LLMConfig.from_env()


def test_missing_openai_package_is_a_prerequisite_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # what an environment without the extra looks like
    with pytest.raises(PrerequisiteError, match=r"pip install 'mle-env\[llm\]'"):
        LLMClient(LLMConfig(base_url="http://x/v1", model="m", api_key="k"))


# --- retries and errors --------------------------------------------------------------------------------
def test_rate_limit_and_server_error_are_retried(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(429, error_body("slow down"), {"Retry-After": "0"})
    fake_llm.reply(503, error_body("loading model"))
    fake_llm.reply(200, chat_body("hello", prompt_tokens=5, completion_tokens=3))
    client = fast_client(fake_llm.url)
    done = client.chat([{"role": "user", "content": "hi"}])
    assert (done.content, done.retries, done.prompt_tokens, done.completion_tokens) == ("hello", 2, 5, 3)
    assert len(fake_llm.requests) == 3 and client.usage()["retries"] == 2


def test_retry_after_is_honoured(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(429, error_body("slow down"), {"Retry-After": "1"}).reply(200, chat_body("ok"))
    started = time.monotonic()
    assert fast_client(fake_llm.url).chat([{"role": "user", "content": "hi"}]).retries == 1
    assert time.monotonic() - started >= 0.9


def test_tool_calls_are_parsed(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    calls = [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"code": "ls"}'}},
             {"id": "c2", "type": "function", "function": {"name": "python", "arguments": "not json"}}]
    fake_llm.reply(200, chat_body("", tool_calls=calls))
    done = fast_client(fake_llm.url).chat([{"role": "user", "content": "hi"}], tools=[])
    assert [(c.name, c.arguments, c.id) for c in done.tool_calls] == [
        ("shell", {"code": "ls"}, "c1"), ("python", {"_raw": "not json"}, "c2")]
    assert done.record()["tool_calls"][0] == {"name": "shell", "arguments": {"code": "ls"}, "id": "c1"}


def test_wrong_key_names_the_variable_and_is_not_retried(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(401, error_body("Incorrect API key provided"))
    with pytest.raises(LLMError, match="MLE_ENV_LLM_API_KEY") as caught:
        fast_client(fake_llm.url).chat([{"role": "user", "content": "hi"}])
    assert fake_llm.url in str(caught.value) and caught.value.kind == "auth" and len(fake_llm.requests) == 1


def test_unknown_model_lists_the_served_ones(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.models = ["qwen-small", "qwen-big"]
    fake_llm.reply(404, error_body("The model `gpt-9` does not exist", code="model_not_found"))
    with pytest.raises(LLMError) as caught:
        fast_client(fake_llm.url, model="gpt-9").chat([{"role": "user", "content": "hi"}])
    message = str(caught.value)
    assert "'gpt-9'" in message and "qwen-small, qwen-big" in message and "MLE_ENV_LLM_MODEL" in message
    assert caught.value.kind == "model" and len(fake_llm.requests) == 1 and "\n" not in message


def test_other_client_errors_are_not_retried(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(400, error_body("the request exceeds the available context size"))
    with pytest.raises(LLMError, match="rejected the request") as caught:
        fast_client(fake_llm.url).chat([{"role": "user", "content": "hi"}])
    assert caught.value.kind == "context" and len(fake_llm.requests) == 1


def test_connection_refused_fails_after_the_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    url = f"http://127.0.0.1:{port}/v1"
    client = fast_client(url, max_retries=2)
    with pytest.raises(LLMError, match="did not answer after 3 attempts") as caught:
        client.chat([{"role": "user", "content": "hi"}])
    assert url in str(caught.value) and caught.value.kind == "unavailable" and client.calls == []
