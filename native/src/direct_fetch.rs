//! A push consumer's records read from librdkafka itself rather than through
//! confluent-kafka's `consume()`, which builds for each record a `Message`, its topic's
//! text, and a list of header tuples with a name and a value object each: objects the
//! intake reads once and frees. Here a take copies its records into one [`DirectBatch`]
//! as Rust data, and the intake's runs (`intake::accept_run`) build the listener's
//! `MessageExt`s straight from the copies; a [`DirectRecord`] is made only for a record
//! the intake's loop decides by itself.
//!
//! The consumer stays confluent-kafka's, which keeps the group, the rebalance callbacks,
//! commits, pauses and seeks. Two documented librdkafka mechanisms connect the two:
//! - this library is also a librdkafka plugin (`crate::rdkafka`), which notes the
//!   consumer's handle ([`DirectFetch::of`] finds it);
//! - each partition's fetch queue is forwarded to a queue of our own before the partition
//!   is assigned (`rd_kafka_queue_forward`; librdkafka keeps a forward the application
//!   set across fetch starts, see `rd_kafka_toppar_op_fetch_start`), so its records arrive
//!   there while rebalance events and errors of the group stay on the consumer's queue,
//!   which confluent-kafka serves.
//!
//! Where librdkafka's functions were not found, or the plugin was not loaded, the
//! consumer reads through `consume()` as before. Records are copied out of librdkafka's
//! messages without the GIL, and the messages destroyed, before any Python object is
//! built.

use crate::rdkafka::{client_of, rdkafka, Client, RdMessage, Rdkafka, RESP_OK};
use crate::received::{write_fields, Kept, Record};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyUnicodeDecodeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::ffi::{c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

/// Where a record's bytes lie in its batch's `data`: start and end.
type Span = (u32, u32);

/// A header copied out: its name and value (None: it has none) in the batch's `data`,
/// and, once the batch is built, the index of its name's text (see [`DirectBatch`]).
struct Header {
    name_span: Span,
    name: u32,
    value: Option<Span>,
}

/// A header name that is not UTF-8 (confluent-kafka's `headers()` raises for it).
const NOT_TEXT: u32 = u32::MAX;
/// An error event without a topic.
const NO_TOPIC: u32 = u32::MAX;

/// A record copied out of librdkafka's message, without the GIL: its key, value and
/// headers in its batch's buffers ([`Copies`]).
struct Copied {
    topic: u32, // index into the batch's topics
    partition: i32,
    offset: i64,
    timestamp: (c_int, i64),
    key: Option<Span>,
    value: Option<Span>,
    /// Its headers' place in the batch's headers.
    headers: Option<(u32, u32)>,
    error: Option<(c_int, String)>,
    /// Where its CONSUME event fields lie in the batch's `fields` (`crate::received`),
    /// when the take wrote them.
    fields: Option<crate::received::Span>,
}

/// The records of one take, copied out: every key, value and header name and value in
/// one buffer, every header in one list, so that a record costs no allocation of its own;
/// and where the take was asked to, every record's CONSUME event fields in one more.
#[derive(Default)]
struct Copies {
    topics: Vec<Vec<u8>>,
    data: Vec<u8>,
    headers: Vec<Header>,
    records: Vec<Copied>,
    fields: Vec<u8>,
}

impl Copies {
    fn bytes(&self, span: Span) -> &[u8] {
        &self.data[span.0 as usize..span.1 as usize]
    }

    fn py_bytes<'py>(&self, py: Python<'py>, span: Option<Span>) -> Bound<'py, PyAny> {
        match span {
            Some(span) => PyBytes::new(py, self.bytes(span)).into_any(),
            None => py.None().into_bound(py),
        }
    }

    fn headers_of(&self, record: &Copied) -> Option<&[Header]> {
        record
            .headers
            .map(|(start, end)| &self.headers[start as usize..end as usize])
    }

    /// Appends `len` bytes from `pointer` (None where it is null).
    unsafe fn put(&mut self, pointer: *const c_void, len: usize) -> Option<Span> {
        if pointer.is_null() {
            return None;
        }
        let start = self.data.len() as u32;
        self.data
            .extend_from_slice(std::slice::from_raw_parts(pointer.cast::<u8>(), len));
        Some((start, self.data.len() as u32))
    }
}

