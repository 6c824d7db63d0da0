//! The push consumer's intake of a partition's run of plain records, compiled: the
//! counterpart of `rmqcompat.consumer.intake.accept_run` (see it for the rules).

use crate::direct_fetch::DirectBatch;
use crate::process_queue::add_to;
use crate::received::Kept;
use crate::run::run_offset;
use crate::Place;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

#[pyfunction]
#[pyo3(signature = (records, start, place, pq, out, checked=None))]
pub fn accept_run<'py>(
    records: &Bound<'py, PyAny>,
    start: usize,
    place: (Bound<'py, PyString>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    pq: &Bound<'py, PyAny>,
    out: &Bound<'py, PyList>,
    checked: Option<&Bound<'py, PyDict>>,
) -> PyResult<usize> {
    let py = records.py();
    let (physical, logical, partition) = place;
    let place = Place {
        physical: &physical,
        logical: &logical,
        partition: &partition,
    };
    let mut run = match records.cast::<DirectBatch>() {
        Ok(batch) => {
            let batch = batch.borrow_mut();
            match batch.topic_index(&physical)? {
                Some(topic) => Run::Direct {
                    topic,
                    partition: partition.extract()?,
                    batch,
                },
                None => return Ok(start),
            }
        }
        Err(_) => Run::List(records.cast::<PyList>()?.clone()),
    };
    let mut at = start;
    while at < run.len() {
        let Some((offset, msg)) = run.plain_at(py, at, &place)? else {
            break;
        };
        if let Some(checked) = checked {
            if !reset_checked(&msg, checked)? {
                break;
            }
        }
        let size = crate::field(&msg, crate::Field::Body)?.len()?;
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        add_to(pq, &offset, size, run.kept_at(at))?;
        out.append(msg)?;
        run.take_out(py, at)?; // taken: freed once its message is built
        at += 1;
    }
    Ok(at)
}

/// The records a run is taken from: the list `consume()` returned, or a direct batch.
enum Run<'py> {
    List(Bound<'py, PyList>),
    Direct {
        batch: PyRefMut<'py, DirectBatch>,
        topic: u32,
        partition: i32,
    },
}

impl<'py> Run<'py> {
    fn len(&self) -> usize {
        match self {
            Run::List(list) => list.len(),
            Run::Direct { batch, .. } => batch.len(),
        }
    }

    /// Record `at`'s offset and message while it continues the run in the decode's
    /// common case; None ends the run.
    fn plain_at(
        &self,
        py: Python<'py>,
        at: usize,
        place: &Place<'_, 'py>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        match self {
            Run::List(list) => {
                let record = list.get_item(at)?;
                if record.is_none() {
                    return Ok(None); // taken already
                }
                let physical = place.physical.as_any();
                let Some(offset) = run_offset(&record, physical, place.partition)? else {
                    return Ok(None);
                };
                let msg = crate::plain_decode(
                    py,
                    &record,
                    place.physical,
                    place.logical,
                    place.partition,
                    &offset,
                )?;
                Ok(msg.map(|msg| (offset, msg)))
            }
            Run::Direct {
                batch,
                topic,
                partition,
            } => batch.plain_at(py, at, *topic, *partition, place),
        }
    }

    /// The CONSUME event fields the take wrote for record `at`, if any (a direct batch's).
    fn kept_at(&self, at: usize) -> Option<Kept> {
        match self {
            Run::List(_) => None,
            Run::Direct { batch, .. } => batch.kept_at(at),
        }
    }

    fn take_out(&mut self, py: Python<'py>, at: usize) -> PyResult<()> {
        match self {
            Run::List(list) => list.set_item(at, py.None()),
            Run::Direct { batch, .. } => {
                batch.take_out(at);
                Ok(())
            }
        }
    }
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
