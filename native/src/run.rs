//! A run of fetched records: the records of one partition that one consume call returned
//! one after another, which the intakes (`holding::hold_run`, `intake::accept_run`) take
//! in one call each.

use crate::record::Accessor;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// The records a consume call returned: a list, read without a method call, or any
/// other sequence.
pub struct Fetched<'a, 'py> {
    records: &'a Bound<'py, PyAny>,
    list: Option<&'a Bound<'py, PyList>>,
    pub len: usize,
}

impl<'a, 'py> Fetched<'a, 'py> {
    pub fn new(records: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        let list = records.cast::<PyList>().ok();
        let len = match list {
            Some(list) => list.len(),
            None => records.len()?,
        };
        Ok(Self { records, list, len })
    }

    pub fn get(&self, at: usize) -> PyResult<Bound<'py, PyAny>> {
        match self.list {
            Some(list) => list.get_item(at),
            None => self.records.get_item(at),
        }
    }
}

/// The offset of `record` when it goes on the run of `topic`'s `partition` (no error,
/// that partition and topic, an offset); `None` ends the run. The counterpart of
/// `rmqcompat.wire.run_offset`.
pub fn run_offset<'py>(
    record: &Bound<'py, PyAny>,
    topic: &Bound<'py, PyAny>,
    partition: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !crate::record::call(record, Accessor::ERROR)?.is_none()
        || crate::record::call(record, Accessor::PARTITION)?.ne(partition)?
        || crate::record::call(record, Accessor::TOPIC)?.ne(topic)?
    {
        return Ok(None);
    }
    let offset = crate::record::call(record, Accessor::OFFSET)?;
    Ok((!offset.is_none()).then_some(offset))
}
