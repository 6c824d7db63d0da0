//! Records handed to librdkafka by the core (`rd_kafka_produceva`) on a producer the
//! plugin noted (`crate::rdkafka`), rather than one `Producer.produce` call each, whose
//! binding converts every header into a librdkafka header through Python's API and looks
//! the topic up once a record.
//!
//! For a producer whose outcomes nobody awaits record by record: a replay's transactional
//! producer, whose commit succeeds only if every record of its transaction was written.
//! A record handed over here carries no delivery state of confluent-kafka's, and its
//! delivery callback returns at once for such a record (`dr_msg_cb`). Values, keys and
//! headers are copied by librdkafka during the call (`RD_KAFKA_MSG_F_COPY`), as
//! confluent-kafka's `produce` has them copied.

use crate::rdkafka::{client_of, rdkafka, Client, Rdkafka, Vu, VuHeader, VuMem, VuValue};
use crate::replay::{ReplayHeader, ReplayHeaders, ReplayRecords};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

// `rd_kafka_vtype_t`
const VTYPE_RKT: c_int = 2;
const VTYPE_VALUE: c_int = 4;
const VTYPE_KEY: c_int = 5;
const VTYPE_MSGFLAGS: c_int = 7;
const VTYPE_HEADER: c_int = 9;
const MSG_F_COPY: c_int = 0x2;
const QUEUE_FULL: c_int = -184; // RD_KAFKA_RESP_ERR__QUEUE_FULL

static KAFKA_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static KAFKA_EXCEPTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The topic handles one call uses, destroyed when it ends.
struct Topics<'a> {
    rd: &'a Rdkafka,
    rk: *mut c_void,
    /// Each topic's Python string (for an identity check first), name and handle.
    known: Vec<(Py<PyString>, CString, *mut c_void)>,
}

impl Topics<'_> {
    /// The handle of `topic`, compared by its text: no Python code runs while the
    /// client's lock is held.
    fn of(&mut self, topic: &Bound<'_, PyString>) -> PyResult<*mut c_void> {
        if let Some((_, _, rkt)) = self.known.iter().find(|(known, _, _)| known.is(topic)) {
            return Ok(*rkt);
        }
        let text = topic.to_str()?;
        let same = |name: &CString| name.as_bytes() == text.as_bytes();
        if let Some((_, _, rkt)) = self.known.iter().find(|(_, name, _)| same(name)) {
            return Ok(*rkt);
        }
        let name = CString::new(text)?;
        // SAFETY: a live client (its destroy waits for the lock the caller holds).
        let rkt = unsafe { (self.rd.topic_new)(self.rk, name.as_ptr(), std::ptr::null_mut()) };
        if rkt.is_null() {
            return Err(PyRuntimeError::new_err(format!(
                "no topic handle for {name:?}"
            )));
        }
        self.known.push((topic.clone().unbind(), name, rkt));
        Ok(rkt)
    }
}

impl Drop for Topics<'_> {
    fn drop(&mut self) {
        for (_, _, rkt) in &self.known {
            // SAFETY: a handle `of` took on this live client, released once.
            unsafe { (self.rd.topic_destroy)(*rkt) };
        }
    }
}

/// A value, key or header value as librdkafka takes it: its bytes (None: no value).
/// `str` is sent as UTF-8, as `Producer.produce` sends it.
fn bytes_of<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Option<&'a [u8]>> {
    if value.is_none() {
        Ok(None)
    } else if let Ok(bytes) = value.cast::<PyBytes>() {
        Ok(Some(bytes.as_bytes()))
    } else if let Ok(text) = value.cast::<PyString>() {
        Ok(Some(text.to_str()?.as_bytes()))
    } else {
        Err(PyTypeError::new_err(format!(
            "a record's {what} must be bytes, str or None"
        )))
    }
}

fn mem(vtype: c_int, bytes: &[u8]) -> Vu {
    Vu {
        vtype,
        u: VuValue {
            mem: VuMem {
                pointer: bytes.as_ptr().cast(),
                size: bytes.len(),
            },
        },
    }
}

/// A header's field: `name`, NUL-ended, and `size` bytes of value at `value` (null: a
/// null value).
fn header_vu(name: *const c_char, value: *const c_void, size: isize) -> Vu {
    Vu {
        vtype: VTYPE_HEADER,
        u: VuValue {
            header: VuHeader { name, value, size },
        },
    }
}

