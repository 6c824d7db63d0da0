//! A consumed message's own CONSUME event fields, written once when the intake takes it
//! in, kept with its process-queue entry and copied into the event when it is settled.
//!
//! Settlement is on the poll thread, under the GIL the listener's threads need. Encoding
//! a CONSUME event there from the message reads its fields back from Python objects (ten
//! slots, three property lookups, number and text conversions: most of the 0.2 us an event
//! tracing added to consuming). At intake the same fields are at hand, freshly built, and
//! the three properties are the record's own header values, already checked to be text:
//! no lookup. Settlement then writes the shared head, copies these bytes around the call's
//! status and the message's reconsume count, and reads nothing else of the message.
//!
//! Only the intake's compiled runs keep them (`intake::accept_run` from a direct batch);
//! a message without them is encoded from its fields, as the pure path encodes every one.
//! Both write the same bytes (`tests/integration/trace/test_trace_consume_fields.py`).

use crate::encodings::Encodings;
use crate::message_ext::Fields;
use crate::{put_born_and_reason, put_consume, put_long, put_place};
use pyo3::prelude::*;

/// A message's CONSUME event fields from its topic to its keys, then from its born time to
/// the event's end.
pub struct Received {
    data: Box<[u8]>,
    /// Where the born time starts in `data`.
    born_at: usize,
}

impl Received {
    /// The fields of `msg`, a message just built from a record whose `ORIGIN_MESSAGE_ID`,
    /// `TAGS` and `KEYS` headers (in that order) hold `properties` (UTF-8, each the
    /// message's property of that name).
    pub fn of(msg: &Fields<'_, '_>, properties: [Option<&[u8]>; 3]) -> PyResult<Self> {
        let mut data = Vec::with_capacity(128);
        put_place(&mut data, msg)?;
        for value in properties {
            match value {
                Some(text) => {
                    data.push(2);
                    put_long(&mut data, text.len() as i64);
                    data.extend_from_slice(text);
                }
                None => data.push(0),
            }
        }
        let born_at = data.len();
        put_born_and_reason(&mut data, msg)?;
        Ok(Received {
            data: data.into_boxed_slice(),
            born_at,
        })
    }

    /// The fields up to the keys.
    pub fn up_to_keys(&self) -> &[u8] {
        &self.data[..self.born_at]
    }

    /// The fields from the born time on.
    pub fn born_on(&self) -> &[u8] {
        &self.data[self.born_at..]
    }
}

/// The CONSUME events settlement writes from the fields the intake kept ([`Received`]) for
/// calls that succeeded whole (`consume_batch::settle_successes`), after the `head` they
/// share, with SUCCESS (`success`, encoded) and each call's duration; `take` hands the
/// events written so far over.
#[pyclass(module = "rmqcompat._core", name = "ConsumeEvents")]
pub struct ConsumeEvents {
    head: Vec<u8>,
    success: Vec<u8>,
    /// SUCCESS with the last duration written, and that duration.
    ok: (Vec<u8>, i64),
    events: Encodings,
}

impl ConsumeEvents {
    /// The event of a message with these fields, `reconsume` its count, whose call took
    /// `took_ms`.
    pub fn write(
        &mut self,
        received: &Received,
        took_ms: i64,
        reconsume: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if self.ok.1 != took_ms || self.ok.0.is_empty() {
            let mut ok = self.success.clone();
            ok.push(2);
            put_long(&mut ok, took_ms);
            self.ok = (ok, took_ms);
        }
        let (head, ok) = (&self.head, &self.ok.0);
        self.events.write(|out| {
            put_consume(
                out,
                head,
                ok,
                reconsume,
                |out| {
                    out.extend_from_slice(received.up_to_keys());
                    Ok(())
                },
                |out| {
                    out.extend_from_slice(received.born_on());
                    Ok(())
                },
            )
        })
    }
}

#[pymethods]
impl ConsumeEvents {
    #[new]
    fn new(head: Vec<u8>, success: Vec<u8>) -> Self {
        ConsumeEvents {
            head,
            success,
            ok: (Vec::new(), 0),
            events: Encodings::default(),
        }
    }

    fn __len__(&self) -> usize {
        self.events.len()
    }

    /// The events written so far, as `Encodings`; none are left.
    fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, Encodings>> {
        Bound::new(py, std::mem::take(&mut self.events))
    }
}
