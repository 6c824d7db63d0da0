"""``rmqcompat spool list`` and ``rmqcompat spool resend`` against a real broker."""

from __future__ import annotations

import json

from click.testing import CliRunner
from producer_helpers import by_msg_id, create_topic, read_to_eof

from rmqcompat import properties as props
from rmqcompat.cli.context import CliContext
from rmqcompat.cli.spool_cmd import spool
from rmqcompat.producer import Spool, SpoolEntry
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.wire import OutgoingRecord


def test_spool_list_then_resend_delivers_and_empties_the_spool(
    kafka_bootstrap, namespace, unique_name, tmp_path
):
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=1)
    physical = to_kafka_topic(topic, namespace)
    headers = props.to_headers({props.UNIQ_KEY: "CLI-ID-1"})
    Spool(tmp_path).put(SpoolEntry("CLI-ID-1", OutgoingRecord(physical, b"v", None, headers), 1))
    runner = CliRunner()
    context = CliContext(bootstrap_servers=kafka_bootstrap, namespace=namespace)

    listed = runner.invoke(spool, ["list", "--dir", str(tmp_path), "--json"], obj=context)
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)["entries"]
    assert (row["msg_id"], row["topic"], row["bytes"]) == ("CLI-ID-1", physical, 1)

    resent = runner.invoke(spool, ["resend", "--dir", str(tmp_path)], obj=context)
    assert resent.exit_code == 0, resent.output
    assert "sent=1 still_spooled=0" in resent.output
    assert len(Spool(tmp_path)) == 0
    assert list(by_msg_id(read_to_eof(kafka_bootstrap, physical))) == ["CLI-ID-1"]


def test_spool_resend_needs_bootstrap_servers(tmp_path):
    result = CliRunner().invoke(
        spool,
        ["resend", "--dir", str(tmp_path)],
        obj=CliContext(bootstrap_servers=None, namespace=""),
    )
    assert result.exit_code == 2
    assert "--bootstrap-servers" in result.output
