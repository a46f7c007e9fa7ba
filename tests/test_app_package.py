"""Packaging an app for a profiled run: real directories and zips on disk, the user's files only
read, the same bytes every time, and every bad input refused in one line naming it."""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import subprocess
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rokuprof.app.ignore import IgnoreRules
from rokuprof.app.manifest import ProfilerKeys, parse_manifest
from rokuprof.app.package import MAX_IGNORE_BYTES, ZIP_TIME, PackageError, package_app
from rokuprof.device.installer import InstallerClient
from rokuprof.scenario.model import Mark, Press, load_scenario
from rokuprof.simulator.config import DeviceConfig
from rokuprof.simulator.device import SimulatedDevice

SAMPLE_APP = Path(__file__).resolve().parent.parent / "samples" / "app"
MANIFEST = (
    "# Cafe TV\r\ntitle=Cafe TV\r\nmajor_version=2\r\nminor_version=3\r\nbuild_version=45\r\n"
)


def write(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every path below ``root`` with its mode, mtime and (for a file) bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        found[str(path.relative_to(root))] = (info.st_mode, info.st_mtime_ns, data)
    info = root.lstat()
    found["."] = (info.st_mode, info.st_mtime_ns, b"")
    return found


def entries(zip_bytes: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def make_zip(path: Path, files: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return path


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return write(
        tmp_path / "cafe",
        {
            "manifest": MANIFEST,
            "source/main.brs": "sub Main()\nend sub\n",
            "components/Home.xml": "<component/>",
            "images/art.psd": b"\x00" * 10,
            "images/keep.psd": b"\x01" * 10,
            "images/icon.png": b"\x89PNG",
            "docs/notes.md": "notes",
            "out/app.zip": b"PK",
            "source/out/x.brs": "' not the root's out",
            ".git/config": "[core]",
            "lib/.git": "gitdir: ../.git/modules/lib",
            "lib/util.brs": "function f()\nend function\n",
            ".svn/entries": "x",
            ".rokuignore": "# build output\n*.psd\n!keep.psd\ndocs/\n/out\n\n",
        },
    )


def test_a_directory_is_zipped_with_the_keys_and_without_vcs_or_ignored_files(app: Path) -> None:
    before = snapshot(app)
    packaged = package_app(app, ProfilerKeys(mem=True))
    assert snapshot(app) == before  # the user's files: same bytes, same times, nothing added
    files = entries(packaged.zip_bytes)
    assert sorted(files) == [
        "components/Home.xml",
        "images/icon.png",
        "images/keep.psd",
        "lib/util.brs",
        "manifest",
        "source/main.brs",
        "source/out/x.brs",
    ]
    assert files["source/main.brs"] == b"sub Main()\nend sub\n"
    assert (
        files["manifest"]
        == (
            MANIFEST + "bsprof_enable=1\r\nbsprof_data_dest=network\r\nrun_as_process=1\r\n"
            "bsprof_enable_mem=1\r\n"
        ).encode()
    )
    assert packaged.manifest == parse_manifest(files["manifest"].decode())
    assert packaged.manifest["bsprof_enable_mem"] == "1"
    assert (packaged.files, packaged.title, packaged.version) == (7, "Cafe TV", "2.3.45")
    assert packaged.skipped == (
        ".git",
        ".rokuignore",
        ".svn",
        "docs",
        "images/art.psd",
        "lib/.git",
        "out",
    )


def test_the_same_source_gives_the_same_bytes(app: Path) -> None:
    first = package_app(app, ProfilerKeys())
    os.utime(app / "source/main.brs", ns=(1, 1))  # times and walk order do not matter
    (app / "manifest").chmod(0o600)
    second = package_app(app, ProfilerKeys())
    assert first.zip_bytes == second.zip_bytes
    with zipfile.ZipFile(io.BytesIO(first.zip_bytes)) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {ZIP_TIME}
    assert {i.external_attr >> 16 for i in infos} == {0o100644}


def test_no_rokuignore_keeps_everything_but_vcs(tmp_path: Path) -> None:
    root = write(tmp_path / "a", {"manifest": "title=A\n", "x.psd": "1", ".hg/store": "2"})
    packaged = package_app(root, ProfilerKeys())
    assert sorted(entries(packaged.zip_bytes)) == ["manifest", "x.psd"]
    assert (packaged.title, packaged.version, packaged.skipped) == ("A", "", (".hg",))


def test_title_falls_back_to_the_directory_name(tmp_path: Path) -> None:
    root = write(tmp_path / "my-app", {"manifest": "major_version=1\nminor_version=0\n"})
    packaged = package_app(root, ProfilerKeys())
    assert (packaged.title, packaged.version) == ("my-app", "1.0")


def test_a_manifest_that_is_not_utf8_keeps_its_bytes(tmp_path: Path) -> None:
    root = write(tmp_path / "a", {"manifest": b"title=Caf\xe9\n"})
    packaged = package_app(root, ProfilerKeys())
    assert entries(packaged.zip_bytes)["manifest"].startswith(b"title=Caf\xe9\n")
    assert packaged.title == "Caf\ufffd"


# -- links ---------------------------------------------------------------------------------------


def test_a_link_inside_the_app_is_followed(app: Path) -> None:
    (app / "source/alias.brs").symlink_to("main.brs")
    (app / "shared").symlink_to("lib", target_is_directory=True)
    files = entries(package_app(app, ProfilerKeys()).zip_bytes)
    assert files["source/alias.brs"] == files["source/main.brs"]
    assert files["shared/util.brs"] == files["lib/util.brs"]


def test_a_link_out_of_the_app_is_an_error_naming_it(app: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "secrets", {"key.txt": "secret"})
    (app / "source/key.txt").symlink_to(outside / "key.txt")
    with pytest.raises(PackageError) as error:
        package_app(app, ProfilerKeys())
    message = str(error.value)
    assert f"{app / 'source/key.txt'} is a symbolic link to {outside / 'key.txt'}" in message
    assert f"outside {app}" in message and "source/key.txt in .rokuignore" in message
    (app / ".rokuignore").write_text("key.txt\n")  # ignored: no longer a problem
    assert "source/key.txt" not in entries(package_app(app, ProfilerKeys()).zip_bytes)


def test_a_link_loop_and_a_dangling_link_are_errors(app: Path) -> None:
    (app / "lib/loop").symlink_to("..", target_is_directory=True)
    with pytest.raises(PackageError, match="loop is a symbolic link to a folder that holds it"):
        package_app(app, ProfilerKeys())
    (app / "lib/loop").unlink()
    (app / "lib/gone.brs").symlink_to("nowhere.brs")
    with pytest.raises(PackageError, match=r"lib/gone\.brs is a symbolic link that leads nowhere"):
        package_app(app, ProfilerKeys())


def test_a_fifo_is_skipped_not_read(app: Path) -> None:
    os.mkfifo(app / "source/pipe")
    packaged = package_app(app, ProfilerKeys())
    assert "source/pipe" in packaged.skipped
    assert "source/pipe" not in entries(packaged.zip_bytes)


# -- bad inputs ----------------------------------------------------------------------------------


def test_a_directory_without_manifest(tmp_path: Path) -> None:
    root = write(tmp_path / "repo", {"README": "x", "app/manifest": "title=A\n"})
    with pytest.raises(PackageError) as error:
        package_app(root, ProfilerKeys())
    assert (
        str(error.value)
        == f"no manifest in {root} (there is one in {root / 'app'}: give that directory)"
    )
    (root / "app2").mkdir()
    (root / "app2/manifest").write_text("title=B\n")
    with pytest.raises(PackageError) as error:
        package_app(root, ProfilerKeys())
    assert str(error.value) == f"no manifest in {root}"


def test_a_rokuignore_over_its_limit(tmp_path: Path) -> None:
    root = write(tmp_path / "a", {"manifest": "", ".rokuignore": "#" * (MAX_IGNORE_BYTES + 1)})
    with pytest.raises(PackageError, match=r"a/\.rokuignore is over 1,048,576 bytes$"):
        package_app(root, ProfilerKeys())


def test_a_manifest_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a/manifest").mkdir(parents=True)
    with pytest.raises(PackageError, match=r"a/manifest is not a file$"):
        package_app(tmp_path / "a", ProfilerKeys())


def test_a_missing_source_and_a_file_that_is_not_a_zip(tmp_path: Path) -> None:
    with pytest.raises(PackageError) as error:
        package_app(tmp_path / "nope", ProfilerKeys())
    assert str(error.value) == f"{tmp_path / 'nope'}: no such directory or file"
    (tmp_path / "app.zip").write_text("not a zip")
    with pytest.raises(PackageError) as error:
        package_app(tmp_path / "app.zip", ProfilerKeys())
    assert str(error.value).startswith(
        f"{tmp_path / 'app.zip'} is not a directory or a readable .zip"
    )


def test_an_unreadable_file_is_named(app: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    (app / "source/main.brs").chmod(0)
    with pytest.raises(PackageError, match=r"cannot read .*source/main\.brs: Permission denied"):
        package_app(app, ProfilerKeys())


def test_a_zip_over_max_bytes(tmp_path: Path) -> None:
    root = write(tmp_path / "a", {"manifest": "title=A\n", "big.bin": os.urandom(50_000)})
    with pytest.raises(PackageError) as error:
        package_app(root, ProfilerKeys(), max_bytes=40_000, max_input_bytes=10**6)
    assert str(error.value).startswith(f"{root}: the app's zip is ")
    assert str(error.value).endswith(
        " bytes, over the limit of 40,000 (a .rokuignore can leave large files out)"
    )


def test_files_over_the_input_limit_stop_the_reading(tmp_path: Path) -> None:
    root = write(tmp_path / "a", {"manifest": "title=A\n", "big.bin": b"\0" * 50_000})
    with pytest.raises(
        PackageError,
        match=r"big\.bin: the app's files add up to more than 40,000 bytes \(a \.rokuignore can",
    ):
        package_app(root, ProfilerKeys(), max_bytes=10_000)  # input limit 4 × 10,000
    with pytest.raises(PackageError, match="more than 1 files"):
        package_app(root, ProfilerKeys(), max_files=1)


# -- zips ----------------------------------------------------------------------------------------


def test_a_zip_is_repackaged_with_only_its_manifest_changed(tmp_path: Path) -> None:
    source = make_zip(
        tmp_path / "cafe.zip",
        {"manifest": MANIFEST, "source/main.brs": "sub Main()\nend sub\n", "images/": ""},
    )
    before = snapshot(tmp_path)
    packaged = package_app(source, ProfilerKeys(dest="local"))
    assert snapshot(tmp_path) == before
    files = entries(packaged.zip_bytes)
    assert sorted(files) == ["manifest", "source/main.brs"]
    assert packaged.manifest["bsprof_data_dest"] == "local"
    assert (packaged.title, packaged.version, packaged.files) == ("Cafe TV", "2.3.45", 2)
    assert package_app(source, ProfilerKeys(dest="local")).zip_bytes == packaged.zip_bytes


def test_a_zip_with_its_app_in_one_folder_says_so(tmp_path: Path) -> None:
    source = make_zip(
        tmp_path / "cafe.zip",
        {"cafe/manifest": MANIFEST, "cafe/source/main.brs": "", "__MACOSX/cafe/manifest": ""},
    )
    with pytest.raises(PackageError) as error:
        package_app(source, ProfilerKeys())
    assert str(error.value) == (
        f"no manifest at the root of {source}: it is in the folder cafe/ (zip that folder's "
        "contents, not the folder itself, or give the folder)"
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../evil.brs", "'..' in its path"),
        ("source/../../evil.brs", "'..' in its path"),
        ("/etc/passwd", "an absolute path"),
        ("C:/evil.brs", "an absolute path"),
        ("source\\main.brs", "a backslash in its name"),
        ("source//main.brs", "an empty or '.' part in its path"),
    ],
)
def test_zip_entry_names_that_could_escape_are_refused(
    tmp_path: Path, name: str, problem: str
) -> None:
    source = make_zip(tmp_path / "a.zip", {"manifest": "title=A\n", name: "x"})
    with pytest.raises(PackageError) as error:
        package_app(source, ProfilerKeys())
    assert str(error.value) == f"{source}: the entry {name!r} has {problem}: refused"


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "bomb.zip", {"manifest": "title=A\n", "zeros": b"\0" * 5_000_000})
    assert source.stat().st_size < 10_000
    with pytest.raises(PackageError) as error:
        package_app(source, ProfilerKeys(), max_bytes=100_000)
    assert str(error.value) == (
        f"{source} (zeros): the app's files add up to more than 400,000 bytes"
    )


def test_a_zip_with_too_many_entries_is_refused_from_its_directory_record(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "many.zip", {"manifest": "", **{f"f{i}": "" for i in range(50)}})
    with pytest.raises(PackageError, match=r"many\.zip: more than 20 entries to package"):
        package_app(source, ProfilerKeys(), max_files=20)


def test_zip_links_and_duplicates_are_refused(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("source/link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(tmp_path / "link.zip", "w") as archive:
        archive.writestr("manifest", "title=A\n")
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(PackageError, match="'source/link' is a symbolic link: refused"):
        package_app(tmp_path / "link.zip", ProfilerKeys())

    with zipfile.ZipFile(tmp_path / "dup.zip", "w") as archive:
        archive.writestr("manifest", "a=1\n")
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("manifest", "a=2\n")
    with pytest.raises(PackageError, match="the entry 'manifest' appears twice"):
        package_app(tmp_path / "dup.zip", ProfilerKeys())


def test_a_corrupt_entry_is_named(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "bad.zip", "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("manifest", "title=A\n")
        archive.writestr("source/main.brs", "sub Main()\nend sub\n")
    data = (tmp_path / "bad.zip").read_bytes().replace(b"sub Main()", b"sub Mian()")
    (tmp_path / "bad.zip").write_bytes(data)
    with pytest.raises(PackageError) as error:
        package_app(tmp_path / "bad.zip", ProfilerKeys())
    assert str(error.value).startswith(
        f"{tmp_path / 'bad.zip'}: cannot read the entry 'source/main.brs': Bad CRC-32"
    )


# -- .rokuignore patterns ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.psd", "a.psd", False, True),
        ("*.psd", "images/deep/a.psd", False, True),
        ("*.psd", "a.psd.txt", False, False),
        ("docs/", "docs", True, True),
        ("docs/", "docs", False, False),
        ("docs/", "src/docs", True, True),
        ("/out", "out", True, True),
        ("/out", "src/out", True, False),
        ("src/*.brs", "src/a.brs", False, True),
        ("src/*.brs", "x/src/a.brs", False, False),
        ("src/*.brs", "src/sub/a.brs", False, False),
        ("**/build", "a/b/build", True, True),
        ("a/**/z.brs", "a/z.brs", False, True),
        ("a/**/z.brs", "a/b/c/z.brs", False, True),
        ("tmp/**", "tmp/x/y", False, True),
        ("file?.txt", "file1.txt", False, True),
        ("file?.txt", "file10.txt", False, False),
        ("[!a]*.md", "b.md", False, True),
        ("[!a]*.md", "a.md", False, False),
        ("[a-c].md", "b.md", False, True),
        ("\\#hash", "#hash", False, True),
        ("# comment", "# comment", False, False),
        ("name   ", "name", False, True),
    ],
)
def test_ignore_patterns(pattern: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert IgnoreRules.parse(pattern).ignored(path, is_dir) is ignored


def test_the_last_matching_pattern_wins() -> None:
    rules = IgnoreRules.parse("*.png\n!keep.png\nimages/keep.png\n")
    assert rules.ignored("a.png", False)
    assert not rules.ignored("keep.png", False)
    assert rules.ignored("images/keep.png", False)


# -- the sample app ------------------------------------------------------------------------------


def test_the_sample_app_packages_with_the_keys() -> None:
    before = snapshot(SAMPLE_APP)
    packaged = package_app(SAMPLE_APP, ProfilerKeys(lines=True))
    assert snapshot(SAMPLE_APP) == before
    assert packaged.title == "rokuprof sample"
    assert packaged.version == "1.0.1"
    for key, value in {
        "bsprof_enable": "1",
        "bsprof_data_dest": "network",
        "run_as_process": "1",
        "bsprof_enable_lines": "1",
        "rsg_version": "1.2",
    }.items():
        assert packaged.manifest[key] == value
    files = entries(packaged.zip_bytes)
    assert "scenario.toml" not in files and ".rokuignore" not in files
    assert {"manifest", "source/main.brs"} <= set(files)


def test_the_sample_apps_components_hang_together() -> None:
    """Each XML file parses, its scripts are in the package, and every component the code asks
    for (a scene, a node, a RowList's items) is one the app defines or a built-in one."""
    files = entries(package_app(SAMPLE_APP, ProfilerKeys()).zip_bytes)
    defined, wanted = set(), set()
    for name, data in files.items():
        if name.endswith(".xml"):
            root = ElementTree.fromstring(data)
            defined.add(root.get("name"))
            for script in root.iter("script"):
                uri = script.get("uri")
                assert uri is None or uri.removeprefix("pkg:/") in files, (name, uri)
            wanted |= {
                e.get("itemComponentName") for e in root.iter() if e.get("itemComponentName")
            }
        if name.endswith((".brs", ".xml")):
            text = data.decode()
            wanted |= set(re.findall(r'CreateScene\("(\w+)"\)', text))
            wanted |= set(re.findall(r'CreateObject\("roSGNode", "(\w+)"\)', text))
    assert wanted - {"ContentNode"} <= defined
    assert {"HomeScene", "ContentTask", "RowItem"} <= defined
    assert sum(data.count(b"\n") for name, data in files.items() if name != "manifest") < 200


def test_the_sample_scenario_browses_selects_and_goes_back() -> None:
    scenario = load_scenario(SAMPLE_APP / "scenario.toml")
    kinds = [type(step).__name__ for step in scenario.steps]
    assert [s.label for s in scenario.steps if isinstance(s, Mark)] == ["browse", "details"]
    assert [s.key for s in scenario.steps if isinstance(s, Press)] == [
        "Down",
        "Right",
        "Select",
        "Back",
    ]
    assert kinds.index("Mark") < kinds.index("Press")
    assert 8 <= scenario.planned_seconds() <= 12  # the sample's budget, not a timing


async def test_the_sample_app_installs_on_the_simulator_and_again_is_identical() -> None:
    """The same source packaged twice is the same zip, so the device says so."""
    first = package_app(SAMPLE_APP, ProfilerKeys(mem=True))
    second = package_app(SAMPLE_APP, ProfilerKeys(mem=True))
    async with SimulatedDevice(DeviceConfig(host="127.0.0.1")) as dev:
        async with InstallerClient("127.0.0.1", dev.password, port=dev.installer_port) as client:
            assert (await client.sideload(first.zip_bytes)).kind == "installed"
            assert (await client.sideload(second.zip_bytes)).kind == "identical"
        assert dev.installed == first.manifest


# -- .rokuignore against git's own reading of the same patterns ----------------------------------

TREE = [
    "manifest",
    "a.brs",
    "a.psd",
    "keep.psd",
    "c1.txt",
    "a/b.brs",
    "a/b/c.brs",
    "a/b/keep.psd",
    "b/a",
    "b/a.brs",
    "d/x/e",
    "d/e",
    "out/x",
    "src/out/y",
    "docs/a.md",
    "docs/docs/b.md",
    "#hash",
    "tmp/x/y.brs",
]
PATTERN = st.sampled_from(
    [
        "a",
        "a/",
        "/a",
        "b",
        "*.brs",
        "*.psd",
        "!keep.psd",
        "!*.brs",
        "c?.txt",
        "[ab]*",
        "[!a]*.brs",
        "**/b",
        "a/**",
        "d/**/e",
        "/out",
        "out/",
        "docs/",
        "/docs/*.md",
        "\\#hash",
        "# comment",
        "tmp/**/*.brs",
        "x",
        "",
    ]
)


def packaged_as_git_keeps(root: Path, text: str) -> None:
    """``text`` as both ``.rokuignore`` and ``.gitignore`` of ``root``: the package holds
    exactly what ``git ls-files`` keeps (and the manifest)."""
    write(root, {".rokuignore": text, ".gitignore": text})
    git = ["git", "-c", "core.excludesFile=/dev/null", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    out = subprocess.run(
        [*git, "ls-files", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
    ).stdout
    kept_by_git = set(out.decode().split("\0")) - {"", ".gitignore", ".rokuignore"}
    packaged = entries(package_app(root, ProfilerKeys()).zip_bytes)
    assert set(packaged) - {".gitignore"} == kept_by_git | {"manifest"}, text


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@settings(max_examples=40, deadline=None)
@given(st.lists(PATTERN, max_size=6))
def test_rokuignore_leaves_out_what_git_would_ignore(patterns: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write(Path(tmp), {name: name for name in TREE})
        text = "\n".join(patterns) + "\n"
        packaged_as_git_keeps(root, text)


#: Pattern pieces: literals, every wildcard, classes, escapes and the "/" that anchors.
PIECE = st.sampled_from(["a", "b", "ab", "*", "?", "**", "/", "**/", "/**", "[ab]", "[!a]", "\\a"])
NAME = st.text("ab", min_size=1, max_size=4)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["", "!"]), st.lists(PIECE, min_size=1, max_size=6)),
        min_size=1,
        max_size=3,
    ),
    st.lists(st.lists(NAME, min_size=1, max_size=3).map("/".join), min_size=1, max_size=8),
)
@example(rules=[("", ["/**", "**/", "a"])], paths=["a"])  # "/****/a": four stars are "**" too
@example(rules=[("", ["a", "**/", "a"])], paths=["aa"])  # "a**/a": "**" after git's literal prefix
@example(rules=[("", ["a", "/", "/"])], paths=["a/a"])  # "a//": git takes off one "/" only
@example(rules=[("", ["/", "/", "a"])], paths=["a"])  # "//a" likewise
def test_generated_patterns_leave_out_what_git_would(
    rules: list[tuple[str, list[str]]], paths: list[str]
) -> None:
    """Patterns built from every wildcard, over generated trees, against ``git ls-files``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files: dict[str, bytes | str] = {"manifest": ""}
        for path in paths:  # a name that is already a file's cannot also be a directory
            if not any(f"{f}/".startswith(f"{path}/") or path.startswith(f"{f}/") for f in files):
                files[path] = path
        write(root, files)
        text = "".join(bang + "".join(pieces) + "\n" for bang, pieces in rules)
        packaged_as_git_keeps(root, text)