/// Adds one header to `vus`: its name as text (`str()` of another object, as
/// `Producer.produce` names it) and its value. A name made here is kept in `names` for
/// as long as librdkafka may read it.
fn add_header<'py>(
    vus: &mut Vec<Vu>,
    names: &mut Vec<Bound<'py, PyString>>,
    name: &Bound<'py, PyAny>,
    value: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let text = match name.cast::<PyString>() {
        Ok(text) => text.clone(),
        Err(_) => {
            names.push(name.str()?);
            names[names.len() - 1].clone()
        }
    };
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: a str held by the record or by `names`; its UTF-8 form, NUL-ended, lives as
    // long as the str.
    let name = unsafe { pyo3::ffi::PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size) };
    if name.is_null() {
        return Err(PyErr::fetch(value.py()));
    }
    let (value, size) = match bytes_of(value, "header value")? {
        Some(bytes) => (bytes.as_ptr().cast::<c_void>(), bytes.len() as isize),
        None => (std::ptr::null(), 0),
    };
    vus.push(header_vu(name, value, size));
    Ok(())
}

/// Adds the headers of a record (a list or tuple of `(name, value)`, a dict, or None) to
/// `vus`.
fn add_headers<'py>(
    vus: &mut Vec<Vu>,
    names: &mut Vec<Bound<'py, PyString>>,
    headers: &Bound<'py, PyAny>,
) -> PyResult<()> {
    if headers.is_none() {
        return Ok(());
    }
    if let Ok(dict) = headers.cast::<PyDict>() {
        for (name, value) in dict.iter() {
            add_header(vus, names, &name, &value)?;
        }
        return Ok(());
    }
    let invalid = || PyTypeError::new_err("a record's headers must be a list of (name, value)");
    if !(headers.is_instance_of::<PyList>() || headers.is_instance_of::<PyTuple>()) {
        return Err(invalid());
    }
    for header in headers.try_iter()? {
        let header = header?;
        let pair = header.cast::<PyTuple>().map_err(|_| invalid())?;
        if pair.len() != 2 {
            return Err(invalid());
        }
        add_header(vus, names, &pair.get_item(0)?, &pair.get_item(1)?)?;
    }
    Ok(())
}

/// The `KafkaException` `Producer.produce` raises for librdkafka's refusal `error`.
///
/// # Safety
/// `error` is a live `rd_kafka_error_t`.
unsafe fn exception(py: Python<'_>, rd: &Rdkafka, error: *const c_void) -> PyResult<PyErr> {
    let reason = (rd.error_string)(error);
    let reason = if reason.is_null() {
        String::new()
    } else {
        CStr::from_ptr(reason).to_string_lossy().into_owned()
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("fatal", (rd.error_is_fatal)(error) != 0)?;
    kwargs.set_item("retriable", (rd.error_is_retriable)(error) != 0)?;
    kwargs.set_item(
        "txn_requires_abort",
        (rd.error_txn_requires_abort)(error) != 0,
    )?;
    let kafka_error = KAFKA_ERROR
        .import(py, "confluent_kafka", "KafkaError")?
        .call(((rd.error_code)(error), reason), Some(&kwargs))?;
    let exception = KAFKA_EXCEPTION
        .import(py, "confluent_kafka", "KafkaException")?
        .call1((kafka_error,))?;
    Ok(PyErr::from_value(exception))
}

/// The producer of one client, handing records to librdkafka without a delivery report
/// each.
#[pyclass(module = "rmqcompat._core", name = "DirectProduce", frozen)]
pub struct DirectProduce {
    client: Arc<Mutex<Client>>,
}

#[pymethods]
impl DirectProduce {
    /// The producer created with `token` (see `crate::rdkafka`), or None: no such client.
    #[staticmethod]
    fn of(token: &str) -> Option<Self> {
        client_of(token).map(|client| Self { client })
    }

    /// Hands `records[start:]`, each `(topic, value, key, headers)` as `Producer.produce`
    /// takes them (partition unassigned, timestamp now), to librdkafka in order; returns
    /// the index of the first one not handed over: `len(records)`, or earlier where
    /// librdkafka's queue is full (poll the producer, then call again from there).
    ///
    /// Raises `KafkaException` for any other refusal, as `Producer.produce` does, and
    /// TypeError for a record of another shape; the records before it were handed over.
    fn produce(&self, py: Python<'_>, records: &Bound<'_, PyAny>, start: usize) -> PyResult<usize> {
        let rd = rdkafka().ok_or_else(|| PyRuntimeError::new_err("librdkafka not found"))?;
        let held = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if held.rk == 0 {
            return Err(PyRuntimeError::new_err("the producer is closed"));
        }
        let mut sender = Sender {
            rd,
            topics: Topics {
                rd,
                rk: held.rk as *mut c_void,
                known: Vec::new(),
            },
            vus: Vec::with_capacity(16),
        };
        if let Ok(built) = records.cast::<ReplayRecords>() {
            return sender.send_built(py, built.get(), start);
        }
        let records = records
            .cast::<PyList>()
            .map_err(|_| PyTypeError::new_err("records must be a list"))?;
        let invalid = || PyTypeError::new_err("a record must be (topic, value, key, headers)");
        let mut names = Vec::new();
        for at in start..records.len() {
            let record = records.get_item(at)?;
            let record = record.cast::<PyTuple>().map_err(|_| invalid())?;
            if record.len() != 4 {
                return Err(invalid());
            }
            let topic = record.get_borrowed_item(0)?;
            let topic = topic
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("a record's topic must be str"))?;
            let (value, key) = (record.get_borrowed_item(1)?, record.get_borrowed_item(2)?);
            sender.start(&topic, &value, &key)?;
            names.clear();
            add_headers(&mut sender.vus, &mut names, &record.get_item(3)?)?;
            // SAFETY: every pointer in the fields is into an object `record` holds.
            if !unsafe { sender.send(py) }? {
                return Ok(at);
            }
        }
        Ok(records.len())
    }
}

