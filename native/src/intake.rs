//! The push consumer's intake of a partition's run of plain records, compiled: the
//! counterpart of `rmqcompat.consumer.intake.accept_run` (see it for the rules).

use crate::process_queue::add_to;
use crate::run::run_offset;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

#[pyfunction]
#[pyo3(signature = (records, start, place, pq, out, checked=None))]
pub fn accept_run<'py>(
    records: &Bound<'py, PyList>,
    start: usize,
    place: (Bound<'py, PyString>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    pq: &Bound<'py, PyAny>,
    out: &Bound<'py, PyList>,
    checked: Option<&Bound<'py, PyDict>>,
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
        if let Some(checked) = checked {
            if !reset_checked(&msg, checked)? {
                break;
            }
        }
        let size = crate::field(&msg, crate::Field::Body)?.len()?;
        add_to(pq, &offset, i64::try_from(size).unwrap_or(i64::MAX))?;
        out.append(msg)?;
        records.set_item(at, py.None())?; // taken: freed once its message is built
        at += 1;
    }
    Ok(at)
}

/// `rmqcompat.consumer.inbound.reset_checked` of a message `plain_decode` built (its
/// properties a dict): its topic set to the name `checked` holds for its `RETRY_TOPIC`;
/// false, the message unchanged, for a value not among them.
fn reset_checked(msg: &Bound<'_, PyAny>, checked: &Bound<'_, PyDict>) -> PyResult<bool> {
    let py = msg.py();
    let properties = crate::field(msg, crate::Field::Properties)?;
    let Some(original) = properties
        .cast::<PyDict>()?
        .get_item(intern!(py, "RETRY_TOPIC"))?
    else {
        return Ok(true);
    };
    if !original.is_truthy()? {
        return Ok(true);
    }
    let Some(name) = checked.get_item(&original)? else {
        return Ok(false);
    };
    msg.setattr(intern!(py, "topic"), name)?;
    Ok(true)
}
