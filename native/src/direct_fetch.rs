//! A push consumer's records read from librdkafka itself rather than through
//! confluent-kafka's `consume()`, which builds for each record a `Message`, its topic's
//! text, and a list of header tuples with a name and a value object each: objects the
//! intake reads once and frees. Here each record becomes one [`DirectRecord`] holding its
//! values as Rust data, and the intake's decode (`plain_decode`) builds the listener's
//! `MessageExt` straight from them.
//!
//! The consumer stays confluent-kafka's, which keeps the group, the rebalance callbacks,
//! commits, pauses and seeks. Two documented librdkafka mechanisms connect the two:
//! - this library is also a librdkafka plugin (`plugin.library.paths`): its `conf_init`
//!   adds interceptors that accept the property [`TOKEN_PROPERTY`] and, when the client is
//!   created (`on_new`), note its handle under that token ([`DirectFetch::new`] finds it);
//! - each partition's fetch queue is forwarded to a queue of our own before the partition
//!   is assigned (`rd_kafka_queue_forward`; librdkafka keeps a forward the application
//!   set across fetch starts, see `rd_kafka_toppar_op_fetch_start`), so its records arrive
//!   there while rebalance events and errors of the group stay on the consumer's queue,
//!   which confluent-kafka serves.
//!
//! librdkafka is the one confluent-kafka loaded (found among the process's shared objects
//! by name); where it is not found, or the plugin was not loaded, the consumer reads
//! through `consume()` as before. Records are copied out of librdkafka's messages without
//! the GIL, and the messages destroyed, before any Python object is built.

use pyo3::exceptions::{PyRuntimeError, PyUnicodeDecodeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// The client property that names a client to [`DirectFetch::new`].
pub const TOKEN_PROPERTY: &str = "rmqcompat.fetch.token";
const INTERCEPTOR: &CStr = c"rmqcompat.direct_fetch";

const RESP_OK: c_int = 0;
const RESP_FAIL: c_int = -196; // RD_KAFKA_RESP_ERR__FAIL
const CONF_UNKNOWN: c_int = -2;
const CONF_OK: c_int = 0;

/// `rd_kafka_message_t`, librdkafka's public message struct.
#[repr(C)]
struct RdMessage {
    err: c_int,
    rkt: *mut c_void,
    partition: i32,
    payload: *mut c_void,
    len: usize,
    key: *mut c_void,
    key_len: usize,
    offset: i64,
    _private: *mut c_void,
}

type OnConfSet = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    *const c_char,
    *mut c_char,
    usize,
    *mut c_void,
) -> c_int;
type OnNew = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, *mut c_char, usize) -> c_int;
type OnOpaque = unsafe extern "C" fn(*mut c_void) -> c_int;
type OnDestroy = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

/// The librdkafka functions used here.
struct Rdkafka {
    add_on_conf_set: unsafe extern "C" fn(*mut c_void, *const c_char, OnConfSet, *mut c_void) -> c_int,
    add_on_new: unsafe extern "C" fn(*mut c_void, *const c_char, OnNew, *mut c_void) -> c_int,
    add_on_conf_destroy: unsafe extern "C" fn(*mut c_void, *const c_char, OnOpaque, *mut c_void) -> c_int,
    add_on_destroy: unsafe extern "C" fn(*mut c_void, *const c_char, OnDestroy, *mut c_void) -> c_int,
    queue_new: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    queue_destroy: unsafe extern "C" fn(*mut c_void),
    queue_get_partition: unsafe extern "C" fn(*mut c_void, *const c_char, i32) -> *mut c_void,
    queue_forward: unsafe extern "C" fn(*mut c_void, *mut c_void),
    consume_batch_queue: unsafe extern "C" fn(*mut c_void, c_int, *mut *mut RdMessage, usize) -> isize,
    topic_name: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    message_headers: unsafe extern "C" fn(*const RdMessage, *mut *mut c_void) -> c_int,
    header_get_all: unsafe extern "C" fn(
        *const c_void,
        usize,
        *mut *const c_char,
        *mut *const c_void,
        *mut usize,
    ) -> c_int,
    message_timestamp: unsafe extern "C" fn(*const RdMessage, *mut c_int) -> i64,
    message_errstr: unsafe extern "C" fn(*const RdMessage) -> *const c_char,
    message_destroy: unsafe extern "C" fn(*mut RdMessage),
}

