//! The push consumer's intake of a partition's run of plain records, compiled: the
//! counterpart of `rmqcompat.consumer.intake.accept_run` (see it for the rules).

use crate::process_queue::add_to;
use crate::run::run_offset;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

#[pyfunction]
pub fn accept_run<'py>(
    records: &Bound<'py, PyList>,
    start: usize,
    place: (Bound<'py, PyString>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    pq: &Bound<'py, PyAny>,
    out: &Bound<'py, PyList>,
) -> PyResult<usize> {
    let py = records.py();
    let (physical, logical, partition) = place;
    let mut at = start;
    while at < records.len() {
        let record = records.get_item(at)?;
        if record.is_none() {
            break; // taken already
        }
        let Some(offset) = run_offset(&record, physical.as_any(), &partition)? else {
            break;
        };
        let Some(msg) = crate::plain_decode(py, &record, &physical, &logical, &partition, &offset)?
        else {
            break;
        };
        let size = crate::field(&msg, crate::Field::Body)?.len()?;
        add_to(pq, &offset, i64::try_from(size).unwrap_or(i64::MAX))?;
        out.append(msg)?;
        records.set_item(at, py.None())?; // taken: freed once its message is built
        at += 1;
    }
    Ok(at)
}
