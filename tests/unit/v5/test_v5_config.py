"""ClientConfiguration: endpoints as Kafka bootstrap servers, credentials as SASL."""

from __future__ import annotations

import pytest

from rmqcompat.v5 import ClientConfiguration, Credentials
from rmqcompat.v5.exceptions import IllegalArgumentException


def test_endpoints_become_a_bootstrap_list():
    config = ClientConfiguration("http://a:1;b:2;", Credentials(), "ns")
    assert config.client.bootstrap_servers == "a:1,b:2"
    assert (config.namespace, config.request_timeout) == ("ns", 3)


def test_credentials_become_sasl_plain_over_ssl_and_kafka_config_wins():
    config = ClientConfiguration(
        "a:1", Credentials("ak", "s3cret"), kafka_config={"security.protocol": "SASL_PLAINTEXT"}
    )
    settings = config.client.kafka_config
    assert settings["sasl.username"] == "ak" and settings["sasl.password"] == "s3cret"
    assert settings["security.protocol"] == "SASL_PLAINTEXT"
    assert "s3cret" not in repr(config) and "s3cret" not in repr(config.credentials)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("",), "no address"),
        ((None,), "endpoints must be"),
        (("a:1", None, "bad ns!"), "namespace"),
        (("a:1", None, "", 1.5), "whole seconds"),
        (("a:1", None, "", 0), "greater than 0"),
    ],
)
def test_bad_configuration_raises_illegal_argument(args, text):
    with pytest.raises(IllegalArgumentException, match=text):
        ClientConfiguration(*args)
