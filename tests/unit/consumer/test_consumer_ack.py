import pytest

from rmqcompat.consumer.ack import all_succeeded, split_batch
from rmqcompat.consumer.listener import MAX_INT, ConsumeConcurrentlyStatus

OK = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER


@pytest.mark.parametrize(
    ("status", "ack_index", "size", "ok", "failed"),
    [
        (OK, MAX_INT, 4, (0, 1, 2, 3), ()),  # untouched ack_index: all succeeded
        (OK, 1, 4, (0, 1), (2, 3)),  # messages [0..ack_index] done, the rest failed
        (OK, 3, 4, (0, 1, 2, 3), ()),
        (OK, -1, 4, (), (0, 1, 2, 3)),
        (LATER, MAX_INT, 4, (), (0, 1, 2, 3)),  # RECONSUME_LATER fails the whole batch
        (LATER, 2, 4, (), (0, 1, 2, 3)),  # ... ack_index is ignored
        (OK, MAX_INT, 1, (0,), ()),
        (LATER, MAX_INT, 1, (), (0,)),
    ],
)
def test_ack_index_rules(status, ack_index, size, ok, failed):
    outcome = split_batch(status, ack_index, size)
    assert outcome.ok == ok
    assert outcome.failed == failed
    # the settle fast path's question gives the same answer as the split
    assert all_succeeded(status, ack_index, size, ()) is (failed == ())


@pytest.mark.parametrize("failed_indexes", [(0,), (3,)])
def test_a_marked_message_means_not_all_succeeded(failed_indexes):
    assert not all_succeeded(OK, MAX_INT, 4, failed_indexes)


def test_per_message_failure_with_reconsume_later_fails_only_marked():
    outcome = split_batch(LATER, MAX_INT, 5, failed_indexes={1, 3})
    assert outcome.ok == (0, 2, 4)
    assert outcome.failed == (1, 3)


def test_per_message_failure_with_success_adds_to_ack_index_failures():
    outcome = split_batch(OK, 2, 5, failed_indexes={0})
    assert outcome.ok == (1, 2)
    assert outcome.failed == (0, 3, 4)


def test_per_message_failure_ignores_out_of_range_indexes():
    assert split_batch(LATER, MAX_INT, 2, failed_indexes={7}).failed == (0, 1)