/// RocketMQ properties of a record's headers, each one's name (None: not UTF-8) and value
/// (None: none), or None where `decode_headers` of its `headers()` would give None (a name
/// not UTF-8, a value None or not UTF-8, a repeated name). The rule of `decode_headers`
/// for records read here, without building the list.
fn properties_of<'a, 'py: 'a>(
    py: Python<'py>,
    headers: impl Iterator<Item = (Option<&'a Bound<'py, PyString>>, Option<&'a [u8]>)>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let properties = crate::Properties::new(py);
    for (name, value) in headers {
        let (Some(name), Some(value)) = (name, value) else {
            return Ok(None);
        };
        if !properties.add(name, value)? {
            return Ok(None);
        }
    }
    Ok(Some(properties.into_dict()))
}

/// One record taken out of a [`DirectBatch`] by index, with confluent-kafka `Message`'s
/// accessors: the record the intake's loop and its general path read.
#[pyclass(module = "rmqcompat._core", name = "DirectRecord", frozen)]
pub struct DirectRecord {
    topic: Option<Py<PyString>>,
    partition: i32,
    offset: i64,
    timestamp: (c_int, i64),
    key: Option<Py<PyBytes>>,
    value: Option<Py<PyBytes>>,
    /// Each header's name (None: not UTF-8) and value.
    headers: Option<Vec<(Option<Py<PyString>>, Option<Vec<u8>>)>>,
    error: Option<(c_int, String)>,
}

static KAFKA_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

#[pymethods]
impl DirectRecord {
    fn error(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some((code, reason)) = &self.error else {
            return Ok(None);
        };
        let class = KAFKA_ERROR.get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("confluent_kafka")?
                    .getattr("KafkaError")?
                    .unbind(),
            )
        })?;
        Ok(Some(
            class.bind(py).call1((*code, reason.as_str()))?.unbind(),
        ))
    }

    fn topic(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.topic.as_ref().map(|t| t.clone_ref(py))
    }

    fn partition(&self) -> i32 {
        self.partition
    }

    fn offset(&self) -> i64 {
        self.offset
    }

    fn key(&self, py: Python<'_>) -> Option<Py<PyBytes>> {
        self.key.as_ref().map(|k| k.clone_ref(py))
    }

    fn value(&self, py: Python<'_>) -> Option<Py<PyBytes>> {
        self.value.as_ref().map(|v| v.clone_ref(py))
    }

    fn timestamp(&self) -> (c_int, i64) {
        self.timestamp
    }

    /// `[(name, value), ...]` or None, as confluent-kafka gives them; a name that is not
    /// UTF-8 raises `UnicodeDecodeError`, as there.
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(headers) = &self.headers else {
            return Ok(None);
        };
        let list = PyList::empty(py);
        for (name, value) in headers {
            let Some(name) = name else {
                return Err(PyUnicodeDecodeError::new_err("header name is not UTF-8"));
            };
            let value = value.as_ref().map(|v| PyBytes::new(py, v));
            let pair = [
                name.bind(py).clone().into_any(),
                value.into_pyobject(py)?.into_any(),
            ];
            list.append(PyTuple::new(py, pair)?)?;
        }
        Ok(Some(list))
    }
}

impl DirectRecord {
    /// `record.<accessor>()` without a method call, by the accessor's place
    /// (`crate::record::Accessor`).
    pub fn accessor<'py>(&self, py: Python<'py>, at: usize) -> PyResult<Bound<'py, PyAny>> {
        Ok(match at {
            0 => self.error(py)?.into_pyobject(py)?.into_any(),
            1 => self.topic(py).into_pyobject(py)?.into_any(),
            2 => self.partition.into_pyobject(py)?.into_any(),
            3 => self.offset.into_pyobject(py)?.into_any(),
            4 => self.key(py).into_pyobject(py)?.into_any(),
            5 => self.value(py).into_pyobject(py)?.into_any(),
            6 => self.headers(py)?.into_pyobject(py)?.into_any(),
            _ => self.timestamp.into_pyobject(py)?.into_any(),
        })
    }

    /// What `plain_decode` reads, or None where the headers are not well-formed.
    pub fn plain_parts<'py>(&self, py: Python<'py>) -> PyResult<Option<crate::PlainParts<'py>>> {
        let headers = self
            .headers
            .iter()
            .flatten()
            .map(|(name, value)| (name.as_ref().map(|n| n.bind(py)), value.as_deref()));
        let Some(properties) = properties_of(py, headers)? else {
            return Ok(None);
        };
        Ok(Some(crate::PlainParts {
            properties,
            store_timestamp: self.timestamp.1,
            value: self.value(py).into_pyobject(py)?.into_any(),
            key: self.key(py).into_pyobject(py)?.into_any(),
        }))
    }
}

