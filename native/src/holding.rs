//! The forwarder's intake of a partition's run of records, compiled: the counterpart of
//! `rmqcompat.forwarder.holding.hold_run` (see it for the rules).

use crate::process_queue::track_new_in;
use crate::record::Accessor;
use crate::run::{run_offset, Fetched};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

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
    let fetched = Fetched::new(messages)?;
    let append = records.getattr(intern!(py, "append"))?;
    let (mut at, mut size) = (start, size);
    while at < fetched.len {
        let msg = fetched.get(at)?;
        let Some(offset) = run_offset(&msg, &topic, &partition)? else {
            break;
        };
        let held = i64::try_from(records.len()?).unwrap_or(i64::MAX);
        if held > 0 && (held >= max_records || size >= max_bytes) {
            return Ok((at, size, true));
        }
        if track_new_in(state, &offset)? {
            let headers = crate::record::call(&msg, Accessor::HEADERS)?;
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
