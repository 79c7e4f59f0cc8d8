"""``mle-env view``'s data and server: built from real runs (an evaluation, an episode, an AIDE search) and
from hand-written run folders; read-only; and a server that answers only its own files and keys."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from viewer_runs import (
    ANSI,
    HOSTILE,
    aide_episode,
    evaluate_hostile,
    grade,
    hostile_journal,
    listing,
    synthetic_run,
    write_trajectory,
)

from mle_env.cli import main
from mle_env.evaluation.report import summary_of
from mle_env.viewer.bundle import write_bundle
from mle_env.viewer.clean import clean_text, script
from mle_env.viewer.index import ViewError, ViewIndex
from mle_env.viewer.server import CSP, ViewServer


def _decode(body: bytes) -> object:
    """The data of a data file (``mleView.receive("key",JSON);``)."""
    text = body.decode("ascii")
    assert text.startswith('mleView.receive("') and text.endswith(");\n")
    return json.loads(text[text.index(",") + 1: -3])


@pytest.fixture
def serve() -> Iterator:
    servers = []

    def start(index: ViewIndex, **kwargs: object) -> ViewServer:
        server = ViewServer(index, "127.0.0.1", 0, **kwargs)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _get(server: ViewServer, path: str, host: str | None = None, method: str = "GET") -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host or f"127.0.0.1:{server.server_address[1]}")
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), body


@pytest.fixture
def real_run(tiny_prepared: str, home: Path, bwrap_ready: None, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_ENV_COMPETITIONS", str(home.parent / "competitions"))  # the workers see tiny-comp
    return evaluate_hostile(tmp_path / "run", tiny_prepared)


def test_a_real_evaluation_is_indexed_served_and_never_written(real_run: Path, serve, tmp_path: Path) -> None:
    before = listing(real_run)
    index = ViewIndex([real_run])
    m = index.manifest()
    run = m["runs"][0]
    assert m["start"] == "#/" and run["kind"] == "run" and m["compare"] is None
    assert run["summary"]["headline"] == summary_of(real_run)["headline"]  # as `mle-env report` gives it
    assert run["summary"]["episodes"]["ok"] == 2 and run["summary"]["disclosure"]
    cols = run["columns"]
    assert cols["n"] == 2 and cols["seed"] == [0, 1] and cols["competition"]["values"] == ["tiny-comp"]
    assert cols["status"]["values"] == ["ok"] and all(isinstance(w, float) for w in cols["wall"])
    assert cols["cost"] == [pytest.approx(0.0012)] * 2  # the LLM call the agent recorded
    assert [dict(zip(["mean", "sem"], c, strict=True)) for c in run["summary"]["leaderboard"][0]["cells"]]

    episode = index.data("e0-1")
    assert episode["header"]["competition_id"] == "tiny-comp" and episode["header"]["seed"] == 1
    steps = episode["steps"]
    assert [s["type"] for s in steps] == ["shell", "python", "shell", "submit"]
    assert steps[0]["llm"] == [{"model": "test-model", "prompt_tokens": 1234, "completion_tokens": 56, "cost": 0.0012}]
    assert steps[1]["repairs"]["fired"] == ["harness_work"] and "-print('<script>" in steps[1]["repairs"]["diff"]
    assert HOSTILE[1] in steps[1]["stderr"] and "100" in steps[0]["stdout"].splitlines()
    assert episode["end"]["status"] == "submitted" and episode["grade"][0][0] == "status"
    assert [f["path"] for f in episode["code"]] == ["train.py"] and "<b>bold</b>" in episode["code"][0]["text"]
    assert episode["submission"]["header"] == ["id", "target"] and len(episode["submission"]["rows"]) == 10
    body = index.script("e0-1")
    data = _decode(body)
    out = data["steps"][0]["stdout"]
    for text in HOSTILE:
        assert text in out  # verbatim: the page shows it as text
    assert "RED-TEXT LINK-TEXT" in out and "\x1b" not in out and "\\x1b" not in out  # escapes stripped
    assert b"<" not in body and b"\x1b" not in body  # ASCII, and markup characters as escapes
    search = index.data("s0")["texts"]
    assert len(search) == 2 and "javascript:window.__pwned=1" in search[0] and "seq 1 100" in search[0]
    assert index.data("t0-0") is None and index.data("e0-2") is None and index.data("e1-0") is None

    server = serve(index)
    status, headers, _ = _get(server, "/")
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    for path in ("/data/index.js", "/data/e0-0.js", "/data/s0.js", "/app.js", "/app.css", "/index.html"):
        status, headers, body = _get(server, path)
        assert status == 200 and headers["Content-Security-Policy"] == CSP, path
    assert _decode(_get(server, "/data/index.js")[2])["runs"][0]["columns"]["n"] == 2
    bundle = write_bundle(index, tmp_path / "bundle")
    assert {"index", "s0", "e0-0", "e0-1"} <= set(bundle)
    assert (tmp_path / "bundle" / "data" / "e0-1.js").read_bytes() == index.script("e0-1")
    html = (tmp_path / "bundle" / "index.html").read_text()
    assert 'http-equiv="Content-Security-Policy"' in html and "script-src 'self'" in html
    with pytest.raises(ViewError, match="only reads"):
        write_bundle(index, real_run / "bundle")
    assert listing(real_run) == before  # nothing under the run was written, touched or added


@pytest.mark.parametrize("path", [
    "/data/../../etc/passwd.js", "/data/%2e%2e/%2e%2e/etc/passwd.js", "/data/..%2f..%2fetc%2fpasswd.js",
    "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/data/e0-0.js/../../../etc/passwd", "/data/E0-0.js",
    "/data/e0-0", "/data/e0-99.js", "/data/t0-0.js", "/etc/passwd", "/static/app.js", "/app.js%00.html",
    "//etc/passwd", "/data//e0-0.js", "/data/results.js", "/data/index.json",
])
def test_the_server_answers_nothing_outside_its_files_and_keys(path: str, tmp_path: Path, serve) -> None:
    run = synthetic_run(tmp_path / "run", [{"cid": "a", "seed": 0, "steps": ["hi"], "grade": grade(0.5)}])
    server = serve(ViewIndex([run]))
    status, headers, body = _get(server, path)
    assert status == 404 and body == b"not found\n"
    assert headers["Content-Security-Policy"] == CSP and headers["X-Content-Type-Options"] == "nosniff"
    assert _get(server, "/data/e0-0.js")[0] == 200


def test_the_server_refuses_other_hosts_and_methods(tmp_path: Path, serve) -> None:
    run = synthetic_run(tmp_path / "run", [{"cid": "a", "seed": 0, "steps": ["hi"], "grade": grade(0.5)}])
    server = serve(ViewIndex([run]))
    port = server.server_address[1]
    assert _get(server, "/", host="evil.example")[0] == 403  # a DNS name rebound to 127.0.0.1
    assert _get(server, "/", host=f"evil.example:{port}")[0] == 403
    assert _get(server, "/", host=f"localhost:{port}")[0] == 200
    assert _get(server, "/", method="HEAD")[0] == 200
    assert _get(server, "/", method="POST")[0] == 501
    open_server = serve(ViewIndex([run]), allow_remote=True)
    assert _get(open_server, "/", host="evil.example")[0] == 200


def test_a_real_episode_folder_and_its_aide_journal(tiny_prepared: str, bwrap_ready: None, tmp_path: Path) -> None:
    info = aide_episode(tiny_prepared, tmp_path / "runs", max_nodes=4)
    folder = Path(info["trajectory"]).parent
    before = listing(folder)
    index = ViewIndex([folder])
    assert index.sources[0].kind == "episode" and index.manifest()["start"] == "#/episode/e0-0"
    episode = index.data("e0-0")
    assert episode["tree_key"] == "t0-0" and episode["steps"] and episode["end"]["status"] == "submitted"
    assert any(s["policy"] and '"aide"' in s["policy"] for s in episode["steps"])
    assert episode["test_scores"] and {"source", "score", "valid"} <= set(episode["test_scores"][0])
    tree = index.data("t0-0")
    nodes = {n["id"]: n for n in tree["nodes"]}
    assert len(nodes) == 4 and tree["episode_key"] == "e0-0" and tree["lower_is_better"] is False
    assert nodes[1]["buggy"] and nodes[1]["status"] == "buggy" and "pwned" in nodes[1]["output"]
    assert nodes[1]["failure"]
    best = nodes[tree["best"]]
    assert best["status"] == "best" and not best["buggy"] and best["score"] == max(
        n["score"] for n in nodes.values() if not n["buggy"] and n["score"] is not None)
    children = [n for n in nodes.values() if n["parent"] is not None]
    assert children and all(n["diff"] and any(line.startswith("+C = ") for line in n["diff"]) for n in children)
    assert all(n["diff"] is None for n in nodes.values() if n["parent"] is None)
    assert all(n["test_score"] for n in nodes.values() if not n["buggy"])  # the hidden test scores it logged
    assert [c["nodes"] for c in tree["curve"]] == [1, 2, 3, 4] and tree["curve"][-1]["best"] == best["score"]
    assert {"x", "y"} <= set(nodes[0]) and all(n["y"] == 0 for n in nodes.values() if n["parent"] is None)
    journal = ViewIndex([folder / "trajectory.aide.jsonl"])
    assert journal.manifest()["start"] == "#/tree/t0-0" and len(journal.data("t0-0")["nodes"]) == 4
    by_trajectory = ViewIndex([Path(info["trajectory"])])
    assert by_trajectory.data("e0-0")["tree_key"] == "t0-0"
    assert listing(folder) == before


def test_a_synthetic_run_with_every_outcome_moved_trajectories_and_paths_outside(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run", [
        {"cid": "a", "seed": 0, "steps": ["one", ANSI], "grade": grade(0.9, "gold")},
        {"cid": "a", "seed": 1, "status": "agent_error", "steps": ["boom"], "grade": grade(0.1), "error": "E" * 500},
        {"cid": "b", "seed": 0, "status": "infra_error", "end": "infra_error", "grade": None},
        {"cid": "b", "seed": 1, "steps": ["x"], "grade": grade(0.5, "bronze"), "end": "sandbox_broken",
         "recorded": "/elsewhere/old-run/trajectories/b-00003/trajectory.jsonl"},  # the run folder was moved
        {"cid": "c", "seed": 0, "steps": ["y"], "grade": grade(0.2), "recorded": "/etc/passwd"},
    ], scheduled={"a": 2, "b": 3, "c": 1})
    index = ViewIndex([run])
    cols = index.manifest()["runs"][0]["columns"]
    statuses = [cols["status"]["values"][c] for c in cols["status"]["codes"]]
    assert statuses == ["ok", "agent_error", "infra_error", "sandbox_broken", "not_run", "ok"]
    medals = [cols["medal"]["values"][c] for c in cols["medal"]["codes"]]
    assert medals == ["gold", "none", "", "bronze", "", "none"]
    assert cols["error"][1] == "E" * 300 and cols["percentile"][0] == 0.5
    summary = index.manifest()["runs"][0]["summary"]
    assert summary["episodes"]["not_run"] == 1 and summary["episodes"]["infra_error"] == 1
    assert "6 episodes scheduled" in summary["headline"]
    assert _decode(index.script("e0-0"))["steps"][1]["stdout"] == "RED-TEXT LINK-TEXT"  # cleaned as it is sent
    assert index.data("e0-3")["steps"][0]["stdout"] == "x"  # found under the run's trajectories/
    assert index.data("e0-5") is None  # recorded outside the run: never read
    assert index.data("e0-2") is None and index.data("e0-4") is None  # no trajectory
    assert index.keys()[:2] == ["index", "s0"]


def test_a_folder_of_episodes_links_a_fork_to_its_parent(tmp_path: Path) -> None:
    parent = write_trajectory(tmp_path / "eps" / "a-parent" / "trajectory.jsonl", "a", 0, ["p1", "p2"], grade(0.4))
    write_trajectory(tmp_path / "eps" / "b-fork" / "trajectory.jsonl", "a", 0, ["p1", "f2"], grade(0.6),
                     fork={"parent_episode": "abc", "parent_trajectory": str(parent), "step": 1})
    index = ViewIndex([tmp_path / "eps"])
    assert index.sources[0].kind == "episodes" and index.manifest()["runs"][0]["columns"]["n"] == 2
    fork = index.data("e0-1")
    assert fork["fork"] == {"parent_episode": "abc", "step": 1, "parent_key": "e0-0"}
    alone = ViewIndex([tmp_path / "eps" / "b-fork"])  # the parent is not among the paths viewed
    assert alone.data("e0-0")["fork"]["parent_key"] is None


def test_two_runs_are_compared(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", [{"cid": "x", "seed": 0, "grade": grade(0.5)},
                                       {"cid": "y", "seed": 0, "grade": grade(0.9, "gold")}])
    b = synthetic_run(tmp_path / "b", [{"cid": "x", "seed": 0, "grade": grade(0.8, "silver")},
                                       {"cid": "y", "seed": 0, "grade": grade(0.7)}])
    rows = {r["competition"]: r for r in ViewIndex([a, b]).manifest()["compare"]["rows"]}
    assert rows["x"]["medal_delta"] == 1.0 and rows["x"]["score_delta"] == pytest.approx(0.3) and rows["x"]["better"]
    assert rows["y"]["medal_delta"] == -1.0 and rows["y"]["better"] is False


def test_a_hostile_journal_is_cleaned(tmp_path: Path) -> None:
    tree = ViewIndex([hostile_journal(tmp_path / "j.aide.jsonl")]).data("t0-0")
    body = script("t0-0", tree)
    data = _decode(body)
    assert data["nodes"][0]["plan"].endswith("RED-TEXT LINK-TEXT") and HOSTILE[0] in data["nodes"][0]["plan"]
    assert [n["status"] for n in data["nodes"]] == ["buggy", "valid", "best", "buggy"]
    assert data["nodes"][2]["diff"][:2] == ["--- parent", "+++ node"]


def test_clean_text() -> None:
    assert clean_text("\x1b[31mred\x1b[0m") == "red"
    assert clean_text("\x1b]8;;http://x\x07link\x1b]8;;\x07") == "link"
    assert clean_text("\x1b]0;title\x1b\\after") == "after"
    assert clean_text("a\x07b\u202ec") == "a\\x07b\\u202ec"
    assert clean_text("x\r\ny") == "x\ny"
    assert clean_text("y" * 50, limit=10) == "yyyyy\n[... 40 characters cut ...]\nyyyyy"
    expected = b'mleView.receive("e0-1",{"t":"\\u003c/script\\u003e\\u00e9"});\n'
    assert script("e0-1", {"t": "</script>\u00e9"}) == expected
    with pytest.raises(ValueError):
        script("../x", {})


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["view", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_errors_are_one_line_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = synthetic_run(tmp_path / "run", [{"cid": "a", "seed": 0, "steps": ["hi"], "grade": grade(0.5)}])
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("hello\n")
    for argv, message in [
        ([str(tmp_path / "nope")], "no such file or folder"),
        ([str(tmp_path / "empty")], "is not a run folder"),
        ([str(tmp_path / "notes.txt")], "is not a trajectory"),
        ([str(run), "--host", "0.0.0.0"], "--allow-remote"),
        ([str(run), "--port", "70000"], "--port must be"),
        ([str(run), str(tmp_path / "empty")], "is not a run folder"),
        ([str(run), "--bundle", str(run / "b")], "only reads"),
    ]:
        code, _, err = _cli(capsys, *argv)
        assert code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1, (argv, err)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code, _, err = _cli(capsys, str(run), "--port", str(busy.getsockname()[1]), "--no-open")
        assert code == 2 and "cannot listen on 127.0.0.1" in err and err.count("\n") == 1
    code, out, _ = _cli(capsys, str(run), "--bundle", str(tmp_path / "bundle"))
    assert code == 0 and (tmp_path / "bundle" / "data" / "index.js").is_file()
    code, out, _ = _cli(capsys, str(run), "--bundle", str(tmp_path / "bundle"))  # an earlier bundle is replaced
    assert code == 0
    code, _, err = _cli(capsys, str(run), "--bundle", str(tmp_path / "empty" / ".."))
    assert code == 2 and "not an empty folder" in err


def test_an_empty_or_malformed_run(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "results.jsonl").write_text("")
    (empty / "config.json").write_text(json.dumps({"agent": "a", "competitions": ["x"], "seeds": 2}))
    m = ViewIndex([empty]).manifest()  # a run that has just started: every episode not run yet
    assert m["runs"][0]["summary"]["episodes"]["not_run"] == 2 and m["runs"][0]["columns"]["trajectory"] == [0, 0]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "results.jsonl").write_text(json.dumps({"status": "ok"}) + "\n")
    with pytest.raises(ViewError, match="cannot read"):
        ViewIndex([bad])
