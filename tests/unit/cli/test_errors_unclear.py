"""Issue 7 item 10: wrong input fails early, typed, with the field or file named."""

from __future__ import annotations

import os
import stat

import pytest
from click.testing import CliRunner

from rmqcompat.cli.main import EXIT_FAILED, EXIT_USAGE, main
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.devbroker import free_port
from rmqcompat.errors import InvalidMessageError, InvalidNameError
from rmqcompat.message import Message
from rmqcompat.producer.records import check_timer
from rmqcompat.producer.settings import TIMER_MAX_DELAY_SEC
from rmqcompat.producer.spool import Spool, SpoolEntry
from rmqcompat.topics.naming import CONSUMER_GROUP_MAX_LENGTH, retry_topic
from rmqcompat.topics.topology import build_topology
from rmqcompat.wire import OutgoingRecord

NOW_MS = 1_700_000_000_000


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("body", {"body": 42}),
        ("tags", {"tags": 7}),
        ("keys", {"keys": 7}),
        ("keys", {"keys": ["a", 1]}),
        ("flag", {"flag": "1"}),
        ("delay_time_level", {"delay_time_level": "3"}),
        ("delay_time_level", {"delay_time_level": True}),
        ("deliver_time_ms", {"deliver_time_ms": 1.5e12}),
        ("properties", {"properties": [("a", "b")]}),
        ("properties", {"properties": {"a": 1}}),
    ],
)
def test_a_field_of_the_wrong_type_fails_at_construction_naming_the_field(field, kwargs):
    with pytest.raises(InvalidMessageError, match=field):
        Message("T", **kwargs)


def test_message_type_errors_are_type_errors_and_put_user_property_checks_values():
    with pytest.raises(TypeError):
        Message("T", body=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidMessageError, match="properties"):
        Message("T").put_user_property("a", 1)  # type: ignore[arg-type]


def test_a_timer_beyond_rocketmqs_three_day_cap_is_refused():
    assert TIMER_MAX_DELAY_SEC == 3 * 24 * 3600
    cap_ms = TIMER_MAX_DELAY_SEC * 1000
    check_timer(Message("T", deliver_time_ms=NOW_MS + cap_ms), NOW_MS, cap_ms)
    with pytest.raises(InvalidMessageError, match="deliver_time_ms"):
        check_timer(Message("T", deliver_time_ms=NOW_MS + cap_ms + 1), NOW_MS, cap_ms)


def _entry(msg_id: str = "ID1") -> SpoolEntry:
    return SpoolEntry(msg_id, OutgoingRecord("T", b"secret body", None, []), NOW_MS)


def test_spool_files_and_the_spool_directory_are_private(tmp_path):
    directory = tmp_path / "spool"
    path = Spool(directory).put(_entry())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_unreadable_spool_files_are_reported_with_their_path(tmp_path):
    spool = Spool(tmp_path)
    good = spool.put(_entry("GOOD"))
    (tmp_path / "000000000000001-bad.json").write_text("{not json")
    entries, unreadable = spool.scan()
    assert [e.msg_id for e in entries] == ["GOOD"]
    assert [p.path.name for p in unreadable] == ["000000000000001-bad.json"]
    if os.geteuid() != 0:  # root reads every file
        good.chmod(0)
        assert len(spool.scan()[1]) == 2


def test_spool_resend_reports_unreadable_files_and_exits_non_zero(tmp_path):
    (tmp_path / "000000000000001-bad.json").write_text("{not json")
    result = CliRunner().invoke(
        main,
        [
            "--bootstrap-servers",
            f"127.0.0.1:{free_port()}",
            "spool",
            "resend",
            "--dir",
            str(tmp_path),
        ],
    )
    assert "000000000000001-bad.json" in result.stderr
    assert result.exit_code != 0


def test_spool_list_reports_unreadable_files_and_exits_non_zero(tmp_path):
    (tmp_path / "000000000000001-bad.json").write_text("{not json")
    result = CliRunner().invoke(main, ["spool", "list", "--dir", str(tmp_path)])
    assert "000000000000001-bad.json" in result.stderr
    assert result.exit_code == 1


def test_bad_passthrough_setting_is_one_line_and_exit_code_2():
    result = CliRunner().invoke(
        main,
        ["--bootstrap-servers", f"127.0.0.1:{free_port()}", "forwarder", "run", "-X", "no.such=1"],
    )
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.count("\n") == 1
    assert "no.such" in result.stderr
    assert "Traceback" not in result.output


def test_unreachable_broker_is_one_line_and_exit_code_1(tmp_path):
    # spool resend starts a producer, which waits at most send_msg_timeout (3 s).
    result = CliRunner().invoke(
        main,
        [
            "--bootstrap-servers",
            f"127.0.0.1:{free_port()}",
            "spool",
            "resend",
            "--dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == EXIT_FAILED
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_debug_shows_the_traceback():
    result = CliRunner().invoke(
        main,
        ["--debug", "--bootstrap-servers", "127.0.0.1:1", "forwarder", "run", "-X", "no.such=1"],
    )
    assert result.exit_code == 1
    assert result.exception is not None  # re-raised: click prints its traceback


def test_provisioning_and_the_consumer_agree_on_the_longest_group():
    client = ClientConfig("127.0.0.1:1")
    longest = "g" * CONSUMER_GROUP_MAX_LENGTH
    ConsumerSettings(longest, client)
    build_topology(groups=[longest], topics=["T"])
    too_long = longest + "g"
    for refuse in (lambda: ConsumerSettings(too_long, client), lambda: retry_topic(too_long)):
        with pytest.raises(InvalidNameError, match=str(CONSUMER_GROUP_MAX_LENGTH)):
            refuse()
    with pytest.raises(InvalidNameError, match=str(CONSUMER_GROUP_MAX_LENGTH)):
        build_topology(groups=[too_long], topics=["T"])
