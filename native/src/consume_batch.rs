//! Concurrent consumption's batch, compiled: the counterpart of
//! `rmqcompat.consumer.dispatch.ConsumeBatch` (see it for what each field means) and of
//! `add_batches`, which cuts a partition's fetched messages into batches.
//!
//! One batch is built for every listener call, and at RocketMQ's default batch size of one
//! that is one for every message, living until its result is settled. The Python class and
//! the list of messages it holds are two objects the cyclic collector counts and scans for
//! each message in flight; this one keeps its messages in a vector and stays out of the
//! collector's sight (as CPython does with tuples and dicts that hold nothing it needs to
//! see) until it holds what can lead back to it: the exception of a listener that answered
//! for the other consume mode, whose traceback's frames may hold the batch.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PySet, PyTuple};
use pyo3::{intern, PyTraverseError, PyVisit};
use std::sync::Mutex;

use crate::process_queue::{dropped, ProcessQueue};
use crate::received::{ConsumeEvents, Kept};
use crate::{field, Field};
use crate::{track, untrack};

#[pyclass(module = "rmqcompat._core", name = "ConsumeBatch")]
pub struct ConsumeBatch {
    #[pyo3(get)]
    key: Py<PyAny>,
    #[pyo3(get)]
    queue: Py<PyAny>,
    #[pyo3(get)]
    pq: Py<PyAny>,
    messages: Vec<Py<PyAny>>,
    stored: Vec<Py<PyAny>>,
    /// Each message's CONSUME event fields the intake kept (`crate::received`), where it
    /// kept any: empty, or one for each message; taken by settlement.
    kept: Mutex<Vec<Option<Kept>>>,
    #[pyo3(get, set)]
    started_at: Py<PyAny>,
    #[pyo3(get, set)]
    finished_at: Py<PyAny>,
    #[pyo3(get, set)]
    expired: bool,
    #[pyo3(get, set)]
    status: Py<PyAny>,
    #[pyo3(get, set)]
    context: Py<PyAny>,
    #[pyo3(get, set)]
    raised: bool,
    #[pyo3(get)]
    refused: Py<PyAny>,
}

/// New references to `items`, in a Rust vector: nothing is allocated in Python, so a
/// borrow may be held meanwhile (see `kept_of`).
fn new_refs(py: Python<'_>, items: &[Py<PyAny>]) -> Vec<Py<PyAny>> {
    items.iter().map(|item| item.clone_ref(py)).collect()
}

impl ConsumeBatch {
    /// A batch of `messages` with their `stored` counts, out of the collector's sight.
    fn build<'py>(
        key: &Bound<'py, PyAny>,
        queue: &Bound<'py, PyAny>,
        pq: &Bound<'py, PyAny>,
        messages: Vec<Py<PyAny>>,
        stored: Vec<Py<PyAny>>,
        kept: Vec<Option<Kept>>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = key.py();
        let batch = Bound::new(
            py,
            ConsumeBatch {
                key: key.clone().unbind(),
                queue: queue.clone().unbind(),
                pq: pq.clone().unbind(),
                messages,
                stored,
                kept: Mutex::new(kept),
                started_at: py.None(),
                finished_at: py.None(),
                expired: false,
                status: py.None(),
                context: py.None(),
                raised: false,
                refused: py.None(),
            },
        )?;
        // nothing it holds leads back to it until `refused` is set, which tracks it again
        untrack(batch.as_any());
        Ok(batch)
    }
}