/// Header names kept as Python strings by a fetch (more are made anew for each batch).
const NAMES_KEPT: usize = 256;

/// The records one [`DirectFetch::take`] returned, as a sequence the consumer's intake
/// reads like the list `consume()` returns: indexing gives a [`DirectRecord`] (None once
/// taken), and `batch[i] = None` takes record `i`. The intake's runs
/// (`intake::accept_run`) decode records straight from the batch, without a record object.
#[pyclass(module = "rmqcompat._core", name = "DirectBatch", sequence)]
pub struct DirectBatch {
    topics: Vec<Py<PyString>>,
    /// Header names by index: the fetch's kept names, then this batch's others.
    names: Vec<Py<PyString>>,
    /// The copies: each record is taken out of `copies.records` (None in its place).
    copies: Copies,
    records: Vec<Option<Copied>>,
    /// The records' CONSUME event fields (`Copied::fields`), shared with the process-queue
    /// entries that keep them.
    fields: Arc<Vec<u8>>,
}

#[pymethods]
impl DirectBatch {
    fn __len__(&self) -> usize {
        self.records.len()
    }

    fn __getitem__(&self, py: Python<'_>, at: isize) -> PyResult<Option<DirectRecord>> {
        let index = crate::sequence_index(at, self.records.len(), "batch")?;
        Ok(self.records[index]
            .as_ref()
            .map(|record| self.record(py, record)))
    }

    fn __setitem__(&mut self, at: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if !value.is_none() {
            return Err(PyTypeError::new_err(
                "a batch's record can only be taken (set to None)",
            ));
        }
        if at >= self.records.len() {
            return Err(PyIndexError::new_err("batch index out of range"));
        }
        self.take_out(at);
        Ok(())
    }
}

impl DirectBatch {
    /// `record`'s headers (None: it has none), each its name's text (None: not UTF-8) and
    /// its value (None: none).
    fn headers<'a, 'py: 'a>(
        &'a self,
        py: Python<'py>,
        record: &Copied,
    ) -> Option<impl Iterator<Item = (Option<&'a Bound<'py, PyString>>, Option<&'a [u8]>)>> {
        let (names, copies) = (&self.names, &self.copies);
        copies.headers_of(record).map(move |headers| {
            headers.iter().map(move |header| {
                let name = (header.name != NOT_TEXT).then(|| names[header.name as usize].bind(py));
                (name, header.value.map(|span| copies.bytes(span)))
            })
        })
    }

    fn record(&self, py: Python<'_>, record: &Copied) -> DirectRecord {
        let headers = self.headers(py, record).map(|headers| {
            headers
                .map(|(name, value)| (name.map(|n| n.clone().unbind()), value.map(<[u8]>::to_vec)))
                .collect()
        });
        let copies = &self.copies;
        let bytes = |span: Option<Span>| span.map(|s| PyBytes::new(py, copies.bytes(s)).unbind());
        DirectRecord {
            topic: (record.topic != NO_TOPIC)
                .then(|| self.topics[record.topic as usize].clone_ref(py)),
            partition: record.partition,
            offset: record.offset,
            timestamp: record.timestamp,
            key: bytes(record.key),
            value: bytes(record.value),
            headers,
            error: record.error.clone(),
        }
    }

    /// The index of `physical` among the batch's topics, if it is one of them.
    pub fn topic_index(&self, physical: &Bound<'_, PyString>) -> PyResult<Option<u32>> {
        for (at, topic) in self.topics.iter().enumerate() {
            if topic.bind(physical.py()).as_any().eq(physical)? {
                return Ok(Some(at as u32));
            }
        }
        Ok(None)
    }

    /// Record `at`'s offset and message when it goes on the run of `place`'s partition of
    /// the topic at index `topic` (not taken, no error) and decodes in the common case
    /// (`plain_message`); None ends the run. `intake::accept_run`'s reading of a batch.
    pub fn plain_at<'py>(
        &self,
        py: Python<'py>,
        at: usize,
        topic: u32,
        partition: i32,
        place: &crate::Place<'_, 'py>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let Some(Some(record)) = self.records.get(at) else {
            return Ok(None);
        };
        if record.error.is_some() || record.partition != partition || record.topic != topic {
            return Ok(None);
        }
        let headers = self.headers(py, record).into_iter().flatten();
        let Some(properties) = properties_of(py, headers)? else {
            return Ok(None);
        };
        let copies = &self.copies;
        let parts = crate::PlainParts {
            properties,
            store_timestamp: record.timestamp.1,
            value: copies.py_bytes(py, record.value),
            key: copies.py_bytes(py, record.key),
        };
        let offset = record.offset.into_pyobject(py)?.into_any();
        Ok(crate::plain_message(py, parts, place, &offset)?.map(|msg| (offset, msg)))
    }

    /// The CONSUME event fields the take wrote for record `at` (None: it wrote none, or the
    /// record is taken), to be kept with the message `plain_at` built from it.
    pub fn kept_at(&self, at: usize) -> Option<Kept> {
        let span = self.records.get(at)?.as_ref()?.fields?;
        Some(Kept::new(&self.fields, span))
    }

    /// Takes record `at` (see `__setitem__`).
    pub fn take_out(&mut self, at: usize) {
        if let Some(slot) = self.records.get_mut(at) {
            *slot = None;
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }
}

