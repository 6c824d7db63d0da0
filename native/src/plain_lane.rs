//! The asynchronous send of a plain message in one call: the counterpart of
//! `rmqcompat.producer.plain_lane.PlainLane` (see it for which sends it takes).

use pyo3::exceptions::PyBufferError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PySet, PyType};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::Mutex;

use crate::{plain_headers, HeldClock, MessageIds, PendingSend};

/// `confluent_kafka.KafkaException`, which `produce` raises for an attempt it fails.
static KAFKA_EXCEPTION: PyOnceLock<Py<PyType>> = PyOnceLock::new();

#[pyclass(module = "rmqcompat._core", name = "PlainLane")]
pub struct PlainLane {
    ready: Py<PyDict>,
    max_size: usize,
    ids: Py<PyAny>,
    clock: HeldClock,
    in_flight: Py<PySet>,
    report: Py<PyAny>,
    refused: Py<PyAny>,
    /// The batch client. The pipeline replaces it on its retry thread while a caller's
    /// thread may be inside `send` (which lets go of the GIL in `produce`): a lock, not
    /// an attribute a `send` in progress would keep borrowed.
    producer: Mutex<Py<PyAny>>,
}

impl PlainLane {
    fn client(&self, py: Python<'_>) -> Py<PyAny> {
        let held = self
            .producer
            .lock()
            .expect("the client is never left poisoned");
        held.clone_ref(py)
    }

    fn next_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ids = self.ids.bind(py);
        match ids.cast::<MessageIds>() {
            Ok(ids) => Ok(ids.get().next_id().into_pyobject(py)?.into_any()),
            Err(_) => ids.call_method0(intern!(py, "next_id")),
        }
    }
}

#[pymethods]
impl PlainLane {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        ready: Py<PyDict>,
        max_size: usize,
        ids: Py<PyAny>,
        clock_ms: Py<PyAny>,
        in_flight: Py<PySet>,
        report: Py<PyAny>,
        refused: Py<PyAny>,
    ) -> PyResult<Self> {
        Ok(PlainLane {
            ready,
            max_size,
            ids,
            clock: HeldClock::new(py, clock_ms)?,
            in_flight,
            report,
            refused,
            producer: Mutex::new(py.None()),
        })
    }

    #[getter]
    fn producer(&self, py: Python<'_>) -> Py<PyAny> {
        self.client(py)
    }

    #[setter]
    fn set_producer(&self, producer: Py<PyAny>) {
        let replaced = {
            let mut held = self
                .producer
                .lock()
                .expect("the client is never left poisoned");
            std::mem::replace(&mut *held, producer)
        };
        drop(replaced); // after the lock: dropping a client may run Python code
    }

    fn send(
        &self,
        msg: &Bound<'_, PyAny>,
        attempts: Py<PyAny>,
        on_outcome: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PendingSend>>> {
        let py = msg.py();
        let producer = self.client(py);
        let body = msg.getattr(intern!(py, "body"))?;
        if producer.is_none(py) {
            return Ok(None);
        }
        let Ok(body) = body.cast_exact::<PyBytes>() else {
            return Ok(None);
        };
        if body.as_bytes().len() > self.max_size {
            return Ok(None);
        }
        let topic = msg.getattr(intern!(py, "topic"))?;
        let Some(physical) = self.ready.bind(py).get_item(&topic)? else {
            return Ok(None);
        };
        let msg_id = self.next_id(py)?;
        let Some(headers) = plain_headers(py, msg, &msg_id, &self.clock.read(py)?)? else {
            return Ok(None);
        };
        let pending = PendingSend::new(
            py,
            physical.unbind(),
            body.clone().into_any().unbind(),
            py.None(),
            headers.into_any().unbind(),
            msg_id.unbind(),
            topic.unbind(),
            msg.clone().unbind(),
            attempts,
            None,
            on_outcome,
            None,
            None,
        )?;
        let send = pending.bind(py);
        self.in_flight.bind(py).add(send)?;
        let attempt =
            PendingSend::start_attempt(send, producer.clone_ref(py), self.report.clone_ref(py));
        if let Err(err) = attempt {
            let kafka = KAFKA_EXCEPTION.import(py, "confluent_kafka", "KafkaException")?;
            if !err.is_instance_of::<PyBufferError>(py) && !err.is_instance(py, kafka) {
                return Err(err);
            }
            self.refused.call1(py, (producer, send, err.value(py)))?;
        }
        Ok(Some(pending))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for held in [&self.ids, &self.clock.clock, &self.report, &self.refused] {
            visit.call(held)?;
        }
        visit.call(&self.ready)?;
        visit.call(&self.in_flight)?;
        if let Ok(producer) = self.producer.try_lock() {
            visit.call(&*producer)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        Python::attach(|py| {
            self.report = py.None();
            self.refused = py.None();
            self.clock.clock = py.None();
            if let Ok(producer) = self.producer.get_mut() {
                *producer = py.None();
            }
        });
    }
}