impl ConsumeBatch {
    /// The CONSUME event fields the intake kept for the messages, taken out.
    fn take_kept(&self) -> Vec<Option<Kept>> {
        std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// `module.path` (a chain of attributes), looked up when first needed and kept in `cell`.
fn constant<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    module: &str,
    path: &[&str],
) -> PyResult<&'py Bound<'py, PyAny>> {
    let found = cell.get_or_try_init(py, || {
        let mut found = py.import(module)?.into_any();
        for name in path {
            found = found.getattr(*name)?;
        }
        PyResult::Ok(found.unbind())
    })?;
    Ok(found.bind(py))
}

static CONSUME_START_TIME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `rmqcompat.properties.CONSUME_START_TIME`, the property the listener call is stamped in.
fn consume_start_time(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    constant(
        py,
        &CONSUME_START_TIME,
        "rmqcompat.properties",
        &["CONSUME_START_TIME"],
    )
}

/// Each message's `reconsume_times`: what the broker stored, which send-back routes by.
fn stored_counts(messages: &[Py<PyAny>], py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
    messages
        .iter()
        .map(|msg| Ok(field(msg.bind(py), Field::ReconsumeTimes)?.unbind()))
        .collect()
}

#[pymethods]
impl ConsumeBatch {
    #[new]
    #[pyo3(signature = (key, queue, pq, messages, stored = None))]
    fn new<'py>(
        key: &Bound<'py, PyAny>,
        queue: &Bound<'py, PyAny>,
        pq: &Bound<'py, PyAny>,
        messages: &Bound<'py, PyAny>,
        stored: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = key.py();
        let messages: Vec<Py<PyAny>> = messages
            .try_iter()?
            .map(|msg| Ok(msg?.unbind()))
            .collect::<PyResult<_>>()?;
        let stored = match stored {
            None => stored_counts(&messages, py)?,
            Some(given) => given
                .try_iter()?
                .map(|count| Ok(count?.unbind()))
                .collect::<PyResult<_>>()?,
        };
        Self::build(key, queue, pq, messages, stored, Vec::new())
    }

    /// Begins the listener call: the counterpart of the Python class's `start`.
    fn start<'py>(
        slf: &Bound<'py, Self>,
        started: Py<PyAny>,
        stamp: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = slf.py();
        let (queue, pq) = {
            let this = slf.borrow();
            (this.queue.clone_ref(py), this.pq.clone_ref(py))
        };
        let context = ConsumeConcurrentlyContext::create(queue.bind(py))?;
        let skipped = {
            let mut this = slf.borrow_mut();
            this.context = context.clone().into_any().unbind();
            this.expired
        };
        if skipped || dropped(pq.bind(py))? {
            return Ok(None);
        }
        let messages = {
            let mut this = slf.borrow_mut();
            this.started_at = started;
            new_refs(py, &this.messages)
        };
        // built after the borrow: an allocation may start the collector (see `kept_of`)
        let messages = PyList::new(py, messages)?;
        let name = consume_start_time(py)?;
        for msg in messages.iter() {
            field(&msg, Field::Properties)?.set_item(name, stamp)?;
        }
        Ok(Some(PyTuple::new(
            py,
            [messages.into_any(), context.into_any()],
        )?))
    }

    /// A new list of the batch's messages (the Python class's list, copied), built once
    /// the batch is no longer borrowed (see `kept_of`).
    #[getter]
    fn messages<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let messages = new_refs(py, &slf.borrow().messages);
        PyList::new(py, messages)
    }

    /// The stored counts, as a tuple built once the batch is no longer borrowed.
    #[getter]
    fn stored<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let stored = new_refs(py, &slf.borrow().stored);
        PyTuple::new(py, stored)
    }

    /// Setting it lets the collector see the batch again: an exception's traceback may
    /// lead back to it, a cycle only the collector can free.
    #[setter]
    fn set_refused(slf: &Bound<'_, Self>, refused: Py<PyAny>) {
        let tracked = !refused.is_none(slf.py());
        slf.borrow_mut().refused = refused;
        if tracked {
            track(slf.as_any());
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for held in [
            &self.key,
            &self.queue,
            &self.pq,
            &self.started_at,
            &self.finished_at,
            &self.status,
            &self.context,
            &self.refused,
        ] {
            visit.call(held)?;
        }
        for held in self.messages.iter().chain(self.stored.iter()) {
            visit.call(held)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.messages.clear();
        Python::attach(|py| {
            self.context = py.None();
            self.refused = py.None();
            self.status = py.None();
        });
    }
}

/// Cuts `messages` (one partition's, in order) into batches of at most `size` and appends
/// them to `out`; at size one each batch's stored count is its message's. The counterpart
/// of `rmqcompat.consumer.dispatch.add_batches`.
#[pyfunction]
pub fn add_batches<'py>(
    key: &Bound<'py, PyAny>,
    queue: &Bound<'py, PyAny>,
    pq: &Bound<'py, PyAny>,
    messages: &Bound<'py, PyList>,
    size: usize,
    out: &Bound<'py, PyList>,
) -> PyResult<()> {
    if size == 0 {
        return Err(PyValueError::new_err("a batch holds at least one message"));
    }
    let py = key.py();
    let all: Vec<Py<PyAny>> = messages.iter().map(Bound::unbind).collect();
    let mut kept = kept_of(py, &all, pq)?.into_iter();
    for chunk in all.chunks(size) {
        let chunk = new_refs(py, chunk);
        let stored = stored_counts(&chunk, py)?;
        let kept: Vec<Option<Kept>> = kept.by_ref().take(chunk.len()).collect();
        out.append(ConsumeBatch::build(key, queue, pq, chunk, stored, kept)?)?;
    }
    Ok(())
}