/// The records of one client's assigned partitions, read from its own queue.
#[pyclass(module = "rmqcompat._core", name = "DirectFetch")]
pub struct DirectFetch {
    client: Arc<Mutex<Client>>,
    /// Header names seen so far (at most [`NAMES_KEPT`]), each one Python string.
    names: Vec<(Box<[u8]>, Py<PyString>)>,
    topics: Vec<(Box<[u8]>, Py<PyString>)>,
}

#[pymethods]
impl DirectFetch {
    /// The fetch of the client created with `token` (its configuration named this library
    /// in `plugin.library.paths` and gave [`TOKEN_PROPERTY`]), or None: no such client.
    #[staticmethod]
    fn of(token: &str) -> PyResult<Option<Self>> {
        let (Some(rd), Some(client)) = (rdkafka(), client_of(token)) else {
            return Ok(None);
        };
        {
            let mut held = client.lock().unwrap_or_else(|e| e.into_inner());
            if held.rk == 0 {
                return Ok(None);
            }
            if held.queue == 0 {
                // SAFETY: a live client's handle (its destroy clears it under this lock).
                held.queue = unsafe { (rd.queue_new)(held.rk as *mut c_void) } as usize;
            }
        }
        Ok(Some(Self {
            client,
            names: Vec::new(),
            topics: Vec::new(),
        }))
    }

    /// Forwards the fetch queue of `topic`'s `partition` to this fetch; before the
    /// partition is assigned, so that no record of it goes to the consumer's queue.
    fn forward(&self, topic: &str, partition: i32) -> PyResult<()> {
        let rd = rdkafka().ok_or_else(|| PyRuntimeError::new_err("librdkafka not found"))?;
        let topic = CString::new(topic)?;
        let held = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if held.rk == 0 || held.queue == 0 {
            return Err(PyRuntimeError::new_err("the consumer is closed"));
        }
        // SAFETY: a live client and our queue on it; the partition's queue reference is
        // ours to destroy once forwarded.
        unsafe {
            let source =
                (rd.queue_get_partition)(held.rk as *mut c_void, topic.as_ptr(), partition);
            if source.is_null() {
                return Err(PyRuntimeError::new_err("no queue for that partition"));
            }
            (rd.queue_forward)(source, held.queue as *mut c_void);
            (rd.queue_destroy)(source);
        }
        Ok(())
    }

