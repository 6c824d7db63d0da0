//! The push consumer's intake of a partition's run of plain records, compiled: the
//! counterpart of `rmqcompat.consumer.intake.accept_run` (see it for the rules).

use crate::process_queue::ProcessQueue;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

/// `pq.add(offset, size)`: directly for the compiled process queue, by its method for any
/// other.
fn add(pq: &Bound<'_, PyAny>, offset: &Bound<'_, PyAny>, size: usize) -> PyResult<()> {
    if let Ok(compiled) = pq.cast::<ProcessQueue>() {
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        compiled.borrow_mut().insert(offset.extract()?, size);
        return Ok(());
    }
    pq.call_method1(intern!(pq.py(), "add"), (offset, size))?;
    Ok(())
}

#[pyfunction]
pub fn accept_run<'py>(
    records: &Bound<'py, PyAny>,
    start: usize,
    place: (Bound<'py, PyString>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    pq: &Bound<'py, PyAny>,
    out: &Bound<'py, PyList>,
) -> PyResult<usize> {
    let py = records.py();
    let (physical, logical, partition) = place;
    let list = records.cast::<PyList>().ok();
    let end = match list {
        Some(list) => list.len(),
        None => records.len()?,
    };
    let mut at = start;
    while at < end {
        let record = match list {
            Some(list) => list.get_item(at)?,
            None => records.get_item(at)?,
        };
        if !record.call_method0(intern!(py, "error"))?.is_none()
            || record
                .call_method0(intern!(py, "partition"))?
                .ne(&partition)?
            || record.call_method0(intern!(py, "topic"))?.ne(&physical)?
        {
            break;
        }
        let offset = record.call_method0(intern!(py, "offset"))?;
        if offset.is_none() {
            break;
        }
        let Some(msg) = crate::plain_decode(py, &record, &physical, &logical, &partition, &offset)?
        else {
            break;
        };
        add(pq, &offset, msg.getattr(intern!(py, "body"))?.len()?)?;
        out.append(msg)?;
        at += 1;
    }
    Ok(at)
}