/// The CONSUME event fields `pq` kept for each of `messages` (`crate::received`), in
/// order; none where it is not the compiled queue or keeps none.
///
/// The queue is borrowed only while the fields are taken, in Rust: a borrow held across
/// anything that may run Python code (an allocation may start the collector, whose
/// callbacks and finalizers run bytecode and may hand the GIL to a listener thread, which
/// reads the queue when it starts a batch) makes that thread's read fail.
fn kept_of(
    py: Python<'_>,
    messages: &[Py<PyAny>],
    pq: &Bound<'_, PyAny>,
) -> PyResult<Vec<Option<Kept>>> {
    let Ok(compiled) = pq.cast::<ProcessQueue>() else {
        return Ok(Vec::new());
    };
    if compiled.borrow().keeps_none() {
        return Ok(Vec::new());
    }
    let offsets = messages
        .iter()
        .map(|msg| {
            Ok(field(msg.bind(py), Field::QueueOffset)?
                .extract::<i64>()
                .ok())
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut queue = compiled.borrow_mut();
    Ok(offsets
        .into_iter()
        .map(|offset| offset.and_then(|offset| queue.kept_for(offset)))
        .collect())
}

/// `rmqcompat.consumer.listener.MAX_INT`, RocketMQ's initial `ackIndex` (one object for
/// every context, as the Python class's default).
static MAX_INT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// What a concurrent listener may read and set for the batch it is given: the counterpart
/// of `rmqcompat.consumer.listener.ConsumeConcurrentlyContext` (see it for each field).
/// One is built for every listener call and lives until the call's result is settled; it
/// stays out of the collector's sight until a set of failed indexes is asked for or given,
/// the only field that could lead back to it.
#[pyclass(module = "rmqcompat._core", name = "ConsumeConcurrentlyContext")]
pub struct ConsumeConcurrentlyContext {
    #[pyo3(get, set)]
    message_queue: Py<PyAny>,
    #[pyo3(get, set)]
    ack_index: Py<PyAny>,
    #[pyo3(get, set)]
    delay_level_when_next_consume: Py<PyAny>,
    #[pyo3(get)]
    marked: Py<PyAny>,
}

impl ConsumeConcurrentlyContext {
    /// A context for a batch of `message_queue`, with RocketMQ's initial values.
    fn create<'py>(message_queue: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        Self::new(message_queue, None, None, None)
    }

    fn set_marked_to(slf: &Bound<'_, Self>, marked: Py<PyAny>) {
        let tracked = !marked.is_none(slf.py());
        slf.borrow_mut().marked = marked;
        if tracked {
            track(slf.as_any());
        }
    }
}

#[pymethods]
impl ConsumeConcurrentlyContext {
    #[new]
    #[pyo3(signature = (message_queue, ack_index = None, delay_level_when_next_consume = None,
                        failed_indexes = None))]
    fn new<'py>(
        message_queue: &Bound<'py, PyAny>,
        ack_index: Option<Py<PyAny>>,
        delay_level_when_next_consume: Option<Py<PyAny>>,
        failed_indexes: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = message_queue.py();
        let context = Bound::new(
            py,
            ConsumeConcurrentlyContext {
                message_queue: message_queue.clone().unbind(),
                ack_index: match ack_index {
                    Some(index) => index,
                    None => constant(py, &MAX_INT, "rmqcompat.consumer.listener", &["MAX_INT"])?
                        .clone()
                        .unbind(),
                },
                delay_level_when_next_consume: match delay_level_when_next_consume {
                    Some(level) => level,
                    None => 0i64.into_pyobject(py)?.into_any().unbind(),
                },
                marked: py.None(),
            },
        )?;
        // tracked again below, or when a set of failed indexes is asked for or given
        untrack(context.as_any());
        if let Some(indexes) = failed_indexes {
            Self::set_marked_to(&context, indexes);
        }
        Ok(context)
    }

    #[getter]
    fn failed_indexes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let marked = slf.borrow().marked.clone_ref(py);
        if !marked.is_none(py) {
            return Ok(marked.into_bound(py));
        }
        let created = PySet::empty(py)?.into_any();
        Self::set_marked_to(slf, created.clone().unbind());
        Ok(created)
    }

    #[setter]
    fn set_failed_indexes(slf: &Bound<'_, Self>, indexes: Py<PyAny>) {
        Self::set_marked_to(slf, indexes);
    }

    #[setter]
    fn set_marked(slf: &Bound<'_, Self>, marked: Py<PyAny>) {
        Self::set_marked_to(slf, marked);
    }

    fn fail(slf: &Bound<'_, Self>, index: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::failed_indexes(slf)?.call_method1(intern!(slf.py(), "add"), (index,))?;
        Ok(())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let this = slf.borrow();
        let marked = this.marked.bind(py);
        let failed = if marked.is_truthy()? {
            marked.repr()?.to_string()
        } else {
            "set()".to_owned()
        };
        Ok(format!(
            "ConsumeConcurrentlyContext(message_queue={}, ack_index={}, \
             delay_level_when_next_consume={}, failed_indexes={failed})",
            this.message_queue.bind(py).repr()?,
            this.ack_index.bind(py).str()?,
            this.delay_level_when_next_consume.bind(py).str()?,
        ))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.message_queue)?;
        visit.call(&self.ack_index)?;
        visit.call(&self.delay_level_when_next_consume)?;
        visit.call(&self.marked)?;
        Ok(())
    }

    fn __clear__(&mut self) {
        Python::attach(|py| self.marked = py.None());
    }
}

