//! A consumed message's own CONSUME event fields, written while the direct fetch copies
//! its record (without the GIL), handed with the message to its listener call's batch,
//! and copied into the event by the trace thread once the call is settled.
//!
//! Encoding a CONSUME event at settlement from the message reads ten slots, three property
//! lookups and number and text conversions back from Python objects, on the poll thread
//! and under the GIL the listener's threads need: most of what tracing added to
//! consuming. The same fields are plain bytes while the fetch copies the record: its
//! partition and offset, and the header values `plain_message` turns into the message's
//! id, properties, born time and reconsume count. The intake queues them in the message's
//! process queue, in the order it takes the messages (`ProcessQueue::insert_kept`), and
//! `add_batches` gives each batch its messages' fields. Settlement only notes each event:
//! the fields, the message's topic (the one field the intake may change: a retry topic's
//! message is reset to its original topic) and the call's outcome ([`ConsumeEvents`]).
//! The bytes themselves are out of the poll thread's cache by then; the trace thread
//! copies them into its records without the GIL (`pack_events`, [`KeptEvents`]).
//!
//! Only messages `plain_message` built from a direct batch's record have them (the
//! intake's compiled runs); settlement encodes any other message's event from its fields
//! at once, into the same round, as the pure path encodes every one. Both write the same
//! bytes for a message as it was handed to its listener (`tests/unit/test_core_parity.py`,
//! `tests/unit/consumer/test_consume_batch_core.py`,
//! `tests/integration/trace/test_trace_consume_fields.py`): kept fields are those of the
//! message as received, as RocketMQ's consume trace takes them before the listener runs,
//! while an event encoded at settlement reads the message as it is then (the two differ
//! only for a listener that changes a message's id, tags, keys, born time or counts).

use crate::{plain_digits, put_consume_event, put_long, put_some_str};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// Where the header values a CONSUME event reads are kept, by name (`write_fields`).
const UNIQ_KEY: usize = 0;
const BORN_TIMESTAMP: usize = 4;
const RECONSUME_TIME: usize = 5;

/// Where a record's fields lie in its batch's buffer: from `start` to `mid` the fields
/// from the physical topic to the keys, from `mid` to `end` those from the reconsume count
/// to the end of the event.
#[derive(Clone, Copy)]
pub struct Span {
    start: u32,
    mid: u32,
    end: u32,
}

/// What a fetch knows of a record: its physical topic, partition, offset, timestamp (ms)
/// and headers (each its name and value, None: none).
pub struct Record<'a, H: Iterator<Item = (&'a [u8], Option<&'a [u8]>)>> {
    pub physical: &'a [u8],
    pub partition: i32,
    pub offset: i64,
    pub store_timestamp: i64,
    pub headers: H,
}

/// Appends the CONSUME event fields of the message `plain_message` builds from `record` to
/// `out`; None, with nothing appended, where that message would not be built so (a value
/// the event reads repeated or missing, a number not plain). Text values are not checked
/// to be UTF-8: `plain_message` builds no message from a record with a value that is not,
/// so such fields are never used.
pub fn write_fields<'a, H>(out: &mut Vec<u8>, record: Record<'a, H>) -> Option<Span>
where
    H: Iterator<Item = (&'a [u8], Option<&'a [u8]>)>,
{
    let mut values: [Option<&[u8]>; 6] = [None; 6];
    for (name, value) in record.headers {
        let at = match name {
            b"UNIQ_KEY" => UNIQ_KEY,
            b"ORIGIN_MESSAGE_ID" => 1,
            b"TAGS" => 2,
            b"KEYS" => 3,
            b"BORN_TIMESTAMP" => BORN_TIMESTAMP,
            b"RECONSUME_TIME" => RECONSUME_TIME,
            _ => continue,
        };
        if values[at].replace(value?).is_some() {
            return None;
        }
    }
    let number = |text: &[u8], high| plain_digits(std::str::from_utf8(text).ok()?, high);
    let born = match values[BORN_TIMESTAMP] {
        Some(text) => number(text, i64::MAX)?,
        None => record.store_timestamp,
    };
    let reconsume = match values[RECONSUME_TIME] {
        Some(text) => number(text, i64::from(i32::MAX))?,
        None => 0,
    };
    let start = out.len();
    out.push(0); // physical topic
    out.push(2);
    put_long(out, i64::from(record.partition));
    out.push(2);
    put_long(out, record.offset);
    match values[UNIQ_KEY] {
        Some(id) if !id.is_empty() => put_text(out, id),
        // `rmqcompat.wire.offset_message_id`
        _ => {
            let id = format!("@{}@{}", record.partition, record.offset);
            put_long(out, (record.physical.len() + id.len()) as i64);
            out.extend_from_slice(record.physical);
            out.extend_from_slice(id.as_bytes());
        }
    }
    for value in &values[1..4] {
        match value {
            Some(text) => {
                out.push(2);
                put_text(out, text);
            }
            None => out.push(0),
        }
    }
    let mid = out.len();
    out.push(2);
    put_long(out, reconsume);
    out.extend_from_slice(&[0, 0, 0]); // delay level, due time, target topic
    out.push(2);
    put_long(out, born);
    out.push(0); // reason
    let at = |n: usize| u32::try_from(n).ok();
    Some(Span {
        start: at(start)?,
        mid: at(mid)?,
        end: at(out.len())?,
    })
}