extern "C" {
    fn dlopen(path: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dl_iterate_phdr(
        callback: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
        data: *mut c_void,
    ) -> c_int;
}

/// The start of glibc's `struct dl_phdr_info`: what `dl_iterate_phdr` names each object by.
#[repr(C)]
struct DlPhdrInfo {
    addr: usize,
    name: *const c_char,
}

const RTLD_NOW: c_int = 2;
const RTLD_NOLOAD: c_int = 4;

unsafe extern "C" fn find_rdkafka(info: *mut DlPhdrInfo, _size: usize, data: *mut c_void) -> c_int {
    let name = (*info).name;
    if name.is_null() {
        return 0;
    }
    let path = CStr::from_ptr(name);
    let file = path.to_bytes().rsplit(|b| *b == b'/').next().unwrap_or_default();
    if file.starts_with(b"librdkafka") && file.windows(3).any(|w| w == b".so") {
        *data.cast::<Option<CString>>() = Some(path.to_owned());
        return 1;
    }
    0
}

fn load() -> Option<Rdkafka> {
    let mut found: Option<CString> = None;
    // SAFETY: the callback writes the `Option<CString>` `data` points at, on this thread.
    unsafe { dl_iterate_phdr(find_rdkafka, (&mut found as *mut Option<CString>).cast()) };
    let path = found?;
    // SAFETY: only a library already loaded is opened (RTLD_NOLOAD), and each symbol is
    // taken as the function librdkafka's public header declares under that name.
    unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_NOW | RTLD_NOLOAD);
        if handle.is_null() {
            return None;
        }
        macro_rules! symbol {
            ($name:literal) => {{
                let pointer = dlsym(handle, $name.as_ptr());
                if pointer.is_null() {
                    return None;
                }
                std::mem::transmute_copy(&pointer)
            }};
        }
        Some(Rdkafka {
            add_on_conf_set: symbol!(c"rd_kafka_conf_interceptor_add_on_conf_set"),
            add_on_new: symbol!(c"rd_kafka_conf_interceptor_add_on_new"),
            add_on_conf_destroy: symbol!(c"rd_kafka_conf_interceptor_add_on_conf_destroy"),
            add_on_destroy: symbol!(c"rd_kafka_interceptor_add_on_destroy"),
            queue_new: symbol!(c"rd_kafka_queue_new"),
            queue_destroy: symbol!(c"rd_kafka_queue_destroy"),
            queue_get_partition: symbol!(c"rd_kafka_queue_get_partition"),
            queue_forward: symbol!(c"rd_kafka_queue_forward"),
            consume_batch_queue: symbol!(c"rd_kafka_consume_batch_queue"),
            topic_name: symbol!(c"rd_kafka_topic_name"),
            message_headers: symbol!(c"rd_kafka_message_headers"),
            header_get_all: symbol!(c"rd_kafka_header_get_all"),
            message_timestamp: symbol!(c"rd_kafka_message_timestamp"),
            message_errstr: symbol!(c"rd_kafka_message_errstr"),
            message_destroy: symbol!(c"rd_kafka_message_destroy"),
        })
    }
}

fn rdkafka() -> Option<&'static Rdkafka> {
    static RDKAFKA: OnceLock<Option<Rdkafka>> = OnceLock::new();
    RDKAFKA.get_or_init(load).as_ref()
}

/// A client's handle and our queue, shared by its [`DirectFetch`] and its interceptors.
struct Client {
    rk: usize,
    queue: usize,
}

/// Token -> the client created with it, until the client is destroyed.
fn clients() -> &'static Mutex<HashMap<String, std::sync::Arc<Mutex<Client>>>> {
    static CLIENTS: OnceLock<Mutex<HashMap<String, std::sync::Arc<Mutex<Client>>>>> =
        OnceLock::new();
    CLIENTS.get_or_init(Default::default)
}

/// The interceptors' state of one client configuration: the token it was given.
struct Slot {
    token: Mutex<Option<String>>,
}