static CONSUME_SUCCESS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `ConsumeConcurrentlyStatus.CONSUME_SUCCESS`.
fn consume_success(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    let path = ["ConsumeConcurrentlyStatus", "CONSUME_SUCCESS"];
    constant(py, &CONSUME_SUCCESS, "rmqcompat.consumer.listener", &path)
}

/// Whether a call of `size` messages that returned `status` with `context` succeeded
/// whole: `rmqcompat.consumer.ack.all_succeeded` for the core's context; None for any other
/// context, or an `ack_index` beyond 64 bits, which the caller leaves to the Python loop.
fn succeeded_whole(
    status: &Bound<'_, PyAny>,
    context: &Bound<'_, PyAny>,
    size: usize,
) -> PyResult<Option<bool>> {
    let Ok(context) = context.cast::<ConsumeConcurrentlyContext>() else {
        return Ok(None);
    };
    if !status.is(consume_success(status.py())?) {
        return Ok(Some(false));
    }
    let context = context.borrow();
    let Ok(ack_index) = context.ack_index.bind(status.py()).extract::<i64>() else {
        return Ok(None);
    };
    let last = i64::try_from(size).unwrap_or(i64::MAX) - 1;
    Ok(Some(
        ack_index >= last && !context.marked.bind(status.py()).is_truthy()?,
    ))
}

/// The listener call's seconds, when both ends are known floats.
fn took_s(batch: &ConsumeBatch, py: Python<'_>) -> Option<f64> {
    let began = batch.started_at.bind(py).extract::<f64>().ok()?;
    let finished = batch.finished_at.bind(py).extract::<f64>().ok()?;
    Some(finished - began)
}

/// `rmqcompat.consumer.settlement.add_success`: the call on `messages` that took `took_ms`
/// joins the last entry of `succeeded` when that one took as long, else is a new entry.
fn add_success(
    succeeded: &Bound<'_, PyList>,
    messages: &[Py<PyAny>],
    took_ms: i64,
) -> PyResult<()> {
    let py = succeeded.py();
    if let Some(last) = succeeded.len().checked_sub(1) {
        let last = succeeded.get_item(last)?;
        let (calls, last_ms): (Bound<'_, PyList>, Bound<'_, PyAny>) = last.extract()?;
        // an entry's time is an int the loop put there: compared as one, without a call
        let same = match last_ms.extract::<i64>() {
            Ok(last_ms) => last_ms == took_ms,
            Err(_) => last_ms.eq(took_ms)?,
        };
        if same {
            for msg in messages {
                calls.append(msg.bind(py))?;
            }
            return Ok(());
        }
    }
    let calls = PyList::new(py, messages.iter().map(|msg| msg.bind(py)))?;
    succeeded.append((calls, took_ms))
}

