"""``mle-env view`` in a real headless Chromium: an evaluation filtered and sorted, an episode with its outputs
expanded, an AIDE tree whose node shows its diff, over the server and from a bundle on ``file://``; hostile
text from the agent shows verbatim as text and never runs. Writes the screenshots docs/viewer-*.png.

Needs Debian's ``chromium`` (apt-get install chromium) and the ``playwright`` Python package (its own
browsers are not used); skipped, saying which is missing, without them."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require, require_import
from viewer_runs import ANSI, HOSTILE, aide_episode, evaluate_hostile, hostile_journal

from mle_env.viewer.bundle import write_bundle
from mle_env.viewer.index import ViewIndex
from mle_env.viewer.server import ViewServer

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = shutil.which("chromium")
    require(executable is not None, "no chromium on PATH (Debian: apt-get install -y chromium)",
            "MLE_ENV_REQUIRE_BROWSER")
    sync_api = require_import("playwright.sync_api", "pip install playwright (no `playwright install` needed)",
                              "MLE_ENV_REQUIRE_BROWSER")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.console_messages = []  # type: ignore[attr-defined]
    page.on("console", lambda m: page.console_messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: page.console_messages.append(f"pageerror: {e}"))
    yield page
    context.close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ViewServer] = []

    def start(paths: list[Path]) -> str:
        server = ViewServer(ViewIndex(paths), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def assert_inert(page: Any) -> None:
    """Nothing of the data ran or became an element, and no policy violation was reported."""
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.eval_on_selector_all("img", "els => els.length") == 0
    scripts = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    assert scripts == ["app.js"], scripts  # data scripts are removed once they ran
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert [h for h in hrefs if not h.startswith("#/")] == []  # no link built from the data
    problems = [m for m in page.console_messages if "error" in m.lower() or "content security" in m.lower()
                or "refused" in m.lower()]
    assert problems == []


def shot(page: Any, name: str) -> None:
    DOCS.mkdir(exist_ok=True)
    page.screenshot(path=str(DOCS / name))


@pytest.fixture
def hostile_run(tiny_prepared: str, home: Path, bwrap_ready: None, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_ENV_COMPETITIONS", str(home.parent / "competitions"))
    return evaluate_hostile(tmp_path / "run", tiny_prepared, seeds=3)


def test_an_evaluation_filtered_then_an_episode_expanded_over_the_server(hostile_run: Path, serve: Any,
                                                                        page: Any) -> None:
    url = serve([hostile_run])
    page.goto(url)
    page.wait_for_selector("table.episodes tr.row")
    assert page.locator("table.episodes tr.row").count() == 3
    assert "3 ok" in page.inner_text(".headline") and page.locator("svg.plot path.series").count() >= 1
    assert page.locator("table.leaderboard tr").count() == 3  # a header, the split, all
    shot(page, "viewer-evaluation.png")
    page.click("th[data-col=seed]")
    page.click("th[data-col=seed]")  # descending
    assert page.inner_text("table.episodes tr.row td:nth-child(3) >> nth=0") == "2"
    page.select_option("select[data-filter=status]", label="ok")
    page.fill("#search", "no-such-text-anywhere")
    expect(page.locator("table.episodes tr.row")).to_have_count(0)  # (the page's policy forbids eval)
    page.fill("#search", "javascript:window.__pwned=1")  # found in the actions and outputs (the search text)
    expect(page.locator("table.episodes tr.row")).to_have_count(3)
    page.click("table.episodes tr.row >> nth=0")
    page.wait_for_selector("section.step")
    assert "#/episode/e0-2" in page.url
    assert page.locator("section.step").count() == 4
    first = page.locator("section.step >> nth=0")
    out = first.locator("pre.stdout")
    assert "[... " in out.inner_text() and "\n60\n" not in out.inner_text()
    shot(page, "viewer-episode.png")
    first.locator("button.expand").click()
    whole = out.inner_text()
    assert "\n60\n" in whole and whole.rstrip().endswith("100")
    for text in HOSTILE:
        assert text in whole  # verbatim, as text
    assert "RED-TEXT LINK-TEXT" in whole and "\x1b" not in whole and "]8;;" not in whole
    assert "1234" in first.inner_text() and "test-model" in first.inner_text()  # the step's LLM call
    second = page.locator("section.step >> nth=1")
    assert "harness repairs: harness_work" in second.inner_text()
    assert second.locator("pre.diff span.d-del").inner_text() == "-print('<script>window.__pwned=1</script>')"
    assert HOSTILE[1] in second.locator("pre.stderr").inner_text()
    assert second.locator("pre.code span.tok-kw").count() >= 1 and second.locator("pre.code span.tok-com").count() == 1
    assert "<b>bold</b>" in page.text_content("details.code-file")
    assert page.locator("table.submission tr").count() == 11
    assert_inert(page)


def test_an_aide_tree_from_a_bundle_on_file_urls(tiny_prepared: str, bwrap_ready: None, tmp_path: Path,
                                                 page: Any) -> None:
    info = aide_episode(tiny_prepared, tmp_path / "runs", max_nodes=5)
    folder = Path(info["trajectory"]).parent
    write_bundle(ViewIndex([folder]), tmp_path / "bundle")
    page.goto((tmp_path / "bundle" / "index.html").as_uri())
    page.wait_for_selector("section.step")  # an episode opens on its page
    page.click("a.tree-link")
    page.wait_for_selector("svg.tree g.node")
    assert page.locator("svg.tree g.node").count() == 5 and page.locator("svg.tree g.node.best").count() == 1
    assert page.locator("svg.tree g.node.buggy").count() >= 1
    child = page.locator("svg.tree g.node:not([data-node='0']):not([data-node='1'])").first
    node = child.get_attribute("data-node")
    child.click()
    detail = page.locator(".detail")
    assert f"Node {node} (" in detail.locator("h2").inner_text()
    assert "Diff against node" in detail.inner_text()
    assert detail.locator("pre.diff span.d-add").count() >= 1
    assert any(t.startswith("+C = ") for t in detail.locator("pre.diff span.d-add").all_inner_texts())
    assert "hidden test score" in detail.inner_text()
    assert page.locator("svg.plot").count() == 2
    shot(page, "viewer-tree.png")
    assert_inert(page)


def test_a_hostile_journal_and_trajectory_render_as_inert_text(tmp_path: Path, page: Any, serve: Any) -> None:
    from viewer_runs import write_trajectory

    journal = hostile_journal(tmp_path / "j" / "search.aide.jsonl")
    write_bundle(ViewIndex([journal]), tmp_path / "bundle")
    page.goto((tmp_path / "bundle" / "index.html").as_uri())
    page.wait_for_selector("svg.tree g.node")
    page.click("svg.tree g.node[data-node='0']")
    detail = page.locator(".detail")
    text = detail.inner_text()
    for hostile in HOSTILE:
        assert hostile in text
    assert "RED-TEXT LINK-TEXT" in text and "\x1b" not in text
    page.click("svg.tree g.node[data-node='2']")
    assert "-y = 2" in detail.locator("pre.diff").inner_text()
    assert "<script>window.__pwned=1</script>" in detail.locator("pre.code").inner_text()
    assert_inert(page)

    trajectory = write_trajectory(tmp_path / "ep" / "trajectory.jsonl", "<img src=x onerror=\"window.__pwned=1\">", 0,
                                  [*HOSTILE, ANSI], {"status": "graded", "score": 0.5, "invalid_reason": HOSTILE[0]})
    page.goto(serve([trajectory.parent]))
    page.wait_for_selector("section.step")
    body = page.inner_text("main")
    for hostile in HOSTILE:
        assert hostile in body
    assert "RED-TEXT LINK-TEXT" in body
    assert_inert(page)


def test_a_large_run_pages_and_two_runs_compare(tmp_path: Path, page: Any, serve: Any) -> None:
    from viewer_runs import grade, synthetic_run

    a = synthetic_run(tmp_path / "a", [{"cid": f"c{c:02d}", "seed": s,
                                        "grade": grade(0.5 + c / 100, "gold" if s else None)}
                                       for c in range(45) for s in range(10)])
    b = synthetic_run(tmp_path / "b", [{"cid": f"c{c:02d}", "seed": s, "grade": grade(0.4, None)}
                                       for c in range(45) for s in range(10)])
    page.goto(serve([a, b]))
    page.wait_for_selector("table.episodes tr.row")
    assert page.locator("table.episodes tr.row").count() == 200 and "page 1 of 3" in page.inner_text(".pager")
    page.click("button.next")
    assert "page 2 of 3" in page.inner_text(".pager")
    assert page.inner_text("table.episodes tr.row td >> nth=0") == "c20"
    page.select_option("select[data-filter=competition]", label="c07")
    expect(page.locator("table.episodes tr.row")).to_have_count(10)
    page.select_option("select[data-filter=medal]", label="gold")
    expect(page.locator("table.episodes tr.row")).to_have_count(9)
    page.click("nav a:has-text('run B')")
    expect(page.locator("table.episodes tr.row")).to_have_count(200)
    assert page.inner_text("h1").endswith("/b")
    page.click("nav a:has-text('compare')")
    page.wait_for_selector("table.compare")
    assert page.locator("table.compare tr").count() == 46
    row = page.locator("table.compare tr >> nth=1").inner_text()
    assert "c00" in row and "90.0%" in row and "-90.0 pts" in row and "-0.1" in row
    assert page.locator("table.compare td.worse").count() == 90
    assert_inert(page)