    /// Up to `max` records (or error events), waiting at most `timeout_s` for the first;
    /// with `consume_fields` (a traced concurrent consumer's), each record's CONSUME event
    /// fields are written as it is copied (`crate::received`).
    #[pyo3(signature = (max, timeout_s, consume_fields=false))]
    fn take(
        &mut self,
        py: Python<'_>,
        max: usize,
        timeout_s: f64,
        consume_fields: bool,
    ) -> PyResult<DirectBatch> {
        let client = self.client.clone();
        let timeout_ms = (timeout_s * 1000.0).clamp(0.0, c_int::MAX as f64) as c_int;
        let mut copies = match rdkafka() {
            Some(rd) => py.detach(move || {
                let held = client.lock().unwrap_or_else(|e| e.into_inner());
                if held.queue == 0 {
                    return Copies::default();
                }
                // SAFETY: our queue on a live client (its destroy waits for this lock);
                // each message is copied and destroyed before the lock is let go.
                let queue = held.queue as *mut c_void;
                unsafe { copy_batch(rd, queue, timeout_ms, max.max(1), consume_fields) }
            }),
            None => Copies::default(),
        };
        let topics = copies
            .topics
            .iter()
            .map(|name| {
                let at = text_of(py, &mut self.topics, name);
                self.topics[at].1.clone_ref(py)
            })
            .collect();
        let mut extra: Vec<(Box<[u8]>, Py<PyString>)> = Vec::new();
        let Copies { data, headers, .. } = &mut copies;
        for header in headers.iter_mut() {
            let name = &data[header.name_span.0 as usize..header.name_span.1 as usize];
            header.name = if std::str::from_utf8(name).is_err() {
                NOT_TEXT
            } else if let Some(at) = position(&self.names, name) {
                at as u32
            } else if self.names.len() < NAMES_KEPT {
                text_of(py, &mut self.names, name) as u32
            } else {
                (NAMES_KEPT + text_of(py, &mut extra, name)) as u32
            };
        }
        // extra names exist only once the kept ones are full: their indexes follow them
        let mut names: Vec<Py<PyString>> = self
            .names
            .iter()
            .map(|(_, text)| text.clone_ref(py))
            .collect();
        names.extend(extra.into_iter().map(|(_, text)| text));
        let records = std::mem::take(&mut copies.records)
            .into_iter()
            .map(Some)
            .collect();
        let fields = Arc::new(std::mem::take(&mut copies.fields));
        Ok(DirectBatch {
            topics,
            names,
            copies,
            records,
            fields,
        })
    }

    /// Lets go of the queue (before the consumer closes); records forwarded to it since
    /// are dropped with it.
    fn close(&self) {
        let mut held = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(rd), true) = (rdkafka(), held.queue != 0) {
            // SAFETY: our own queue reference, destroyed once.
            unsafe { (rd.queue_destroy)(held.queue as *mut c_void) };
        }
        held.queue = 0;
    }
}

/// Where `kept` holds the Python string of `bytes`.
fn position(kept: &[(Box<[u8]>, Py<PyString>)], bytes: &[u8]) -> Option<usize> {
    kept.iter().position(|(known, _)| **known == *bytes)
}

/// The index in `kept` of the Python string of `bytes` (UTF-8, checked by the caller),
/// added there if it is not yet.
fn text_of(py: Python<'_>, kept: &mut Vec<(Box<[u8]>, Py<PyString>)>, bytes: &[u8]) -> usize {
    position(kept, bytes).unwrap_or_else(|| {
        let text = PyString::intern(py, &String::from_utf8_lossy(bytes)).unbind();
        kept.push((bytes.into(), text));
        kept.len() - 1
    })
}

/// About the size of a record's CONSUME event fields, in bytes: room a take gives them.
const FIELDS_SIZE: usize = 96;