/// librdkafka's plugin entry point (`plugin.library.paths`): adds the interceptors to
/// `conf`. Fails, with a reason in `errstr`, where librdkafka's functions are not found.
///
/// # Safety
/// Called by librdkafka with a configuration, a place for the plugin's opaque value and
/// an error buffer of `errstr_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn conf_init(
    conf: *mut c_void,
    _plug_opaque: *mut *mut c_void,
    errstr: *mut c_char,
    errstr_size: usize,
) -> c_int {
    let Some(rd) = rdkafka() else {
        write_error(errstr, errstr_size, "rmqcompat: librdkafka's functions not found");
        return RESP_FAIL;
    };
    let slot = Box::into_raw(Box::new(Slot {
        token: Mutex::new(None),
    }))
    .cast::<c_void>();
    let name = INTERCEPTOR.as_ptr();
    if (rd.add_on_conf_destroy)(conf, name, on_conf_destroy, slot) != RESP_OK {
        drop(Box::from_raw(slot.cast::<Slot>())); // added once already: that one serves
        return RESP_OK;
    }
    (rd.add_on_conf_set)(conf, name, on_conf_set, slot);
    (rd.add_on_new)(conf, name, on_new, slot);
    RESP_OK
}

unsafe fn write_error(errstr: *mut c_char, size: usize, text: &str) {
    if errstr.is_null() || size == 0 {
        return;
    }
    let n = text.len().min(size - 1);
    std::ptr::copy_nonoverlapping(text.as_ptr(), errstr.cast::<u8>(), n);
    *errstr.add(n) = 0;
}

unsafe extern "C" fn on_conf_set(
    _conf: *mut c_void,
    name: *const c_char,
    value: *const c_char,
    _errstr: *mut c_char,
    _errstr_size: usize,
    opaque: *mut c_void,
) -> c_int {
    if CStr::from_ptr(name).to_bytes() != TOKEN_PROPERTY.as_bytes() {
        return CONF_UNKNOWN;
    }
    let slot = &*opaque.cast::<Slot>();
    let token = (!value.is_null()).then(|| CStr::from_ptr(value).to_string_lossy().into_owned());
    *slot.token.lock().unwrap_or_else(|e| e.into_inner()) = token;
    CONF_OK
}

unsafe extern "C" fn on_new(
    rk: *mut c_void,
    _conf: *const c_void,
    opaque: *mut c_void,
    _errstr: *mut c_char,
    _errstr_size: usize,
) -> c_int {
    let slot = &*opaque.cast::<Slot>();
    let token = slot.token.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let (Some(token), Some(rd)) = (token, rdkafka()) {
        let client = std::sync::Arc::new(Mutex::new(Client {
            rk: rk as usize,
            queue: 0,
        }));
        let mut map = clients().lock().unwrap_or_else(|e| e.into_inner());
        map.insert(token.clone(), client);
        drop(map);
        let boxed = Box::into_raw(Box::new(token)).cast::<c_void>();
        (rd.add_on_destroy)(rk, INTERCEPTOR.as_ptr(), on_destroy, boxed);
    }
    RESP_OK
}

unsafe extern "C" fn on_conf_destroy(opaque: *mut c_void) -> c_int {
    drop(Box::from_raw(opaque.cast::<Slot>()));
    RESP_OK
}

/// The client is being destroyed: our queue goes first, and its fetch ends.
unsafe extern "C" fn on_destroy(_rk: *mut c_void, opaque: *mut c_void) -> c_int {
    let token = Box::from_raw(opaque.cast::<String>());
    let client = clients()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(token.as_str());
    if let (Some(client), Some(rd)) = (client, rdkafka()) {
        let mut client = client.lock().unwrap_or_else(|e| e.into_inner());
        if client.queue != 0 {
            (rd.queue_destroy)(client.queue as *mut c_void);
        }
        client.queue = 0;
        client.rk = 0;
    }
    RESP_OK
}

/// A record copied out of librdkafka's message, without the GIL.
struct Copied {
    topic: usize, // index into the batch's topics
    partition: i32,
    offset: i64,
    timestamp: (c_int, i64),
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Option<Vec<(Vec<u8>, Option<Vec<u8>>)>>,
    error: Option<(c_int, String)>,
}