/// Hands records to librdkafka one at a time, each as a list of fields.
struct Sender<'a> {
    rd: &'a Rdkafka,
    topics: Topics<'a>,
    vus: Vec<Vu>,
}

impl Sender<'_> {
    /// Starts the next record's fields: its topic, value and key.
    fn start(
        &mut self,
        topic: &Bound<'_, PyString>,
        value: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.vus.clear();
        self.vus.push(Vu {
            vtype: VTYPE_RKT,
            u: VuValue {
                pointer: self.topics.of(topic)?,
            },
        });
        self.vus.push(Vu {
            vtype: VTYPE_MSGFLAGS,
            u: VuValue { int: MSG_F_COPY },
        });
        if let Some(value) = bytes_of(value, "value")? {
            self.vus.push(mem(VTYPE_VALUE, value));
        }
        if let Some(key) = bytes_of(key, "key")? {
            self.vus.push(mem(VTYPE_KEY, key));
        }
        Ok(())
    }

    /// Hands the record over: false where librdkafka's queue is full (nothing sent).
    ///
    /// # Safety
    /// Every pointer in the fields is valid for the call (librdkafka copies what it
    /// keeps before returning); the client is live (its lock is held).
    unsafe fn send(&self, py: Python<'_>) -> PyResult<bool> {
        let error = (self.rd.produceva)(self.topics.rk, self.vus.as_ptr(), self.vus.len());
        if error.is_null() {
            return Ok(true);
        }
        let raised = if (self.rd.error_code)(error) == QUEUE_FULL {
            None
        } else {
            Some(exception(py, self.rd, error))
        };
        (self.rd.error_destroy)(error);
        match raised {
            None => Ok(false),
            Some(raised) => Err(raised?),
        }
    }

    /// [`DirectProduce::produce`] of the records a replay built.
    fn send_built(
        &mut self,
        py: Python<'_>,
        built: &ReplayRecords,
        start: usize,
    ) -> PyResult<usize> {
        let mut names = Vec::new();
        for (at, record) in built.records.iter().enumerate().skip(start) {
            let topic = built.topics[record.topic].bind(py);
            self.start(topic, record.value.bind(py), record.key.bind(py))?;
            names.clear();
            match &record.headers {
                ReplayHeaders::Python(headers) => {
                    add_headers(&mut self.vus, &mut names, headers.bind(py))?
                }
                ReplayHeaders::Built(start, end) => {
                    for header in built.built(*start, *end) {
                        match header {
                            ReplayHeader::Pair(pair) => {
                                let pair = pair.bind(py).cast::<PyTuple>()?;
                                add_header(
                                    &mut self.vus,
                                    &mut names,
                                    &pair.get_item(0)?,
                                    &pair.get_item(1)?,
                                )?
                            }
                            ReplayHeader::Text(name, span) => {
                                let text = built.text(*span);
                                let size = text.len() as isize;
                                self.vus
                                    .push(header_vu(name.as_ptr(), text.as_ptr().cast(), size));
                            }
                        }
                    }
                }
            }
            // SAFETY: every pointer in the fields is into an object `built` holds, or
            // into its data, or a static name.
            if !unsafe { self.send(py) }? {
                return Ok(at);
            }
        }
        Ok(built.records.len())
    }
}
