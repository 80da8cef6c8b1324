"""A browser user on a shared server cannot make corpus opening hang, walk the disk, read outside
the corpus roots, learn which server files exist, see a server file's content, or fill memory and
disk with an upload (issue 9, item 4)."""
from __future__ import annotations

import io
import os
import struct
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from labeler.corpus import load_corpus
from labeler.errors import CorpusError
from labeler.paths import SAMPLE_CORPUS
from labeler_app.corpus_files import (NOT_FOUND, CorpusLimits, corpus_roots, count_zip_members, load_corpus_within_limits,
                              open_server_corpus, resolve_server_path, save_uploaded_corpus)

pytestmark = pytest.mark.timeout(60)
ZERO_MIB = b"\0" * (1 << 20)
BOMB_MIB = 500


def within(seconds: float, fn, *args, **kwargs):
    """Run `fn` in a thread; fail if it has not finished after `seconds` (a hang), else return
    its result or raise its exception."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the test thread
            out["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{getattr(fn, '__name__', fn)} still running after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def root(tmp_path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.csv").write_text("id,text\nS1,outside secret text\n", encoding="utf-8")
    (folder / "notes.txt").write_text("outside secret note", encoding="utf-8")
    return folder.resolve()


def refused(text: str, roots, **kwargs) -> CorpusError:
    with pytest.raises(CorpusError) as err:
        within(5, open_server_corpus, text, roots=roots, **kwargs)
    return err.value


def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def streamed_zeros_zip(name: str, mib: int, extra: dict[str, bytes] | None = None) -> bytes:
    """A zip whose member `name` inflates to `mib` MiB of zeros, written in 1 MiB pieces."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open(name, "w") as w:
            for _ in range(mib):
                w.write(ZERO_MIB)
        for other, data in (extra or {}).items():
            zf.writestr(other, data)
    return buf.getvalue()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    data = streamed_zeros_zip("big.txt", BOMB_MIB)
    assert len(data) < 1 << 20  # ~500 KB: 500 MB of zeros deflate about 1000-fold
    return data


