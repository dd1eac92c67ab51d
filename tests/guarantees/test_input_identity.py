"""Issue 38, item 3: an input is what it claims to be (freqgap/counting/inputs.py).

A file is identified by its real path (a link beside its target is one file), symlinked
directories are followed once (a loop ends), a dangling link is refused by name, and the
fingerprint (size, mtime in ns, inode) is checked again after reading, so an input changed
during the run, or edited in place between a kill and `--resume`, is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from freqgap.counting.inputs import BadInputError, check_unchanged, list_inputs
from freqgap.counting.job import CountJob, CountJobError, fingerprint, run_count

pytestmark = pytest.mark.timeout(180)


def corpus(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.jsonl").write_text('{"text": "5 days 3 day"}\n')
    return d


def test_a_link_beside_its_target_is_one_file(tmp_path):
    d = corpus(tmp_path)
    (d / "link.jsonl").symlink_to(d / "a.jsonl")
    assert [f.path for f in list_inputs([str(d)])] == [str((d / "a.jsonl").resolve())]
    both = list_inputs([str(d / "a.jsonl"), str(d / "link.jsonl")])
    assert len(both) == 1


def test_a_symlinked_directory_is_followed_once_and_a_loop_ends(tmp_path):
    d = corpus(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.jsonl").write_text('{"text": "1"}\n')
    (d / "sub").symlink_to(other)
    (d / "loop").symlink_to(d)                 # a loop back to the top
    (other / "up").symlink_to(tmp_path)        # and one through the parent
    names = sorted(Path(f.path).name for f in list_inputs([str(d)]))
    assert names == ["a.jsonl", "b.jsonl"]


def test_a_dangling_link_is_refused_by_name(tmp_path):
    d = corpus(tmp_path)
    (d / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    with pytest.raises(BadInputError, match=r"gone\.jsonl: dangling symbolic link"):
        list_inputs([str(d)])
    with pytest.raises(BadInputError, match="dangling symbolic link"):
        list_inputs([str(d / "gone.jsonl")])


def test_a_change_after_listing_is_refused(tmp_path):
    d = corpus(tmp_path)
    files = list_inputs([str(d)])
    check_unchanged(files)
    st = os.stat(d / "a.jsonl")
    os.utime(d / "a.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns + 1))   # same size, same second
    with pytest.raises(BadInputError, match="changed while it was being counted"):
        check_unchanged(files)


def test_resume_fingerprint_sees_a_same_size_edit_within_the_second(tmp_path):
    d = corpus(tmp_path)
    before = fingerprint({}, list_inputs([str(d)]))
    st = os.stat(d / "a.jsonl")
    (d / "a.jsonl").write_text('{"text": "6 days 3 day"}\n')              # same size
    os.utime(d / "a.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert fingerprint({}, list_inputs([str(d)])) != before


def test_an_input_appended_to_during_the_count_is_refused(spark, tmp_path, monkeypatch):
    d = corpus(tmp_path)
    counted = CountJob._count_groups

    def count_then_append(self, *args, **kwargs):
        out = counted(self, *args, **kwargs)
        with open(d / "a.jsonl", "a") as handle:
            handle.write('{"text": "7 days"}\n')
        return out

    monkeypatch.setattr(CountJob, "_count_groups", count_then_append)
    with pytest.raises((BadInputError, CountJobError), match="changed while it was being counted"):
        run_count([str(d)], str(tmp_path / "counts"), spark=spark)
    assert not (tmp_path / "counts" / "_manifest.json").exists()


def test_resume_refuses_an_input_edited_in_place_within_the_second(spark, tmp_path,
                                                                   monkeypatch):
    """A same-size edit keeping the whole-second mtime was mixed into a resumed count."""
    d = corpus(tmp_path)
    (d / "b.jsonl").write_text('{"text": "2 hours"}\n')

    def killed(self, *args, **kwargs):
        raise RuntimeError("killed after counting its groups")

    with monkeypatch.context() as m:
        m.setattr(CountJob, "_reduce", killed)
        with pytest.raises(RuntimeError, match="killed"):
            run_count([str(d)], str(tmp_path / "out"), spark=spark, files_per_job=1)
    a = d / "a.jsonl"
    st = os.stat(a)
    a.write_text('{"text": "6 days 3 day"}\n')                           # same size
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 1))                  # same second
    assert os.stat(a).st_size == st.st_size and int(os.stat(a).st_mtime) == int(st.st_mtime)
    with pytest.raises(CountJobError, match="--resume: the inputs or settings changed"):
        run_count([str(d)], str(tmp_path / "out"), spark=spark, files_per_job=1, resume=True)