/// One consumed record, with confluent-kafka `Message`'s accessors.
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
            Ok::<_, PyErr>(py.import("confluent_kafka")?.getattr("KafkaError")?.unbind())
        })?;
        Ok(Some(class.bind(py).call1((*code, reason.as_str()))?.unbind()))
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
            list.append(PyTuple::new(py, [name.bind(py).clone().into_any(), value.into_pyobject(py)?.into_any()])?)?;
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

    /// The record's timestamp in milliseconds, `timestamp()[1]`.
    pub fn timestamp_ms(&self) -> i64 {
        self.timestamp.1
    }

    /// The headers as RocketMQ properties, or None where `decode_headers` of its
    /// `headers()` would give None (a name not UTF-8, a value None or not UTF-8, a repeated
    /// name): the same result without building the list.
    pub fn properties<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let properties = PyDict::new(py);
        let Some(headers) = &self.headers else {
            return Ok(Some(properties));
        };
        for (name, value) in headers {
            let (Some(name), Some(value)) = (name, value) else {
                return Ok(None);
            };
            let text = match PyString::from_bytes(py, value) {
                Ok(text) => text,
                Err(err) if err.is_instance_of::<PyUnicodeDecodeError>(py) => return Ok(None),
                Err(err) => return Err(err),
            };
            let before = properties.len();
            properties.set_item(name.bind(py), text)?;
            if properties.len() == before {
                return Ok(None);
            }
        }
        Ok(Some(properties))
    }
}

/// Header names and topics seen so far, each one Python string (at most this many).
const NAMES_KEPT: usize = 4096;

/// The records of one client's assigned partitions, read from its own queue.
#[pyclass(module = "rmqcompat._core", name = "DirectFetch")]
pub struct DirectFetch {
    client: std::sync::Arc<Mutex<Client>>,
    names: HashMap<Vec<u8>, Py<PyString>>,
    topics: HashMap<Vec<u8>, Py<PyString>>,
}

#[pymethods]
impl DirectFetch {
    /// The fetch of the client created with `token` (its configuration named this library
    /// in `plugin.library.paths` and gave [`TOKEN_PROPERTY`]), or None: no such client.
    #[staticmethod]
    fn of(token: &str) -> PyResult<Option<Self>> {
        let Some(rd) = rdkafka() else {
            return Ok(None);
        };
        let Some(client) = clients()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned()
        else {
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
            names: HashMap::new(),
            topics: HashMap::new(),
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
            let source = (rd.queue_get_partition)(held.rk as *mut c_void, topic.as_ptr(), partition);
            if source.is_null() {
                return Err(PyRuntimeError::new_err("no queue for that partition"));
            }
            (rd.queue_forward)(source, held.queue as *mut c_void);
            (rd.queue_destroy)(source);
        }
        Ok(())
    }

    /// Up to `max` records (or error events), waiting at most `timeout_s` for the first.
    fn take<'py>(&mut self, py: Python<'py>, max: usize, timeout_s: f64) -> PyResult<Bound<'py, PyList>> {
        let Some(rd) = rdkafka() else {
            return Ok(PyList::empty(py));
        };
        let client = self.client.clone();
        let timeout_ms = (timeout_s * 1000.0).clamp(0.0, c_int::MAX as f64) as c_int;
        let (topics, copied) = py.detach(move || {
            let held = client.lock().unwrap_or_else(|e| e.into_inner());
            if held.queue == 0 {
                return (Vec::new(), Vec::new());
            }
            // SAFETY: our queue on a live client (its destroy waits for this lock); each
            // message is copied and destroyed before the lock is let go.
            unsafe { copy_batch(rd, held.queue as *mut c_void, timeout_ms, max.max(1)) }
        });
        let topics: Vec<Py<PyString>> = topics
            .into_iter()
            .map(|name| cached(py, &mut self.topics, name))
            .collect();
        let out = PyList::empty(py);
        for record in copied {
            let headers = record.headers.map(|headers| {
                headers
                    .into_iter()
                    .map(|(name, value)| {
                        let name = std::str::from_utf8(&name).is_ok().then(|| cached(py, &mut self.names, name));
                        (name, value)
                    })
                    .collect()
            });
            let direct = DirectRecord {
                topic: (record.topic != usize::MAX).then(|| topics[record.topic].clone_ref(py)),
                partition: record.partition,
                offset: record.offset,
                timestamp: record.timestamp,
                key: record.key.map(|k| PyBytes::new(py, &k).unbind()),
                value: record.value.map(|v| PyBytes::new(py, &v).unbind()),
                headers,
                error: record.error,
            };
            out.append(Bound::new(py, direct)?)?;
        }
        Ok(out)
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

