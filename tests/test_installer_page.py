"""The Application Installer's pages read as the device's words (rokuprof.device.installer_page):
the red font text only, entities unescaped, tags dropped, whitespace collapsed, bounded, and
linear in the page whatever it holds."""

from __future__ import annotations

import time

from rokuprof.device.installer_page import (
    FAILED,
    IDENTICAL,
    INSTALLED,
    MAX_WORDS,
    profile_path,
    read_install_answer,
    red_messages,
    words,
)
from rokuprof.simulator.installer import IDENTICAL as SIM_IDENTICAL
from rokuprof.simulator.installer import INSTALL_SUCCESS, page


def test_success_identical_and_failure_from_the_simulators_pages():
    assert read_install_answer(page(INSTALL_SUCCESS).decode()).kind == INSTALLED
    answer = read_install_answer(page(SIM_IDENTICAL).decode())
    assert (answer.kind, answer.message) == (IDENTICAL, SIM_IDENTICAL)
    failed = read_install_answer(page('Install Failure: line "<b>&amp;</b>"').decode())
    assert (failed.kind, failed.message) == (FAILED, 'Install Failure: line "<b>&amp;</b>"')


def test_only_red_font_text_counts_and_the_embedded_json_is_ignored():
    html = (
        '<html><script>var m = {"text": "Install Success."}</script>'
        '<font color="blue">Install Success.</font>'
        "<FONT COLOR='RED'>\n  Install   Failure:\n\tCompilation <i>Failed</i>.</FONT>"
        '<font color="red"></font><font color="#ff0000">Line 3 &lt;main.brs&gt;</font></html>'
    )
    assert red_messages(html) == ["Install Failure: Compilation Failed.", "Line 3 <main.brs>"]
    answer = read_install_answer(html)
    assert answer.kind == FAILED
    assert answer.message == "Install Failure: Compilation Failed. / Line 3 <main.brs>"


def test_a_page_without_a_message_says_so_with_its_title():
    answer = read_install_answer("<html><title>Login &amp; more</title><body>hi</body></html>")
    assert answer == read_install_answer("<title>Login &amp; more</title>")
    assert answer.message == "the installer's answer carried no message (page 'Login & more')"


def test_words_are_bounded():
    assert words("a<br>b<i>c</i>&nbsp; <P>d") == "a bc d"
    text = words("x" * 10_000)
    assert len(text) == MAX_WORDS and text.endswith("…")


def test_a_hostile_page_is_read_in_linear_time():
    opening_only = '<font color="red">' * 200_000  # 3.6 MB, no closing tag anywhere
    pairs = '<font color="red">a</font>' * 100_000
    started = time.process_time()
    assert red_messages(opening_only) == []
    assert len(red_messages(pairs)) == 16  # at most MAX_MESSAGES read
    assert time.process_time() - started < 2.0  # quadratic would be hours


def test_profile_path():
    offered = page("", '<a href="pkgs/channel.bsprof">channel.bsprof</a>').decode()
    assert profile_path(offered) == "/pkgs/channel.bsprof"
    assert profile_path(page("No profiling data available").decode()) is None
    assert profile_path("<a href='pkgs/../../etc/passwd'>x</a>") is None
    assert profile_path("<a href='pkgs/a b.bsprof'>") is None