/// Settles the batches of one partition that succeeded whole, from `batches[start]` on:
/// the counterpart of `rmqcompat.consumer.settlement.settle_successes` for the core's
/// batches and contexts; it stops at anything else, which the Python loop then decides.
///
/// With `kept` (tracing on), each message's CONSUME event is written there instead of the
/// message being added to `succeeded` (`crate::received`): noted from the fields the
/// intake handed its batch, else encoded from the message; `succeeded` then holds only
/// messages whose events cannot be encoded.
#[pyfunction]
#[pyo3(signature = (batches, start, pq, running, limit, acked, succeeded, kept=None))]
#[allow(clippy::too_many_arguments)] // the reference's arguments, and the core's own
pub fn settle_successes<'py>(
    batches: &Bound<'py, PyList>,
    start: usize,
    pq: &Bound<'py, PyAny>,
    running: &Bound<'py, PyDict>,
    limit: f64,
    acked: &Bound<'py, PyList>,
    succeeded: Option<&Bound<'py, PyList>>,
    kept: Option<&Bound<'py, ConsumeEvents>>,
) -> PyResult<(usize, usize)> {
    let py = batches.py();
    let (mut at, mut timeouts) = (start, 0);
    while at < batches.len() {
        let item = batches.get_item(at)?;
        let Ok(batch) = item.cast::<ConsumeBatch>() else {
            break;
        };
        {
            // a shared borrow: what runs meanwhile (reading a message's offset) does not
            // change the batch
            let this = batch.borrow();
            if !this.pq.bind(py).is(pq) || this.status.is_none(py) || this.context.is_none(py) {
                break;
            }
            let whole = succeeded_whole(
                this.status.bind(py),
                this.context.bind(py),
                this.messages.len(),
            )?;
            if whole != Some(true) || !running.contains(batch)? {
                break;
            }
            if took_s(&this, py).is_some_and(|took| took >= limit) {
                timeouts += 1;
            }
            if let Some(succeeded) = succeeded {
                let took_ms = took_s(&this, py).map_or(0, |took| (took * 1000.0) as i64);
                match kept {
                    Some(kept) => {
                        let mut kept = kept.borrow_mut();
                        let fields = this.take_kept();
                        let rest = write_kept(py, &this.messages, fields, &mut kept, took_ms)?;
                        if !rest.is_empty() {
                            add_success(succeeded, &rest, took_ms)?;
                        }
                    }
                    None => add_success(succeeded, &this.messages, took_ms)?,
                }
            }
            for msg in &this.messages {
                acked.append(field(msg.bind(py), Field::QueueOffset)?)?;
            }
        }
        running.del_item(batch)?;
        at += 1;
    }
    Ok((at, timeouts))
}

/// The CONSUME events of `messages`, whose call took `took_ms`, written to `kept`: noted
/// where the intake kept their `fields` (none, or one for each message), else encoded;
/// the messages whose events cannot be encoded, returned.
fn write_kept(
    py: Python<'_>,
    messages: &[Py<PyAny>],
    fields: Vec<Option<Kept>>,
    kept: &mut ConsumeEvents,
    took_ms: i64,
) -> PyResult<Vec<Py<PyAny>>> {
    let mut rest = Vec::new();
    let mut fields = fields.into_iter();
    for msg in messages {
        let msg = msg.bind(py);
        match fields.next().flatten() {
            Some(fields) => kept.write(fields, field(msg, Field::Topic)?, took_ms)?,
            None if kept.encode(msg, took_ms) => {}
            None => rest.push(msg.clone().unbind()),
        }
    }
    Ok(rest)
}

/// A module attribute of the consumer's listener vocabulary, kept once looked up.
fn listener_attr<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyAny>> {
    constant(py, cell, "rmqcompat.consumer.listener", &[name])
}

static ANSWERED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LISTENER_RAISED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LISTENER_KIND_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `rmqcompat.errors.ListenerKindError`.
fn listener_kind_error(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    constant(
        py,
        &LISTENER_KIND_ERROR,
        "rmqcompat.errors",
        &["ListenerKindError"],
    )
}
static STAMP_REUSE_S: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The last CONSUME_START_TIME text and until when (monotonic seconds) it is reused.
struct Stamp {
    until: f64,
    text: Option<Py<PyAny>>,
}