/// One Python string per distinct text (UTF-8 checked by the caller).
fn cached(py: Python<'_>, cache: &mut HashMap<Vec<u8>, Py<PyString>>, bytes: Vec<u8>) -> Py<PyString> {
    if let Some(found) = cache.get(&bytes) {
        return found.clone_ref(py);
    }
    let text = PyString::intern(py, std::str::from_utf8(&bytes).unwrap_or_default()).unbind();
    if cache.len() < NAMES_KEPT {
        cache.insert(bytes, text.clone_ref(py));
    }
    text
}

/// Consumes up to `max` messages from `queue` and copies each out; topics by index.
unsafe fn copy_batch(
    rd: &Rdkafka,
    queue: *mut c_void,
    timeout_ms: c_int,
    max: usize,
) -> (Vec<Vec<u8>>, Vec<Copied>) {
    let mut messages: Vec<*mut RdMessage> = vec![std::ptr::null_mut(); max];
    // a batch call waits until it holds `max` or the time is up: wait for the first
    // message alone, then take what else is there without waiting
    let mut n = (rd.consume_batch_queue)(queue, timeout_ms, messages.as_mut_ptr(), 1);
    if n == 1 && max > 1 {
        let more = (rd.consume_batch_queue)(queue, 0, messages.as_mut_ptr().add(1), max - 1);
        n += more.max(0);
    }
    let mut topics: Vec<Vec<u8>> = Vec::new();
    let mut last_rkt: *mut c_void = std::ptr::null_mut();
    let mut copied = Vec::with_capacity(n.max(0) as usize);
    for &message in messages.iter().take(n.max(0) as usize) {
        let m = &*message;
        let topic = if m.rkt.is_null() {
            usize::MAX
        } else {
            if m.rkt != last_rkt || topics.is_empty() {
                let name = CStr::from_ptr((rd.topic_name)(m.rkt)).to_bytes();
                if topics.last().map(|t| t.as_slice()) != Some(name) {
                    topics.push(name.to_vec());
                }
                last_rkt = m.rkt;
            }
            topics.len() - 1
        };
        let error = (m.err != 0).then(|| {
            let reason = (rd.message_errstr)(message);
            let reason = if reason.is_null() {
                String::new()
            } else {
                CStr::from_ptr(reason).to_string_lossy().into_owned()
            };
            (m.err, reason)
        });
        let bytes = |pointer: *mut c_void, len: usize| {
            (!pointer.is_null()).then(|| std::slice::from_raw_parts(pointer.cast::<u8>(), len).to_vec())
        };
        let mut kind: c_int = 0;
        let timestamp = (rd.message_timestamp)(message, &mut kind);
        let (key, value, headers) = if error.is_some() {
            (None, None, None)
        } else {
            (bytes(m.key, m.key_len), bytes(m.payload, m.len), copy_headers(rd, message))
        };
        copied.push(Copied {
            topic,
            partition: m.partition,
            offset: m.offset,
            timestamp: (kind, timestamp),
            key,
            value,
            headers,
            error,
        });
        (rd.message_destroy)(message);
    }
    (topics, copied)
}

unsafe fn copy_headers(rd: &Rdkafka, message: *const RdMessage) -> Option<Vec<(Vec<u8>, Option<Vec<u8>>)>> {
    let mut headers: *mut c_void = std::ptr::null_mut();
    if (rd.message_headers)(message, &mut headers) != RESP_OK || headers.is_null() {
        return None;
    }
    let mut out = Vec::new();
    let mut index = 0;
    loop {
        let (mut name, mut value, mut size) = (std::ptr::null(), std::ptr::null(), 0usize);
        if (rd.header_get_all)(headers, index, &mut name, &mut value, &mut size) != RESP_OK {
            break;
        }
        index += 1;
        let value = (!value.is_null()).then(|| std::slice::from_raw_parts(value.cast::<u8>(), size).to_vec());
        out.push((CStr::from_ptr(name).to_bytes().to_vec(), value));
    }
    Some(out)
}

/// Whether this process can read records this way: librdkafka's functions were found.
#[pyfunction]
pub fn direct_fetch_available() -> bool {
    rdkafka().is_some()
}
