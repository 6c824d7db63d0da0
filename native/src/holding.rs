//! The forwarder's intake of a partition's run of records, compiled: the counterpart of
//! `rmqcompat.forwarder.holding.hold_run` (see it for the rules).

use crate::process_queue::ProcessQueue;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// Whether `state` tracks `offset` as new: directly for the compiled process queue, by its
/// `track_new` for any other.
fn track_new(state: &Bound<'_, PyAny>, offset: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(compiled) = state.cast::<ProcessQueue>() {
        return Ok(compiled.borrow_mut().insert_new(offset.extract()?, 0));
    }
    state
        .call_method1(intern!(state.py(), "track_new"), (offset,))?
        .is_truthy()
}

/// A cap of `HoldLimits` as a 64-bit bound: one beyond it can never be reached.
fn cap(limits: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> PyResult<i64> {
    let value = limits.getattr(name)?.extract::<i128>()?;
    Ok(i64::try_from(value.max(0)).unwrap_or(i64::MAX))
}

#[pyfunction]
pub fn hold_run<'py>(
    records: &Bound<'py, PyAny>,
    messages: &Bound<'py, PyAny>,
    start: usize,
    place: (Bound<'py, PyAny>, Bound<'py, PyAny>),
    state: &Bound<'py, PyAny>,
    limits: &Bound<'py, PyAny>,
    size: i64,
) -> PyResult<(usize, i64, bool)> {
    let py = messages.py();
    let (topic, partition) = place;
    // `HoldLimits.full`, with its caps read once
    let max_records = cap(limits, intern!(py, "max_records"))?;
    let max_bytes = cap(limits, intern!(py, "max_bytes"))?;
    let list = messages.cast::<PyList>().ok();
    let end = match list {
        Some(list) => list.len(),
        None => messages.len()?,
    };
    let append = records.getattr(intern!(py, "append"))?;
    let (mut at, mut size) = (start, size);
    while at < end {
        let msg = match list {
            Some(list) => list.get_item(at)?,
            None => messages.get_item(at)?,
        };
        if !msg.call_method0(intern!(py, "error"))?.is_none()
            || msg.call_method0(intern!(py, "partition"))?.ne(&partition)?
            || msg.call_method0(intern!(py, "topic"))?.ne(&topic)?
        {
            break;
        }
        let offset = msg.call_method0(intern!(py, "offset"))?;
        if offset.is_none() {
            break;
        }
        let held = i64::try_from(records.len()?).unwrap_or(i64::MAX);
        if held > 0 && (held >= max_records || size >= max_bytes) {
            return Ok((at, size, true));
        }
        if track_new(state, &offset)? {
            let headers = msg.call_method0(intern!(py, "headers"))?;
            let record = i64::try_from(crate::record_size(&msg, &headers)?).unwrap_or(i64::MAX);
            let entry = PyTuple::new(
                py,
                [
                    msg.into_any(),
                    headers,
                    record.into_pyobject(py)?.into_any(),
                ],
            )?;
            append.call1((entry,))?;
            size = size.saturating_add(record);
        }
        at += 1;
    }
    Ok((at, size, false))
}
