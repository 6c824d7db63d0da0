//! Trace events encoded back to back in one buffer: what the core's bulk encoders return
//! and what the trace sink packs into records, instead of one `bytes` object an event.
//!
//! A hand-over's events used to be a list of `bytes`: one allocation, one list slot and
//! one free an event, then on the sink's thread one more list copy and an extraction
//! before the record was written. Here an event is a span of one buffer; reading it as a
//! sequence (`len`, indexing) still gives each event's `bytes`, for tests and the pure
//! reference, while `pack_events` copies the spans straight into records.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Encoded trace events, in order: a read-only sequence of each event's `bytes`.
#[pyclass(module = "rmqcompat._core", name = "Encodings", frozen, sequence)]
#[derive(Default)]
pub struct Encodings {
    data: Vec<u8>,
    /// Where each event ends in `data` (it starts where the one before ends).
    ends: Vec<usize>,
}

impl Encodings {
    /// Room for `events` events of about `size` bytes each.
    pub fn with_capacity(events: usize, size: usize) -> Self {
        Encodings {
            data: Vec::with_capacity(events * size),
            ends: Vec::with_capacity(events),
        }
    }

    /// Writes one more event: `encode` appends its bytes to the buffer (where it fails,
    /// the encoder raises and its encodings are dropped whole).
    pub fn write(&mut self, encode: impl FnOnce(&mut Vec<u8>) -> PyResult<()>) -> PyResult<()> {
        encode(&mut self.data)?;
        self.ends.push(self.data.len());
        Ok(())
    }

    /// Each event's bytes, in order.
    pub fn events(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|at| self.event(at))
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    fn event(&self, at: usize) -> &[u8] {
        let start = if at == 0 { 0 } else { self.ends[at - 1] };
        &self.data[start..self.ends[at]]
    }
}

#[pymethods]
impl Encodings {
    fn __repr__(&self) -> String {
        format!(
            "<Encodings of {} trace events, {} bytes>",
            self.len(),
            self.data.len()
        )
    }

    fn __len__(&self) -> usize {
        self.len()
    }

    /// Event `at`'s bytes (a negative `at` counts from the end).
    fn __getitem__<'py>(&self, py: Python<'py>, at: isize) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            self.event(crate::sequence_index(at, self.len(), "event")?),
        ))
    }
}