/// A string: its length, then its bytes.
fn put_text(out: &mut Vec<u8>, text: &[u8]) {
    put_long(out, text.len() as i64);
    out.extend_from_slice(text);
}

/// A message's kept fields: its batch's buffer, shared, and where they lie in it.
#[derive(Clone)]
pub struct Kept {
    buffer: Arc<Vec<u8>>,
    span: Span,
}

impl Kept {
    pub fn new(buffer: &Arc<Vec<u8>>, span: Span) -> Self {
        Kept {
            buffer: buffer.clone(),
            span,
        }
    }

    fn up_to_keys(&self) -> &[u8] {
        &self.buffer[self.span.start as usize..self.span.mid as usize]
    }

    fn reconsume_on(&self) -> &[u8] {
        &self.buffer[self.span.mid as usize..self.span.end as usize]
    }
}

/// The CONSUME events of the calls settlement finds succeeded whole
/// (`consume_batch::settle_successes`), after the `head` they share, with SUCCESS
/// (`success`, encoded) and each call's duration. A message with kept fields is only
/// noted (its fields, topic and duration): the fields were written while the fetch copied
/// the record and are long out of the poll thread's cache by then, so reading them is
/// left to the trace thread, which writes the events into its records without the GIL
/// (`pack_events`). Any other message's event is encoded from its fields at once
/// (`crate::put_consume_event`), in the same order. `take` hands the events over, as
/// [`KeptEvents`].
#[pyclass(module = "rmqcompat._core", name = "ConsumeEvents")]
pub struct ConsumeEvents {
    head: Arc<Vec<u8>>,
    success: Vec<u8>,
    /// The topics of the noted events so far, encoded, and the last one's text.
    topics: Vec<Vec<u8>>,
    last_topic: Option<(Py<PyAny>, u32)>,
    /// SUCCESS with each duration of the events so far, and the last duration.
    outcomes: Vec<Vec<u8>>,
    last_took: Option<(i64, u32)>,
    /// The events encoded at once, back to back.
    encoded: Vec<u8>,
    events: Vec<KeptEvent>,
}

/// An event settlement noted, or encoded at once.
enum KeptEvent {
    /// Its message's kept fields, and where its topic and outcome are in its
    /// [`KeptEvents`]' tables.
    Noted {
        fields: Kept,
        topic: u32,
        outcome: u32,
    },
    /// Where it lies among the encoded events.
    Encoded { start: usize, end: usize },
}

impl ConsumeEvents {
    /// Notes the event of a message of `topic` with these kept fields, whose call took
    /// `took_ms`.
    pub fn write(&mut self, fields: Kept, topic: Bound<'_, PyAny>, took_ms: i64) -> PyResult<()> {
        let topic = match &self.last_topic {
            Some((last, at)) if last.is(&topic) => *at,
            _ => {
                let mut encoded = Vec::new();
                put_some_str(&mut encoded, Some(topic.clone()))?;
                let at = index_of(&mut self.topics, encoded);
                self.last_topic = Some((topic.unbind(), at));
                at
            }
        };
        let outcome = self.outcome(took_ms);
        self.events.push(KeptEvent::Noted {
            fields,
            topic,
            outcome,
        });
        Ok(())
    }

    /// Encodes the event of `msg`, whose call took `took_ms`, from its fields; false,
    /// with nothing written, where they cannot be encoded (the caller hands the message to
    /// the encoder that drops and counts such events).
    pub fn encode(&mut self, msg: &Bound<'_, PyAny>, took_ms: i64) -> bool {
        let outcome = self.outcome(took_ms) as usize;
        let start = self.encoded.len();
        let outcome = &self.outcomes[outcome];
        if put_consume_event(&mut self.encoded, &self.head, outcome, msg, None).is_err() {
            self.encoded.truncate(start);
            return false;
        }
        let end = self.encoded.len();
        self.events.push(KeptEvent::Encoded { start, end });
        true
    }

    /// The index of SUCCESS with the duration `took_ms` in the outcomes.
    fn outcome(&mut self, took_ms: i64) -> u32 {
        match self.last_took {
            Some((ms, at)) if ms == took_ms => at,
            _ => {
                let mut ok = self.success.clone();
                ok.push(2);
                put_long(&mut ok, took_ms);
                let at = index_of(&mut self.outcomes, ok);
                self.last_took = Some((took_ms, at));
                at
            }
        }
    }
}

/// The index of `encoded` in `table`, added there if it is not yet.
fn index_of(table: &mut Vec<Vec<u8>>, encoded: Vec<u8>) -> u32 {
    let at = table.iter().position(|known| *known == encoded);
    at.unwrap_or_else(|| {
        table.push(encoded);
        table.len() - 1
    }) as u32
}

