//! The in-flight bookkeeping of one partition, compiled: the counterpart of
//! `rmqcompat.process_queue.ProcessQueue` (see it for the rules; the parity tests run the
//! same operations through both). Offsets and sizes are Kafka's: 64-bit integers.

use crate::received::Kept;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hash for offsets: a partition's offsets are dense and sequential, so
/// one multiplication spreads them well, and the default SipHash costs more than the rest
/// of an insert.
#[derive(Default)]
struct OffsetHasher(u64);

impl Hasher for OffsetHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*byte)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_i64(&mut self, value: i64) {
        self.0 = (value as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Sizes = HashMap<i64, i64, BuildHasherDefault<OffsetHasher>>;

#[pyclass(module = "rmqcompat._core", name = "ProcessQueue")]
#[derive(Default)]
pub struct ProcessQueue {
    sizes: Sizes,
    /// The CONSUME event fields the intake kept (`crate::received`: a traced concurrent
    /// consumer's only), with their offsets, in the order it took the messages, until
    /// `add_batches` hands them to the messages' batches ([`ProcessQueue::kept_for`]).
    kept: VecDeque<(i64, Kept)>,
    /// In-flight offsets in order, with removed ones dropped lazily from either end.
    order: VecDeque<i64>,
    highest_seen: i64,
    floor: i64,
    #[pyo3(get, set)]
    size_bytes: i64,
    #[pyo3(get, set)]
    dropped: bool,
}

impl ProcessQueue {
    /// Whether the queue's partition was revoked or re-assigned.
    pub fn is_dropped(&self) -> bool {
        self.dropped
    }

    /// `add` for callers in the core (the forwarder's intake).
    pub fn insert(&mut self, offset: i64, size: i64) {
        if offset > self.highest_seen {
            self.highest_seen = offset;
        }
        if self.sizes.contains_key(&offset) {
            return;
        }
        self.sizes.insert(offset, size);
        self.size_bytes += size;
        match self.order.back() {
            Some(last) if offset <= *last => {
                // out of order (a stale record fetched again): where bisect_left puts it
                let at = self.order.partition_point(|known| *known < offset);
                self.order.insert(at, offset);
            }
            _ => self.order.push_back(offset),
        }
    }

    /// `insert` of a message whose CONSUME event fields are `kept`, until its batch takes
    /// them ([`ProcessQueue::kept_for`]).
    pub fn insert_kept(&mut self, offset: i64, size: i64, kept: Kept) {
        if !self.sizes.contains_key(&offset) {
            self.kept.push_back((offset, kept));
        }
        self.insert(offset, size);
    }

    /// The CONSUME event fields kept for the message at `offset`, taken out, or None.
    /// Batches are cut in the order the intake took their messages, so the fields are
    /// found at the front: any kept for an earlier offset belong to a message no batch
    /// took (its partition's position was reset meanwhile) and are let go.
    pub fn kept_for(&mut self, offset: i64) -> Option<Kept> {
        while let Some((front, _)) = self.kept.front() {
            if *front > offset {
                return None;
            }
            let (front, kept) = self.kept.pop_front()?;
            if front == offset {
                return Some(kept);
            }
        }
        None
    }

    /// Whether no CONSUME event fields wait for their batch.
    pub fn keeps_none(&self) -> bool {
        self.kept.is_empty()
    }

    /// `track_new` for callers in the core.
    pub fn insert_new(&mut self, offset: i64, size: i64) -> bool {
        if offset <= self.highest_seen {
            return false;
        }
        self.insert(offset, size);
        true
    }

    fn front(&mut self) -> Option<i64> {
        while let Some(first) = self.order.front() {
            if self.sizes.contains_key(first) {
                return Some(*first);
            }
            self.order.pop_front();
        }
        None
    }

    fn back(&mut self) -> Option<i64> {
        while let Some(last) = self.order.back() {
            if self.sizes.contains_key(last) {
                return Some(*last);
            }
            self.order.pop_back();
        }
        None
    }
}

/// `queue.add(offset, size)`: on the compiled process queue directly, with the message's
/// `kept` CONSUME event fields where there are any, on any other (the pure-Python
/// reference) by its method (which keeps none: its settlement encodes every event from
/// the message).
pub fn add_to(
    queue: &Bound<'_, PyAny>,
    offset: &Bound<'_, PyAny>,
    size: i64,
    kept: Option<Kept>,
) -> PyResult<()> {
    if let Ok(compiled) = queue.cast::<ProcessQueue>() {
        let mut compiled = compiled.borrow_mut();
        match kept {
            Some(kept) => compiled.insert_kept(offset.extract()?, size, kept),
            None => compiled.insert(offset.extract()?, size),
        }
        return Ok(());
    }
    queue.call_method1(intern!(queue.py(), "add"), (offset, size))?;
    Ok(())
}

/// `queue.dropped`: on the compiled process queue directly, on any other by its attribute.
pub fn dropped(queue: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(compiled) = queue.cast::<ProcessQueue>() {
        return Ok(compiled.borrow().is_dropped());
    }
    queue.getattr(intern!(queue.py(), "dropped"))?.is_truthy()
}

/// `queue.track_new(offset)`: on the compiled process queue directly, on any other by its
/// method.
pub fn track_new_in(queue: &Bound<'_, PyAny>, offset: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(compiled) = queue.cast::<ProcessQueue>() {
        return Ok(compiled.borrow_mut().insert_new(offset.extract()?, 0));
    }
    queue
        .call_method1(intern!(queue.py(), "track_new"), (offset,))?
        .is_truthy()
}

#[pymethods]
impl ProcessQueue {
    #[new]
    fn new() -> Self {
        Self {
            highest_seen: -1,
            floor: -1,
            ..Self::default()
        }
    }

