//! What a delivery report does to its send: the counterpart of
//! `rmqcompat.producer.deliveries.DeliveryReports` (see it for the rule).

use crate::record::Accessor;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PySet, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

use crate::{python_attr, HeldClock, PendingSend};

/// `concurrent.futures.InvalidStateError`: the send already has its outcome.
static INVALID_STATE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

const DELIVERIES: &str = "rmqcompat.producer.deliveries";

/// The pipeline's handler of delivery reports. It handles the core's `PendingSend` (the
/// only kind the pipeline makes where the core is built); another send is a `TypeError`.
#[pyclass(module = "rmqcompat._core", name = "DeliveryReports", frozen)]
pub struct DeliveryReports {
    failed: Py<PyAny>,
    unspool: Py<PyAny>,
    in_flight: Py<PySet>,
    none_in_flight: Py<PyAny>,
    acknowledged: Option<Py<PyAny>>,
    trace_clock: HeldClock,
    trace_run: usize,
    trace_noted: Py<PyAny>,
}

impl DeliveryReports {
    /// The report of `pending`'s attempt: `err` (None: stored) and librdkafka's `msg`.
    pub fn report(
        &self,
        pending: &Bound<'_, PyAny>,
        err: &Bound<'_, PyAny>,
        msg: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = pending.py();
        let send = pending.cast::<PendingSend>()?;
        if !err.is_none() {
            let producer = send.borrow().producer.clone_ref(py);
            self.failed.call1(py, (send, err, producer))?;
            return Ok(());
        }
        // what the rest needs of the send, read at once: releasing it lets go of its record
        let (entry, message, headers, msg_id, topic) = {
            let this = send.borrow();
            (
                this.spool_entry.clone_ref(py),
                this.message.clone_ref(py),
                this.headers.clone_ref(py),
                this.msg_id.clone_ref(py),
                this.topic.clone_ref(py),
            )
        };
        if !entry.is_none(py) {
            self.unspool.call1(py, (entry,))?;
        }
        let partition = crate::record::call(msg, Accessor::PARTITION)?.unbind();
        let offset = crate::record::call(msg, Accessor::OFFSET)?.unbind();
        if let Err(err) = PendingSend::set_stored(send, partition, offset) {
            let invalid = INVALID_STATE.import(py, "concurrent.futures", "InvalidStateError")?;
            if !err.is_instance(py, invalid) {
                return Err(err);
            }
            python_attr(py, DELIVERIES, "delivered_late")?.call1((send,))?;
            return Ok(());
        }
        PendingSend::release(send);
        if let Some(acknowledged) = &self.acknowledged {
            if !message.is_none(py) {
                let noted = (message, msg_id, topic, headers);
                self.note(py, acknowledged.bind(py), noted)?;
            }
        }
        self.leave(send.as_any())
    }

    /// Notes a stored send, its `(message, msg_id, topic, headers)`, for its PUBLISH
    /// trace event.
    fn note(
        &self,
        py: Python<'_>,
        acknowledged: &Bound<'_, PyAny>,
        (message, msg_id, topic, headers): (Py<PyAny>, Py<PyAny>, Py<PyAny>, Py<PyAny>),
    ) -> PyResult<()> {
        let headers = headers.into_bound(py);
        let written = if headers.is_none() || headers.is_instance_of::<PyDict>() {
            PyTuple::empty(py).into_any()
        } else {
            headers
        };
        let at_ms = self.trace_clock.read(py)?;
        let noted = (at_ms, message, msg_id, topic, py.None(), written);
        acknowledged.call_method1(intern!(py, "append"), (noted,))?;
        if acknowledged.len()? >= self.trace_run {
            self.trace_noted.call0(py)?;
        }
        Ok(())
    }
}

#[pymethods]
impl DeliveryReports {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        failed: Py<PyAny>,
        unspool: Py<PyAny>,
        in_flight: Py<PySet>,
        none_in_flight: Py<PyAny>,
        acknowledged: Option<Py<PyAny>>,
        trace_clock: Py<PyAny>,
        trace_run: usize,
        trace_noted: Py<PyAny>,
    ) -> PyResult<Self> {
        Ok(DeliveryReports {
            failed,
            unspool,
            in_flight,
            none_in_flight,
            acknowledged,
            trace_clock: HeldClock::new(py, trace_clock)?,
            trace_run,
            trace_noted,
        })
    }

    fn __call__(
        &self,
        pending: &Bound<'_, PyAny>,
        err: &Bound<'_, PyAny>,
        msg: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.report(pending, err, msg)
    }

    /// `pending` has its outcome: it leaves the sends in flight (see the Python class).
    fn leave(&self, pending: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = pending.py();
        let in_flight = self.in_flight.bind(py);
        in_flight.discard(pending)?;
        if in_flight.is_empty() {
            self.none_in_flight.call0(py)?;
        }
        Ok(())
    }

    /// No `__clear__`: the cycles through it (the pipeline's bound methods) are broken
    /// by clearing the pipeline.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for held in [
            &self.failed,
            &self.unspool,
            &self.none_in_flight,
            &self.trace_clock.clock,
            &self.trace_noted,
        ] {
            visit.call(held)?;
        }
        visit.call(&self.in_flight)?;
        visit.call(&self.acknowledged)?;
        Ok(())
    }
}