#[pymethods]
impl ConsumeEvents {
    #[new]
    fn new(head: &[u8], success: &[u8]) -> Self {
        ConsumeEvents {
            head: Arc::new(head.to_vec()),
            success: success.to_vec(),
            topics: Vec::new(),
            last_topic: None,
            outcomes: Vec::new(),
            last_took: None,
            encoded: Vec::new(),
            events: Vec::new(),
        }
    }

    fn __len__(&self) -> usize {
        self.events.len()
    }

    /// The events so far; none are left.
    fn take(&mut self) -> KeptEvents {
        self.last_topic = None;
        self.last_took = None;
        KeptEvents {
            head: self.head.clone(),
            topics: std::mem::take(&mut self.topics),
            outcomes: std::mem::take(&mut self.outcomes),
            encoded: std::mem::take(&mut self.encoded),
            events: std::mem::take(&mut self.events),
        }
    }
}

/// CONSUME events settlement noted or encoded ([`ConsumeEvents`]): a read-only sequence of
/// each event's `bytes`, as the core's other encoders return them
/// ([`Encodings`](crate::encodings::Encodings)); `pack_events` writes each event into
/// its record without building it first.
#[pyclass(module = "rmqcompat._core", name = "KeptEvents", frozen, sequence)]
pub struct KeptEvents {
    head: Arc<Vec<u8>>,
    topics: Vec<Vec<u8>>,
    outcomes: Vec<Vec<u8>>,
    encoded: Vec<u8>,
    events: Vec<KeptEvent>,
}

impl KeptEvents {
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Event `at`'s bytes, in the order they are written: its kept fields' between the
    /// shared head, topic and outcome, or its encoding whole.
    fn pieces(&self, at: usize) -> [&[u8]; 5] {
        match &self.events[at] {
            KeptEvent::Noted {
                fields,
                topic,
                outcome,
            } => [
                &self.head,
                &self.topics[*topic as usize],
                fields.up_to_keys(),
                &self.outcomes[*outcome as usize],
                fields.reconsume_on(),
            ],
            KeptEvent::Encoded { start, end } => [&self.encoded[*start..*end], &[], &[], &[], &[]],
        }
    }

    /// Event `at`'s size in bytes (slices' lengths only: its kept fields are not read).
    pub fn event_len(&self, at: usize) -> usize {
        self.pieces(at).iter().map(|piece| piece.len()).sum()
    }

    /// Appends event `at`'s bytes to `out`.
    pub fn write_event(&self, at: usize, out: &mut Vec<u8>) {
        for piece in self.pieces(at) {
            out.extend_from_slice(piece);
        }
    }
}

#[pymethods]
impl KeptEvents {
    fn __repr__(&self) -> String {
        let (events, noted) = (self.len(), self.noted());
        format!("<KeptEvents of {events} CONSUME events, {noted} from kept fields>")
    }

    /// How many of the events were noted from kept fields (the others encoded at once).
    #[getter]
    fn noted(&self) -> usize {
        let noted = |event: &&KeptEvent| matches!(event, KeptEvent::Noted { .. });
        self.events.iter().filter(noted).count()
    }

    fn __len__(&self) -> usize {
        self.len()
    }

    /// Event `at`'s bytes (a negative `at` counts from the end).
    fn __getitem__<'py>(&self, py: Python<'py>, at: isize) -> PyResult<Bound<'py, PyBytes>> {
        let at = crate::sequence_index(at, self.len(), "event")?;
        let mut event = Vec::with_capacity(self.event_len(at));
        self.write_event(at, &mut event);
        Ok(PyBytes::new(py, &event))
    }
}

/// The CONSUME event the kept path writes for a record the direct fetch copied (its
/// physical topic, partition, offset, timestamp in ms and headers, each name and value)
/// once its message, of `topic`, succeeded in a call that took `took_ms`: after `head`,
/// with SUCCESS encoded as `success`; None where the fetch keeps no fields for it. The
/// fetch, settlement and packing of one record without a broker, for the parity tests
/// (`tests/unit/test_core_parity.py`).
#[pyfunction]
#[pyo3(signature = (head, success, topic, took_ms, physical, partition, offset, timestamp, headers))]
#[allow(clippy::too_many_arguments)] // a record's parts, and an event's
pub fn kept_consume_event<'py>(
    head: &[u8],
    success: &[u8],
    topic: Bound<'py, PyAny>,
    took_ms: i64,
    physical: &str,
    partition: i32,
    offset: i64,
    timestamp: i64,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let py = topic.py();
    let mut buffer = Vec::new();
    let record = Record {
        physical: physical.as_bytes(),
        partition,
        offset,
        store_timestamp: timestamp,
        headers: headers
            .iter()
            .map(|(name, value)| (name.as_slice(), value.as_deref())),
    };
    let Some(span) = write_fields(&mut buffer, record) else {
        return Ok(None);
    };
    let mut events = ConsumeEvents::new(head, success);
    events.write(Kept::new(&Arc::new(buffer), span), topic, took_ms)?;
    events.take().__getitem__(py, 0).map(Some)
}