def kept(home: Path) -> list[str]:
    folder = home / "corpora"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def measured(fn, *args, **kwargs) -> tuple[float, int, object]:
    """(seconds, peak traced bytes, result or the exception raised) of one call."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result: object = fn(*args, **kwargs)
    except Exception as exc:  # the caller asserts on it
        result = exc
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak, result


# --------------------------------------------------------------------------- paths on the server


def test_server_path_dev_zero_is_refused_outside_the_roots_and_inside_them(root):
    assert str(refused("/dev/zero", [root])) == str(refused(str(root / "missing.csv"), [root]))
    # Even when an administrator makes /dev a root, a device is never opened.
    assert "not a regular file" in str(refused("/dev/zero", ["/dev"]))
    (root / "zero.jsonl").symlink_to("/dev/zero")
    assert NOT_FOUND in str(refused("zero.jsonl", [root]))  # the link resolves outside the root


def test_server_path_fifo_is_refused_without_hanging(root):
    os.mkfifo(root / "pipe.jsonl")
    assert "not a regular file" in str(refused("pipe.jsonl", [root]))
    folder = root / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha text", encoding="utf-8")
    os.mkfifo(folder / "b.txt")  # skipped by the walk, never opened
    _, corpus = within(5, open_server_corpus, "docs", roots=[root])
    assert corpus.doc_ids() == {"a.txt"}
    beir = root / "beir"
    beir.mkdir()
    os.mkfifo(beir / "corpus.jsonl")  # not a file: the folder is read as a text folder, which has none
    assert "no .txt or .md files" in str(refused("beir", [root]))


def test_server_path_root_of_the_filesystem_is_not_walked(root):
    assert NOT_FOUND in str(refused("/", [root]))
    # With `/` itself a root, the walk stops at its entry limit instead of reading the disk.
    limits = CorpusLimits(max_walk_entries=500)
    start = time.perf_counter()
    err = refused("/", ["/"], limits=limits)
    assert "more than 500 files and folders" in str(err) and time.perf_counter() - start < 2


def test_server_path_outside_the_roots_is_refused_like_a_missing_one(root, outside):
    missing, there = refused(str(outside / "nope.csv"), [root]), refused(str(outside / "secret.csv"), [root])
    assert str(missing) == str(there) and NOT_FOUND in str(there) and str(root) in there.hint
    assert str(outside) not in str(there) and "secret" not in str(there)
    assert str(refused(str(root / "nope.csv"), [root])) == str(there)  # missing inside a root: same words
    assert str(refused(str(outside), [root])) == str(there)  # a folder outside


def test_server_path_dotdot_traversal_is_refused(root, outside):
    relative = os.path.relpath(outside / "secret.csv", root)
    assert relative.startswith("..")
    for typed in (relative, f"{root}/../outside/secret.csv", "sub/../../outside/secret.csv"):
        assert NOT_FOUND in str(refused(typed, [root])), typed


def test_server_path_symlink_out_of_a_root_is_refused_for_a_file_and_a_folder(root, outside):
    (root / "link.csv").symlink_to(outside / "secret.csv")
    (root / "linkdir").symlink_to(outside)
    for typed in ("link.csv", "linkdir", "linkdir/secret.csv", str(root / "linkdir" / "notes.txt")):
        err = refused(typed, [root])
        assert NOT_FOUND in str(err) and "secret" not in str(err), typed
    # Inside an allowed folder, a link leaving the root is skipped, and a linked folder is not entered.
    folder = root / "docs"
    folder.mkdir()
    (folder / "own.txt").write_text("own text", encoding="utf-8")
    (folder / "leak.txt").symlink_to(outside / "notes.txt")
    (folder / "sub").symlink_to(outside)
    (folder / "inside.md").symlink_to(folder / "own.txt")  # a link that stays inside is followed
    path, corpus = open_server_corpus("docs", roots=[root])
    assert corpus.doc_ids() == {"own.txt", "inside.md"} and path == str(folder)
    assert all("secret" not in d.text for d in corpus)
    beir = root / "beir"
    beir.mkdir()
    (outside / "corpus.jsonl").write_text('{"_id": "1", "text": "outside secret"}\n', encoding="utf-8")
    (beir / "corpus.jsonl").symlink_to(outside / "corpus.jsonl")
    assert "leads outside" in str(refused("beir", [root]))


def test_server_csv_error_never_echoes_its_header_or_cells(root):
    (root / "bad.csv").write_text("SECRETHEADER,PRIVATECOL\nCELLVALUE,more\n", encoding="utf-8")
    err = refused("bad.csv", [root])
    assert str(err).startswith("root/bad.csv:1: not a valid corpus file at this line") and "Hint:" in str(err)
    for leaked in ("SECRETHEADER", "PRIVATECOL", "CELLVALUE", str(root)):
        assert leaked not in str(err)
    # The same file read by its owner on the CLI keeps the detailed message.
    assert "SECRETHEADER" in str(pytest.raises(CorpusError, load_corpus, root / "bad.csv").value)
    (root / "dup.jsonl").write_text('{"doc_id": "TOPSECRET", "text": "x"}\n{"doc_id": "TOPSECRET", "text": "y"}\n',
                                    encoding="utf-8")
    err = refused("dup.jsonl", [root])
    assert str(err).startswith("root/dup.jsonl:2: ") and "TOPSECRET" not in str(err)
    (root / "docs").mkdir()
    (root / "docs" / "empty.txt").write_text("   ", encoding="utf-8")
    assert str(refused("docs", [root])).startswith("root/docs/empty.txt:1: not a valid corpus file")


def test_server_path_checks_type_and_size_before_reading(root):
    (root / "x.parquet").write_bytes(b"PAR1")
    assert "unknown corpus file type .parquet" in str(refused("x.parquet", [root]))
    (root / "big.jsonl").write_text('{"doc_id": "a", "text": "' + "x" * 2000 + '"}\n', encoding="utf-8")
    err = refused("big.jsonl", [root], limits=CorpusLimits(max_file_bytes=1000))
    assert "larger than the limit of 1,000 bytes" in str(err)
    (root / "many.csv").write_text("id,text\n" + "".join(f"d{i},text {i}\n" for i in range(20)), encoding="utf-8")
    assert "more than 10 documents" in str(refused("many.csv", [root], limits=CorpusLimits(max_documents=10)))
    folder = root / "docs"
    folder.mkdir()
    for i in range(5):
        (folder / f"{i}.txt").write_text("x" * 300, encoding="utf-8")
    err = refused("docs", [root], limits=CorpusLimits(max_file_bytes=1000))
    assert "total size of the folder's .txt/.md files is larger" in str(err)
    assert "more than 3 documents" in str(refused("docs", [root], limits=CorpusLimits(max_documents=3)))


def test_open_server_corpus_returns_the_normalized_path_and_reads_relative_paths_from_the_first_root(root):
    (root / "tiny.csv").write_text("id,title,text\na,A,alpha\nb,B,beta\n", encoding="utf-8")
    path, corpus = open_server_corpus("tiny.csv", roots=[root, SAMPLE_CORPUS])
    assert path == str(root / "tiny.csv") and sorted(corpus.doc_ids()) == ["a", "b"]
    assert resolve_server_path(f"  {root}/./tiny.csv ", roots=[root]) == root / "tiny.csv"
    assert NOT_FOUND in str(refused("~/tiny.csv", [root]))  # no home-folder expansion for browser input
    assert NOT_FOUND in str(refused("", [root])) and NOT_FOUND in str(refused("a\0b", [root]))


def test_default_corpus_roots_are_the_uploads_folder_and_the_sample(monkeypatch, tmp_path):
    home = Path(os.environ["LABELER_HOME"])
    assert corpus_roots() == ((home / "corpora").resolve(), SAMPLE_CORPUS.resolve())
    path, corpus = open_server_corpus(str(SAMPLE_CORPUS))
    assert path == str(SAMPLE_CORPUS.resolve()) and len(corpus) == 116
    monkeypatch.setenv("LABELER_CORPUS_ROOTS", os.pathsep.join([str(tmp_path), "", str(tmp_path / "b")]))
    assert corpus_roots() == (tmp_path.resolve(), (tmp_path / "b").resolve())


def test_corpus_limits_from_env_reads_each_variable_and_refuses_a_bad_one():
    limits = CorpusLimits.from_env({"LABELER_MAX_CORPUS_BYTES": "1000", "LABELER_MAX_DOCUMENTS": " 5 ",
                                    "LABELER_MAX_ZIP_BYTES": "2000", "LABELER_MAX_ZIP_MEMBERS": "7",
                                    "LABELER_MAX_ZIP_RATIO": "50", "LABELER_MAX_WALK_ENTRIES": "9"})
    assert limits == CorpusLimits(1000, 5, 2000, 7, 50, 9)
    assert CorpusLimits.from_env({}) == CorpusLimits()
    for bad in ("lots", "0", "-3", "1.5"):
        with pytest.raises(CorpusError) as err:
            CorpusLimits.from_env({"LABELER_MAX_DOCUMENTS": bad})
        message = str(err.value)
        assert message.startswith("LABELER_MAX_DOCUMENTS must be a positive whole number") and "\n" not in message


def test_load_corpus_within_limits_applies_them_to_a_configured_path(tmp_path):
    (tmp_path / "c.jsonl").write_text("".join(f'{{"doc_id": "d{i}", "text": "t"}}\n' for i in range(4)))
    assert len(load_corpus_within_limits(tmp_path / "c.jsonl")) == 4
    with pytest.raises(CorpusError, match="more than 3 documents"):
        load_corpus_within_limits(tmp_path / "c.jsonl", CorpusLimits(max_documents=3))


# --------------------------------------------------------------------------- uploads


def test_upload_zip_bomb_is_refused_fast_in_bounded_memory_keeping_nothing(tmp_path, bomb):
    seconds, peak, result = measured(save_uploaded_corpus, "bomb.zip", bomb, home=tmp_path)
    assert isinstance(result, CorpusError) and "bomb.zip/big.txt" in str(result), result
    assert seconds < 2 and peak < 16 << 20, (seconds, peak)
    assert kept(tmp_path) == []


def test_upload_zip_bomb_with_lying_sizes_is_refused_by_the_bytes_actually_inflated(tmp_path, bomb):
    # Claim the member inflates to 1,000 bytes: the declared checks pass; the inflating stops there.
    data = bytearray(bomb)
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<L", data, central + 24, 1000)
    seconds, peak, result = measured(save_uploaded_corpus, "liar.zip", bytes(data), home=tmp_path)
    assert isinstance(result, CorpusError) and "liar.zip" in str(result), result
    assert seconds < 2 and peak < 16 << 20, (seconds, peak)
    assert kept(tmp_path) == []
    # Claim a compressed size of 4 GB, so the stated ratio looks harmless: the member's real span counts.
    data = bytearray(bomb)
    struct.pack_into("<L", data, data.rfind(b"PK\x01\x02") + 20, 0xFFFFFFF0)
    seconds, peak, result = measured(save_uploaded_corpus, "liar.zip", bytes(data), home=tmp_path)
    assert isinstance(result, CorpusError) and "inflates more than 200-fold" in str(result), result
    assert seconds < 2 and peak < 16 << 20 and kept(tmp_path) == [], (seconds, peak)
    # Honest sizes past the total limit: refused before a byte is inflated. (zipfile itself never
    # yields more than a member's declared size, so the running count of written bytes is a backstop.)
    data = streamed_zeros_zip("a.txt", 3)
    err = pytest.raises(CorpusError, save_uploaded_corpus, "z.zip", data, home=tmp_path,
                        limits=CorpusLimits(max_zip_bytes=2 << 20, max_zip_ratio=10 ** 6)).value
    assert "total size of the zip's .txt/.md files is larger" in str(err) and kept(tmp_path) == []


def test_upload_zip_with_too_many_members_is_refused_before_zipfile_reads_them(tmp_path, monkeypatch):
    data = zip_bytes({f"d{i}.txt": b"text" for i in range(51)})
    assert count_zip_members(data, 1000) == 51 and count_zip_members(data, 10) == 11
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: pytest.fail("zipfile parsed a refused archive"))
    with pytest.raises(CorpusError, match="more than 50 members"):
        save_uploaded_corpus("many.zip", data, home=tmp_path, limits=CorpusLimits(max_zip_members=50))
    assert kept(tmp_path) == []


def test_upload_zip_skips_a_large_member_that_is_not_text_without_inflating_it(tmp_path):
    data = streamed_zeros_zip("data/big.bin", BOMB_MIB, extra={"a.txt": b"alpha text", ".hidden.txt": b"h",
                                                                "__MACOSX/._a.txt": b"\0\0"})
    seconds, peak, path = measured(save_uploaded_corpus, "mixed.zip", data, home=tmp_path)
    assert isinstance(path, str), path
    assert seconds < 2 and peak < 16 << 20, (seconds, peak)
    assert sorted(p.name for p in Path(path).rglob("*")) == ["a.txt"]
    assert load_corpus(path).doc_ids() == {"a.txt"}


@pytest.mark.parametrize("members, words", [
    ({"/etc/evil.txt": b"x"}, "points outside the archive"),
    ({"a/../../evil.txt": b"x"}, "points outside the archive"),
    ({"..\\evil.txt": b"x"}, "points outside the archive"),
    ({"C:/evil.txt": b"x"}, "points outside the archive"),
    ({"img.png": b"x"}, "holds no .txt or .md files"),
])
def test_upload_zip_refuses_escaping_names_and_zips_without_text(tmp_path, members, words):
    with pytest.raises(CorpusError, match=words):
        save_uploaded_corpus("z.zip", zip_bytes(members), home=tmp_path)
    assert kept(tmp_path) == [] and not (tmp_path / "evil.txt").exists()


def test_upload_zip_refuses_other_compressions_duplicates_and_garbage(tmp_path):
    bz2 = zip_bytes({"a.txt": b"alpha"}, zipfile.ZIP_BZIP2)  # bzip2 inflates without a bound per read
    assert "compression other than deflate" in str(pytest.raises(CorpusError, save_uploaded_corpus, "b.zip", bz2,
                                                                 home=tmp_path).value)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning):
        zf.writestr("a.txt", "one")
        zf.writestr("a.txt", "two")
    assert "twice" in str(pytest.raises(CorpusError, save_uploaded_corpus, "d.zip", buf.getvalue(),
                                        home=tmp_path).value)
    err = pytest.raises(CorpusError, save_uploaded_corpus, "g.zip", b"PK\x03\x04 not really", home=tmp_path).value
    assert str(err) == "g.zip: not a valid zip archive. Hint: upload a .zip of .txt/.md files, or a .jsonl/.csv file."
    assert kept(tmp_path) == []


def test_upload_zip_ignores_symlink_entries(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        link = zipfile.ZipInfo("passwd.txt")
        link.external_attr = (0o120777 << 16)
        zf.writestr(link, "/etc/passwd")
        zf.writestr("a.md", "# A\nalpha")
    path = save_uploaded_corpus("links.zip", buf.getvalue(), home=tmp_path)
    assert load_corpus(path).doc_ids() == {"a.md"} and not any(p.is_symlink() for p in Path(path).rglob("*"))


def test_upload_size_and_document_limits_apply_to_jsonl_and_csv(tmp_path):
    data = "".join(f'{{"doc_id": "d{i}", "text": "t"}}\n' for i in range(20)).encode()
    with pytest.raises(CorpusError, match="the upload is larger than the limit of 100 bytes"):
        save_uploaded_corpus("c.jsonl", data, home=tmp_path, limits=CorpusLimits(max_file_bytes=100))
    with pytest.raises(CorpusError, match=r"^c.jsonl: the corpus holds more than 10 documents"):
        save_uploaded_corpus("c.jsonl", data, home=tmp_path, limits=CorpusLimits(max_documents=10))
    csv = ("id,text\n" + "".join(f"d{i},t\n" for i in range(20))).encode()
    with pytest.raises(CorpusError, match="more than 10 documents"):
        save_uploaded_corpus("c.csv", csv, home=tmp_path, limits=CorpusLimits(max_documents=10))
    assert kept(tmp_path) == []


def test_upload_name_cannot_place_the_file_elsewhere(tmp_path):
    path = save_uploaded_corpus("../../x\\..\\evil\x00.csv", b"id,text\na,alpha\n", home=tmp_path)
    assert Path(path).parent.parent == (tmp_path / "corpora").resolve() and Path(path).name == "evil_.csv"


@pytest.mark.parametrize("name, data", [
    ("notes.zip", zip_bytes({"notes/one.md": b"# First\nbody one", "two.txt": b"body two"})),
    ("mine.jsonl", b'{"doc_id": "a", "text": "alpha"}\n{"doc_id": "b", "text": "beta"}\n'),
])
def test_identical_uploads_at_once_keep_one_folder_and_one_path(tmp_path, name, data):
    first = save_uploaded_corpus(name, data, home=tmp_path / "solo")
    fingerprint = load_corpus(first).fingerprint
    home, n = tmp_path / "home", 6
    barrier = threading.Barrier(n)

    def upload():
        barrier.wait()
        return save_uploaded_corpus(name, data, home=home)

    paths: list[str] = []
    threads = [threading.Thread(target=lambda: paths.append(upload())) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(paths) == n and len(set(paths)) == 1
    assert kept(home) == [Path(first).relative_to(tmp_path / "solo" / "corpora").parts[0]]  # no .upload-* left
    folder = home / "corpora" / kept(home)[0]
    assert not (folder / "corpus").exists()  # never nested one copy inside the other
    assert load_corpus(paths[0]).fingerprint == fingerprint
    assert save_uploaded_corpus(name, data, home=home) == paths[0] and kept(home) == [folder.name]