/// Runs a batch's listener call on a worker thread: the counterpart of
/// `rmqcompat.consumer.dispatch.BatchRunner` (see it), with `invoke`'s common answer
/// (CONSUME_SUCCESS) taken here and every other answer given to the Python functions
/// `invoke` itself calls (`answered`, `listener_raised`).
#[pyclass(module = "rmqcompat._core", name = "BatchRunner", frozen)]
pub struct BatchRunner {
    listener: Py<PyAny>,
    group: Py<PyAny>,
    clock: Py<PyAny>,
    now_ms: Py<PyAny>,
    reuse_s: f64,
    /// Worker threads share it; each holds the GIL while it reads or replaces it.
    stamp: Mutex<Stamp>,
}

impl BatchRunner {
    /// The CONSUME_START_TIME text for a call starting at `started`.
    fn stamp_at(&self, py: Python<'_>, started: f64) -> PyResult<Py<PyAny>> {
        {
            let stamp = self.stamp.lock().expect("the stamp is never left poisoned");
            if let Some(text) = stamp.text.as_ref().filter(|_| started < stamp.until) {
                return Ok(text.clone_ref(py));
            }
        }
        let text = self.now_ms.bind(py).call0()?.str()?.into_any().unbind();
        let mut stamp = self.stamp.lock().expect("the stamp is never left poisoned");
        *stamp = Stamp {
            until: started + self.reuse_s,
            text: Some(text.clone_ref(py)),
        };
        Ok(text)
    }

    /// The listener's answer to `messages` with `context`: `invoke`'s result.
    fn answer<'py>(
        &self,
        py: Python<'py>,
        messages: Bound<'py, PyAny>,
        context: Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let group = self.group.bind(py);
        let answer = match self.listener.bind(py).call1((&messages, &context)) {
            Ok(status) if status.is(consume_success(py)?) => {
                return Ok((status, false.into_pyobject(py)?.to_owned().into_any()));
            }
            Ok(status) => listener_attr(py, &ANSWERED, "answered")?.call1((
                self.listener.bind(py),
                group,
                messages,
                context,
                status,
            ))?,
            Err(err) if err.is_instance_of::<pyo3::exceptions::PyException>(py) => listener_attr(
                py,
                &LISTENER_RAISED,
                "listener_raised",
            )?
            .call1((group, messages, context, err.into_value(py)))?,
            Err(err) => return Err(err),
        };
        answer.extract()
    }
}

#[pymethods]
impl BatchRunner {
    #[new]
    fn new(
        py: Python<'_>,
        listener: Py<PyAny>,
        group: Py<PyAny>,
        clock: Py<PyAny>,
        now_ms: Py<PyAny>,
    ) -> PyResult<Self> {
        let reuse_s = constant(
            py,
            &STAMP_REUSE_S,
            "rmqcompat.consumer.dispatch",
            &["STAMP_REUSE_S"],
        )?
        .extract()?;
        Ok(Self {
            listener,
            group,
            clock,
            now_ms,
            reuse_s,
            stamp: Mutex::new(Stamp {
                until: -1.0,
                text: None,
            }),
        })
    }

    fn __call__(&self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<bool> {
        let compiled = batch.cast::<ConsumeBatch>().ok();
        let started = self.clock.bind(py).call0()?;
        let text = self.stamp_at(py, started.extract()?)?;
        let call = match compiled {
            Some(batch) => ConsumeBatch::start(batch, started.unbind(), text.bind(py))?,
            None => {
                let call = batch.call_method1(intern!(py, "start"), (started, text))?;
                call.cast_into::<PyTuple>().ok()
            }
        };
        let Some(call) = call else {
            return Ok(true); // reported unrun (status None)
        };
        let (messages, context): (Bound<'_, PyAny>, Bound<'_, PyAny>) = call.extract()?;
        match self.answer(py, messages, context) {
            Ok((status, raised)) => match compiled {
                Some(batch) => {
                    let raised = raised.is_truthy()?; // may run Python: before the borrow
                    let mut this = batch.borrow_mut();
                    this.status = status.unbind();
                    this.raised = raised;
                }
                None => {
                    batch.setattr(intern!(py, "status"), status)?;
                    batch.setattr(intern!(py, "raised"), raised)?;
                }
            },
            // settled on the poll thread, which stops on it
            Err(err) if err.matches(py, listener_kind_error(py)?)? => {
                batch.setattr(intern!(py, "refused"), err.into_value(py))?;
            }
            Err(err) => return Err(err),
        }
        let finished = self.clock.bind(py).call0()?;
        match compiled {
            Some(batch) => batch.borrow_mut().finished_at = finished.unbind(),
            None => batch.setattr(intern!(py, "finished_at"), finished)?,
        }
        Ok(true)
    }
}