    fn add(&mut self, offset: i64, size: i64) {
        self.insert(offset, size);
    }

    #[pyo3(signature = (offset, size = 0))]
    fn track_new(&mut self, offset: i64, size: i64) -> bool {
        self.insert_new(offset, size)
    }

    #[getter]
    fn highest_seen(&self) -> i64 {
        self.highest_seen
    }

    fn seen(&mut self, offset: i64) {
        if offset > self.highest_seen {
            self.highest_seen = offset;
        }
    }

    fn remove(&mut self, offset: i64) {
        if let Some(size) = self.sizes.remove(&offset) {
            self.size_bytes -= size;
        }
    }

    /// Reads `offsets` before it borrows the queue: iterating them may run Python code,
    /// which may hand the GIL to a listener thread that reads the queue (see
    /// `consume_batch::kept_of`).
    fn remove_all(slf: &Bound<'_, Self>, offsets: &Bound<'_, PyAny>) -> PyResult<()> {
        let offsets: Vec<i64> = match offsets.cast::<PyList>() {
            Ok(list) => list
                .iter()
                .map(|offset| offset.extract())
                .collect::<PyResult<_>>()?,
            Err(_) => offsets
                .try_iter()?
                .map(|offset| offset?.extract())
                .collect::<PyResult<_>>()?,
        };
        let mut this = slf.borrow_mut();
        let freed: i64 = offsets
            .iter()
            .map(|offset| this.sizes.remove(offset).unwrap_or(0))
            .sum();
        this.size_bytes -= freed;
        Ok(())
    }

    fn __contains__(&self, offset: &Bound<'_, PyAny>) -> bool {
        // anything but an offset is not in flight, as with the reference's dict
        offset
            .extract::<i64>()
            .is_ok_and(|offset| self.sizes.contains_key(&offset))
    }

    #[getter]
    fn count(&self) -> usize {
        self.sizes.len()
    }

    fn first(&mut self) -> Option<i64> {
        self.front()
    }

    fn last(&mut self) -> Option<i64> {
        self.back()
    }

    #[getter]
    fn span(&mut self) -> i64 {
        match self.front() {
            None => 0,
            Some(first) => self.back().map_or(0, |last| last - first),
        }
    }

    fn commit_offset(&mut self) -> Option<i64> {
        if self.floor < 0 && self.highest_seen < 0 {
            return None;
        }
        let candidate = self.front().unwrap_or(self.highest_seen + 1);
        self.floor = self.floor.max(candidate);
        Some(self.floor)
    }

    fn start_at(&mut self, offset: i64) {
        self.floor = self.floor.max(offset);
    }

    fn rebase(&mut self, offset: i64) {
        self.floor = offset;
    }

    fn __repr__(&self) -> String {
        format!(
            "ProcessQueue(count={}, size_bytes={}, highest_seen={}, dropped={})",
            self.sizes.len(),
            self.size_bytes,
            self.highest_seen,
            if self.dropped { "True" } else { "False" }
        )
    }
}