/// Consumes up to `max` messages from `queue` and copies each out, with its CONSUME event
/// fields where `consume_fields`.
unsafe fn copy_batch(
    rd: &Rdkafka,
    queue: *mut c_void,
    timeout_ms: c_int,
    max: usize,
    consume_fields: bool,
) -> Copies {
    let mut messages: Vec<*mut RdMessage> = vec![std::ptr::null_mut(); max];
    // a batch call waits until it holds `max` or the time is up: wait for the first
    // message alone, then take what else is there without waiting
    let mut n = (rd.consume_batch_queue)(queue, timeout_ms, messages.as_mut_ptr(), 1);
    if n == 1 && max > 1 {
        let more = (rd.consume_batch_queue)(queue, 0, messages.as_mut_ptr().add(1), max - 1);
        n += more.max(0);
    }
    let messages = &messages[..n.max(0) as usize];
    let mut copies = Copies {
        data: Vec::with_capacity(messages.iter().map(|&m| (*m).len + (*m).key_len + 64).sum()),
        headers: Vec::with_capacity(messages.len() * 4),
        records: Vec::with_capacity(messages.len()),
        fields: Vec::with_capacity(if consume_fields {
            messages.len() * FIELDS_SIZE
        } else {
            0
        }),
        ..Copies::default()
    };
    let mut last_rkt: *mut c_void = std::ptr::null_mut();
    for &message in messages {
        let rkt = (*message).rkt;
        let topic = if rkt.is_null() {
            NO_TOPIC
        } else {
            if rkt != last_rkt {
                let name = CStr::from_ptr((rd.topic_name)(rkt)).to_bytes();
                if copies.topics.last().map(|t| t.as_slice()) != Some(name) {
                    copies.topics.push(name.to_vec());
                }
                last_rkt = rkt;
            }
            (copies.topics.len() - 1) as u32
        };
        let mut record = copy_message(rd, message, topic, &mut copies);
        if consume_fields && record.error.is_none() {
            record.fields = consume_fields_of(&record, &mut copies);
        }
        copies.records.push(record);
        (rd.message_destroy)(message);
    }
    copies
}

/// One message's values, copied into the batch's buffers.
unsafe fn copy_message(
    rd: &Rdkafka,
    message: *const RdMessage,
    topic: u32,
    copies: &mut Copies,
) -> Copied {
    let m = &*message;
    let mut kind: c_int = 0;
    let timestamp = (rd.message_timestamp)(message, &mut kind);
    let mut record = Copied {
        topic,
        partition: m.partition,
        offset: m.offset,
        timestamp: (kind, timestamp),
        key: None,
        value: None,
        headers: None,
        error: None,
        fields: None,
    };
    if m.err != 0 {
        let reason = (rd.message_errstr)(message);
        let reason = if reason.is_null() {
            String::new()
        } else {
            CStr::from_ptr(reason).to_string_lossy().into_owned()
        };
        record.error = Some((m.err, reason));
        return record;
    }
    record.key = copies.put(m.key, m.key_len);
    record.value = copies.put(m.payload, m.len);
    let mut headers: *mut c_void = std::ptr::null_mut();
    if (rd.message_headers)(message, &mut headers) == RESP_OK && !headers.is_null() {
        let first = copies.headers.len() as u32;
        let mut index = 0;
        loop {
            let (mut name, mut value, mut size) = (std::ptr::null(), std::ptr::null(), 0usize);
            if (rd.header_get_all)(headers, index, &mut name, &mut value, &mut size) != RESP_OK {
                break;
            }
            index += 1;
            let name = CStr::from_ptr(name).to_bytes();
            let name_span = copies
                .put(name.as_ptr().cast(), name.len())
                .unwrap_or((0, 0));
            let value = copies.put(value, size);
            copies.headers.push(Header {
                name_span,
                name: NOT_TEXT,
                value,
            });
        }
        record.headers = Some((first, copies.headers.len() as u32));
    }
    record
}

/// Writes the CONSUME event fields of `record` (copied, without error) to the batch's
/// `fields`.
fn consume_fields_of(record: &Copied, copies: &mut Copies) -> Option<crate::received::Span> {
    // the fields are written while the copies are read: out of them meanwhile
    let mut fields = std::mem::take(&mut copies.fields);
    let written = copies
        .topics
        .get(record.topic as usize)
        .and_then(|physical| {
            let headers = copies.headers_of(record).unwrap_or_default();
            let record = Record {
                physical,
                partition: record.partition,
                offset: record.offset,
                store_timestamp: record.timestamp.1,
                headers: headers.iter().map(|header| {
                    let value = header.value.map(|span| copies.bytes(span));
                    (copies.bytes(header.name_span), value)
                }),
            };
            write_fields(&mut fields, record)
        });
    copies.fields = fields;
    written
}
