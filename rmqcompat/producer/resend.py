"""Re-sending spooled messages: on demand and periodically while a producer runs."""

from __future__ import annotations

import logging
import threading

from rmqcompat.core import BUG_ERRORS
from rmqcompat.errors import ConfigError, InvalidNameError
from rmqcompat.message import Message
from rmqcompat.producer.pending import pending_of_record
from rmqcompat.producer.pipeline import Pipeline
from rmqcompat.producer.send_future import SendFuture
from rmqcompat.producer.spool import Spool, SpoolEntry
from rmqcompat.topics.naming import from_kafka_topic

log = logging.getLogger(__name__)


class Resender:
    """Re-sends every spool entry through a running :class:`Pipeline`.

    One re-send pass at a time (a lock), so an entry is never in flight twice from this
    producer. An entry's file is deleted by the pipeline only after its delivery report is
    OK; a failed re-send leaves it for the next pass (it is never spooled twice).
    """

    def __init__(
        self, pipeline: Pipeline, spool: Spool | None, *, attempts: int, interval_s: float | None
    ) -> None:
        self._pipeline = pipeline
        self._spool = spool
        self._attempts = attempts
        self._interval_s = interval_s
        self._pass_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the periodic re-send thread (only with a spool and an interval)."""
        if self._spool is None or self._interval_s is None:
            return
        self._thread = threading.Thread(
            target=self._run, args=(self._spool, self._interval_s), name="rmqcompat-spool-resend"
        )
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        """Block until a pass in progress has finished and the thread ended."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def resend_all(self) -> tuple[int, int]:
        """One pass over the spool; blocks until every entry's outcome is known.

        Returns:
            (sent, still_failed).

        Raises:
            ConfigError: the producer has no spool.
        """
        if self._spool is None:
            raise ConfigError("this producer has no spool_dir")
        with self._pass_lock:
            futures = [self._submit(entry) for entry in self._spool.list()]
            # exception() waits for each outcome: together, for all of them
            sent = sum(1 for future in futures if future.exception() is None)
        return sent, len(futures) - sent

    def _submit(self, entry: SpoolEntry) -> SendFuture:
        logical = _logical_topic(entry.record.topic)
        pending = pending_of_record(
            entry.record,
            entry.msg_id,
            logical,
            Message(logical, entry.record.value),
            max_attempts=self._attempts,
            spool_entry=entry,
        )
        self._pipeline.submit(pending)
        return pending

    def _run(self, spool: Spool, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            if not len(spool):
                continue
            try:
                sent, failed = self.resend_all()
            except BUG_ERRORS:  # keep the thread alive; the next pass tries again
                log.exception("spool re-send pass failed")
                continue
            log.info("spool re-send: %d sent, %d still spooled", sent, failed)


def _logical_topic(physical: str) -> str:
    try:
        return from_kafka_topic(physical)[1]
    except InvalidNameError:
        # A file written by hand or another tool: report the physical name as-is.
        return physical.replace(".", "_")
