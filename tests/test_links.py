"""Links go where they say: a structured digest's `url:` is its repository's PR URL (refused at
validate with file:line otherwise), a link's label never reads like another address, a button's
URL is percent-encoded, and curator text loses its bidi overrides — parsers and escaping by
property, the surfaces over real HTTP."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.models.blocks import ButtonElement

from chatbot.digest import DigestParseError
from chatbot.digest.structured import parse_structured
from chatbot.slack.blocks import button
from chatbot.slack.mrkdwn import encoded_url, link
from chatbot.text.links import looks_like_an_address
from tests.conftest import DIGESTS
from tests.fakeslack import FakeSlack
from tests.slackrequests import all_text, buttons, command_body
from tests.test_surfaces_http import link_shared, serve, settings_for

PR = "https://github.com/vllm-project/vllm/pull/53529"


def digest(url_line: str, title: str = "Spec decode fix") -> str:
    return (
        "repo: vllm-project/vllm\nentries:\n"
        "  - title: fine\n    pr: 1\n    note: 值得精读。\n"
        f"  - title: {title!r}\n    pr: 53529\n{url_line}    note: 值得精读。重点关注调度。\n"
    )


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://evil.example/pull/53529", "not a pull request of the digest's repository"),
        ("https://github.com/evil/vllm/pull/53529", "not a pull request of the digest's repository"),
        ("http://github.com/vllm-project/vllm/pull/53529", "not a pull request"),
        (f"{PR}?x=<!channel>|click&y=>", "not a pull request"),
        (f"{PR}/files", "not a pull request"),
        ("https://github.com/vllm-project/vllm/pull/1", "url names PR 1 but pr is 53529"),
    ],
)
def test_a_url_other_than_the_repositorys_pr_is_refused_with_its_line(url: str, why: str) -> None:
    with pytest.raises(DigestParseError) as refused:
        parse_structured(digest(f"    url: {url!r}\n"), "d.yaml")
    assert refused.value.line == 8 and why in refused.value.problem.message


def test_the_repositorys_pr_url_is_kept_in_any_case_of_the_slug() -> None:
    (_, entry) = parse_structured(
        digest(f"    url: {PR.replace('vllm-project', 'VLLM-Project')}\n"), "d.yaml"
    ).entries
    assert entry.url is not None and entry.url.endswith("/pull/53529")


def test_validate_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "vllm-digest-2026-09.yaml"
    path.write_text(digest("    url: https://evil.example/pull/53529\n"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert f"{path}:8: error: entries.1.url:" in done.stdout + done.stderr


@given(st.text(max_size=200))
def test_a_button_url_is_encoded_and_valid_whatever_follows_the_pr(tail: str) -> None:
    url = encoded_url(PR + tail)
    if url is None:
        return
    assert not set(url) & set('<>|" \n\t') and url.isascii()
    element = button("PR", "open_pr:x", url=PR + tail)
    ButtonElement(**element).validate_json()


@pytest.mark.parametrize(
    "label",
    [
        "https://github.com/vllm-project/vllm/pull/1",
        "see evil.example now",
        "www.slack-login-verify.org",
        "re-login at slack-login-verify.com",
        "ftp://files.example/x",
    ],
)
def test_a_label_that_reads_like_another_address_shows_the_links_own(label: str) -> None:
    assert link(PR, label) == f"<{PR}|{PR}>"


@pytest.mark.parametrize(
    "label", ["Speed up torch.compile", "fix setup.py and Node.js", "8.0x on H100", "用 vllm.entrypoints"]
)
def test_a_label_with_code_names_is_kept(label: str) -> None:
    assert not looks_like_an_address(label)
    assert link(PR, label) == f"<{PR}|{label}>"


def test_a_digest_title_that_is_a_url_and_bidi_overrides_never_reach_slack(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    folder = tmp_path / "digests"
    shutil.copytree(DIGESTS, folder)
    title = "https://github.com/vllm-project/vllm/pull/1 quux\u202egnp.exe\u2066x\u2069"
    (folder / "vllm-digest-2026-09.yaml").write_text(
        "repo: vllm-project/vllm\nentries:\n"
        f"  - title: {title!r}\n    pr: 53529\n    note: 值得精读。重点关注 quux 调度的修复。\n",
        encoding="utf-8",
    )
    app = serve(fake_slack, settings_for(fake_slack, folder))
    try:
        answer = app.form(command_body("quux", fake_slack.response_url("q")))
        app.event(link_shared(PR))
        preview = fake_slack.wait_for("chat.unfurl").params["unfurls"][PR]
    finally:
        app.server.stop()
        app.bot.close()
    for message in (answer, preview):
        shown = all_text(message)
        assert "|https://github.com/vllm-project/vllm/pull/1" not in shown
        assert not set(shown) & {"\u202e", "\u2066", "\u2069"}
        for pressed in buttons(message):
            assert pressed.get("url") in (None, PR)
    assert f"<{PR}|{PR}>" in all_text(answer)
